import { base58 } from '../chain/index.js';
import { findProgramAddress } from '../chain/index.js';
import type { Keypair } from '../chain/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import { seededKeypair } from './actors.js';
import type { AccountRecord } from './chain-backend.js';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, RENT_EPOCH_EXEMPT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, rentExemptMinimum } from './known-accounts.js';
import type { SimToken } from './market-view.js';
import type { SimPoolInfo } from './pool-genesis.js';

/**
 * Address Lookup Table accounts of the simulated chain, as routers keep them on mainnet so that a
 * swap compiles to a small v0 transaction whose pool accounts are loaded through tables:
 *
 * - table 0, the shared table: the SPL Token program, every token's mint and the accounts every
 *   flash loan of the lending market names (program, market, its authority, reserves, vaults, the
 *   instructions sysvar);
 * - then pool tables: each pool's swap accounts (pool, vault A, vault B, the CLMM AmmConfig, the
 *   tick or bin arrays), pool after pool in market order, a new table when the next pool's accounts
 *   would not fit in 256.
 *
 * Accounts are in the real bincode layout of the program's `ProgramState::LookupTable` (owner
 * AddressLookupTab1e1111111111111111111111111): 0 u32 state tag 1; 4 deactivation_slot u64
 * (u64::MAX = active); 12 last_extended_slot u64; 20 last_extended_slot_start_index u8; 21
 * authority Option<Pubkey> (tag byte, key at 22..54); 54..56 padding; addresses from 56, 32 bytes
 * each, at most 256. Addresses at or past last_extended_slot_start_index are usable only in slots
 * after last_extended_slot (the runtime checks it). Table addresses are the program's PDAs of
 * [authority, recent_slot as u64 LE], with a seeded authority and recent slot = the table's index.
 */

export const LOOKUP_TABLE_META_SIZE = 56;
export const LOOKUP_TABLE_MAX_ADDRESSES = 256;
const LOOKUP_TABLE_STATE_TAG = 1;
const U64_MAX = (1n << 64n) - 1n;

export interface LookupTableState {
  /** u64::MAX while active. */
  deactivationSlot: bigint;
  lastExtendedSlot: bigint;
  lastExtendedSlotStartIndex: number;
  authority: string | null;
  addresses: readonly string[];
}

/** A lookup table of the simulated chain at genesis. */
export interface SimLookupTable {
  address: string;
  /** The pools whose swap accounts the table holds (none for the shared table). */
  pools: readonly string[];
  /** The table's addresses at genesis. */
  addresses: readonly string[];
}

export interface SimLookupTables {
  /** The authority of every table (it may extend them). */
  authority: Keypair;
  /** Shared table first, then the pool tables. */
  tables: SimLookupTable[];
  accounts: Map<string, AccountRecord>;
}

/** The account bytes of a lookup table in the program's layout. */
export function encodeLookupTable(state: LookupTableState): Uint8Array {
  if (state.addresses.length > LOOKUP_TABLE_MAX_ADDRESSES) {
    throw invalidArgument('state.addresses', state.addresses.length, `a lookup table holds at most ${LOOKUP_TABLE_MAX_ADDRESSES} addresses, got ${state.addresses.length}`);
  }
  if (!Number.isInteger(state.lastExtendedSlotStartIndex) || state.lastExtendedSlotStartIndex < 0 || state.lastExtendedSlotStartIndex > 255) {
    throw invalidArgument('state.lastExtendedSlotStartIndex', state.lastExtendedSlotStartIndex, `last_extended_slot_start_index must be a u8, got ${state.lastExtendedSlotStartIndex}`);
  }
  const data = new Uint8Array(LOOKUP_TABLE_META_SIZE + 32 * state.addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, LOOKUP_TABLE_STATE_TAG, true);
  view.setBigUint64(4, state.deactivationSlot, true);
  view.setBigUint64(12, state.lastExtendedSlot, true);
  data[20] = state.lastExtendedSlotStartIndex;
  if (state.authority !== null) {
    data[21] = 1;
    data.set(base58.decodePubkey(state.authority), 22);
  }
  state.addresses.forEach((a, i) => data.set(base58.decodePubkey(a), LOOKUP_TABLE_META_SIZE + 32 * i));
  return data;
}

/**
 * The state of a lookup table account's bytes, or null when they are not an active-or-deactivated
 * lookup table (wrong tag, size or authority tag).
 */
export function readLookupTable(data: Uint8Array): LookupTableState | null {
  if (data.length < LOOKUP_TABLE_META_SIZE || (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0) return null;
  const count = (data.length - LOOKUP_TABLE_META_SIZE) / 32;
  if (count > LOOKUP_TABLE_MAX_ADDRESSES) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint32(0, true) !== LOOKUP_TABLE_STATE_TAG || data[21]! > 1) return null;
  const addresses: string[] = [];
  for (let i = 0; i < count; i++) addresses.push(base58.encodeAt(data, LOOKUP_TABLE_META_SIZE + 32 * i, 32));
  return {
    deactivationSlot: view.getBigUint64(4, true),
    lastExtendedSlot: view.getBigUint64(12, true),
    lastExtendedSlotStartIndex: data[20]!,
    authority: data[21] === 1 ? base58.encodeAt(data, 22, 32) : null,
    addresses,
  };
}

/** An account record holding `state`, rent-exempt for its size. */
export function lookupTableRecord(state: LookupTableState): AccountRecord {
  const data = encodeLookupTable(state);
  return { lamports: rentExemptMinimum(data.length), owner: ADDRESS_LOOKUP_TABLE_PROGRAM_ID, data, executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
}

/** The address of the table `authority` creates with `recentSlot` (the program's PDA). */
export function lookupTableAddress(authority: string, recentSlot: bigint): string {
  const slot = new Uint8Array(8);
  new DataView(slot.buffer).setBigUint64(0, recentSlot, true);
  return findProgramAddress([base58.decodePubkey(authority), slot], ADDRESS_LOOKUP_TABLE_PROGRAM_ID).address;
}

/** The accounts a swap on `pool` passes besides the trader's: what a pool table holds for it. */
export function poolSwapAccounts(pool: SimPoolInfo): string[] {
  const out = [pool.address, pool.vaultA, pool.vaultB];
  if (pool.ammConfig !== undefined) out.push(pool.ammConfig);
  for (const a of pool.arrays) out.push(a.address);
  // swap_v2 of a Token-2022 mint also passes that program (the mints are in the shared table).
  if (pool.tokenA.programId === TOKEN_2022_PROGRAM_ID || pool.tokenB.programId === TOKEN_2022_PROGRAM_ID) out.push(TOKEN_2022_PROGRAM_ID);
  return out;
}

/** The genesis lookup tables of a market (see the file comment). */
export function createLookupTables(seed: number, tokens: readonly SimToken[], pools: readonly SimPoolInfo[], shared: readonly string[] = []): SimLookupTables {
  const authority = seededKeypair(seed, 'lookup-table-authority');
  const groups: { pools: string[]; addresses: string[] }[] = [{ pools: [], addresses: [TOKEN_PROGRAM_ID, ...tokens.map((t) => t.mint), ...shared] }];
  let current: { pools: string[]; addresses: string[]; seen: Set<string> } | undefined;
  for (const pool of pools) {
    const wanted = poolSwapAccounts(pool);
    const fresh = (seen: Set<string>): string[] => [...new Set(wanted)].filter((a) => !seen.has(a));
    if (current === undefined || current.addresses.length + fresh(current.seen).length > LOOKUP_TABLE_MAX_ADDRESSES) {
      current = { pools: [], addresses: [], seen: new Set() };
      groups.push(current);
    }
    for (const a of fresh(current.seen)) {
      current.seen.add(a);
      current.addresses.push(a);
    }
    current.pools.push(pool.address);
  }
  const accounts = new Map<string, AccountRecord>();
  const tables = groups.map((g, i): SimLookupTable => {
    const address = lookupTableAddress(authority.address, BigInt(i));
    accounts.set(
      address,
      lookupTableRecord({ deactivationSlot: U64_MAX, lastExtendedSlot: 0n, lastExtendedSlotStartIndex: 0, authority: authority.address, addresses: g.addresses }),
    );
    return { address, pools: g.pools, addresses: g.addresses };
  });
  return { authority, tables, accounts };
}

/** deactivation_slot of an active table. */
export const LOOKUP_TABLE_ACTIVE = U64_MAX;

/** Why a table cannot be extended. */
export class LookupTableExtendError extends TpError {
  constructor(
    readonly kind: 'missing' | 'invalid' | 'deactivated' | 'full' | 'addresses',
    readonly table: string,
    message: string,
  ) {
    super(kind === 'missing' ? ErrorCode.NotFound : ErrorCode.AccountInvalid, `lookup table ${table}: ${message}`, { context: kind === 'missing' ? { address: table } : { address: table, kind } });
  }
}

/** What an extension did. */
export interface LookupTableExtension {
  table: string;
  /** The slot the extension counts as made in (last_extended_slot): usable from the next one. */
  slot: bigint;
  /** Index of the first added address. */
  startIndex: number;
  /** The table's length after. */
  length: number;
}

/**
 * The program's ExtendLookupTable on a table's state in slot `slot`: appends `addresses` (at
 * least one, at most 256 in all; duplicates allowed, as the program allows them); when the table
 * was last extended in an earlier slot, last_extended_slot becomes `slot` and
 * last_extended_slot_start_index the old length.
 */
export function extendLookupTableState(table: string, state: LookupTableState, addresses: readonly string[], slot: bigint): LookupTableState {
  if (state.deactivationSlot !== U64_MAX) throw new LookupTableExtendError('deactivated', table, `deactivated at slot ${state.deactivationSlot}`);
  if (addresses.length === 0) throw new LookupTableExtendError('addresses', table, 'no addresses to add');
  const length = state.addresses.length + addresses.length;
  if (length > LOOKUP_TABLE_MAX_ADDRESSES) {
    throw new LookupTableExtendError('full', table, `${state.addresses.length} + ${addresses.length} addresses is over ${LOOKUP_TABLE_MAX_ADDRESSES}`);
  }
  for (const a of addresses) {
    try {
      base58.decodePubkey(a);
    } catch {
      throw new LookupTableExtendError('addresses', table, `${JSON.stringify(a)} is not a base58 public key`);
    }
  }
  const sameSlot = state.lastExtendedSlot === slot;
  return {
    ...state,
    lastExtendedSlot: slot,
    lastExtendedSlotStartIndex: sameSlot ? state.lastExtendedSlotStartIndex : state.addresses.length,
    addresses: [...state.addresses, ...addresses],
  };
}
