import * as base58 from './base58.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * An address lookup table account (owner ADDRESS_LOOKUP_TABLE_PROGRAM_ID, program-addresses.ts), as v0 transactions
 * load addresses through it (docs/wire-formats.md §2).
 *
 * Layout (bincode): 0 u32 state tag (1 = LookupTable); 4 deactivation_slot u64 (u64::MAX =
 * active); 12 last_extended_slot u64; 20 last_extended_slot_start_index u8; 21 authority Option
 * (tag byte, key at 22..54); addresses from 56, 32 bytes each, at most 256.
 */
export const LOOKUP_TABLE_META_SIZE = 56;
export const LOOKUP_TABLE_MAX_ADDRESSES = 256;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

export type LookupTableErrorKind =
  /** No account at the table's address. */
  | 'missing'
  /** Not a lookup table: wrong owner, state tag, size or authority tag. */
  | 'invalid'
  /** deactivation_slot is set. */
  | 'deactivated'
  /** An index past the table's end, after a refetch. */
  | 'index';

export class LookupTableError extends TpError<typeof ErrorCode.AccountInvalid> {
  constructor(
    readonly kind: LookupTableErrorKind,
    readonly table: string,
    message: string,
  ) {
    super(ErrorCode.AccountInvalid, `lookup table ${table}: ${message}`, { context: { address: table, kind } });
  }
}

export interface LookupTable {
  address: string;
  deactivationSlot: bigint;
  lastExtendedSlot: bigint;
  lastExtendedSlotStartIndex: number;
  authority: string | null;
  addresses: string[];
  /** context slot of the fetch that produced it. */
  fetchedSlot: bigint;
}

/** Decodes a lookup table account's data; throws LookupTableError('invalid' | 'deactivated'). */
export function decodeLookupTable(table: string, data: Uint8Array, fetchedSlot = 0n): LookupTable {
  if (data.length < LOOKUP_TABLE_META_SIZE) throw new LookupTableError('invalid', table, `${data.length} bytes, under the 56-byte header`);
  const body = data.length - LOOKUP_TABLE_META_SIZE;
  if (body % 32 !== 0) throw new LookupTableError('invalid', table, `address area of ${body} bytes is not a multiple of 32`);
  const count = body / 32;
  if (count > LOOKUP_TABLE_MAX_ADDRESSES) throw new LookupTableError('invalid', table, `${count} addresses, over 256`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const tag = view.getUint32(0, true);
  if (tag !== 1) throw new LookupTableError('invalid', table, `state tag ${tag}, not 1 (LookupTable)`);
  const deactivationSlot = view.getBigUint64(4, true);
  if (deactivationSlot !== U64_MAX) throw new LookupTableError('deactivated', table, `deactivated at slot ${deactivationSlot}`);
  const lastExtendedSlot = view.getBigUint64(12, true);
  const lastExtendedSlotStartIndex = data[20]!;
  const authorityTag = data[21]!;
  if (authorityTag > 1) throw new LookupTableError('invalid', table, `authority option tag ${authorityTag}`);
  const authority = authorityTag === 1 ? base58.encodeAt(data, 22, 32) : null;
  const addresses = new Array<string>(count);
  for (let i = 0; i < count; i++) addresses[i] = base58.encodeAt(data, LOOKUP_TABLE_META_SIZE + i * 32, 32);
  return { address: table, deactivationSlot, lastExtendedSlot, lastExtendedSlotStartIndex, authority, addresses, fetchedSlot };
}

