import { base58 } from '../chain/index.js';
import { DEFAULT_PROGRAM_IDS } from '../dex/index.js';
import { addActorAccounts, createActors, systemAccount, type Actors } from './actors.js';
import { createLookupTables, type SimLookupTables } from './address-lookup-tables.js';
import { addLendingAccounts, lendingLookupAddresses, type SimLendingMarket } from './lending-genesis.js';
import type { AccountRecord } from './chain-backend.js';
import {
  ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  BPF_LOADER_2_ID,
  BPF_LOADER_UPGRADEABLE_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  JITO_TIP_ACCOUNTS,
  LAMPORTS_PER_SOL,
  MEMO_PROGRAM_ID,
  NATIVE_LOADER_ID,
  RENT_EPOCH_EXEMPT,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  VOTE_PROGRAM_ID,
} from './known-accounts.js';
import { FAUCET_LAMPORTS, faucetKeypair } from './faucet.js';
import { createMarket, type MarketGenesis, type MarketSettings } from './market.js';
import { findProgramAddress } from '../chain/index.js';
import { seededBytes32 } from './prng.js';
import { addSwapProgramAccounts } from './swap-program-accounts.js';

/**
 * The chain at slot 0: the market (market.ts), the actors (actors.ts), the program accounts
 * (native builtins under the native loader, SPL programs under BPF loader 2, the DEX programs as
 * upgradeable programs pointing at their program data), the Jito tip accounts, the address
 * lookup tables holding the pools' swap accounts (address-lookup-tables.ts), and the faucet
 * (faucet.ts).
 */

export interface Genesis {
  market: MarketGenesis;
  actors: Actors;
  accounts: Map<string, AccountRecord>;
  /** Address lookup tables: the shared one, then the pool tables. */
  lookupTables: SimLookupTables;
  /** sha256-derived genesis hash: the blockhash of slot 0. */
  hash: Uint8Array;
  /** A Kamino Lending market with SOL and USDC reserves, for flash loans. */
  lending: SimLendingMarket;
}

const TIP_ACCOUNT_LAMPORTS = 1n * LAMPORTS_PER_SOL;
const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

export function createGenesis(settings: MarketSettings): Genesis {
  const market = createMarket(settings);
  const accounts = new Map(market.accounts);
  addSwapProgramAccounts(settings.seed, market.pools, accounts);
  const actors = createActors(settings.seed, market.tokens);
  addActorAccounts(actors, market.tokens, accounts);
  for (const tip of JITO_TIP_ACCOUNTS) accounts.set(tip, systemAccount(TIP_ACCOUNT_LAMPORTS));
  const lending = addLendingAccounts(settings.seed, market.tokens, accounts);
  const lookupTables = createLookupTables(settings.seed, market.tokens, market.pools, lendingLookupAddresses(lending));
  for (const [address, record] of lookupTables.accounts) accounts.set(address, record);
  for (const [id, name] of [
    [SYSTEM_PROGRAM_ID, 'system_program'],
    [VOTE_PROGRAM_ID, 'vote_program'],
    [COMPUTE_BUDGET_PROGRAM_ID, 'compute_budget_program'],
    [ADDRESS_LOOKUP_TABLE_PROGRAM_ID, 'address_lookup_table_program'],
  ] as const) {
    accounts.set(id, executable(NATIVE_LOADER_ID, new TextEncoder().encode(name), 1n));
  }
  for (const id of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, MEMO_PROGRAM_ID, ASSOCIATED_TOKEN_PROGRAM_ID]) {
    accounts.set(id, executable(BPF_LOADER_2_ID, elfStub(), LAMPORTS_PER_SOL));
  }
  for (const id of Object.values(DEFAULT_PROGRAM_IDS)) {
    // UpgradeableLoaderState::Program { programdata_address }: tag u32 2, then the address.
    const data = new Uint8Array(36);
    data[0] = 2;
    data.set(base58.decodePubkey(findProgramAddress([base58.decodePubkey(id)], BPF_LOADER_UPGRADEABLE_ID).address), 4);
    accounts.set(id, executable(BPF_LOADER_UPGRADEABLE_ID, data, 1_141_440n));
  }
  // Kamino Lending, an Anchor program like the DEXes: upgradeable, as on mainnet.
  const klend = new Uint8Array(36);
  klend[0] = 2;
  klend.set(base58.decodePubkey(findProgramAddress([base58.decodePubkey(lending.programId)], BPF_LOADER_UPGRADEABLE_ID).address), 4);
  accounts.set(lending.programId, executable(BPF_LOADER_UPGRADEABLE_ID, klend, 1_141_440n));
  accounts.set(faucetKeypair(settings.seed).address, systemAccount(FAUCET_LAMPORTS));
  return { market, actors, accounts, lookupTables, lending, hash: seededBytes32(settings.seed, 'genesis-hash') };
}

function executable(owner: string, data: Uint8Array, lamports: bigint): AccountRecord {
  return { lamports, owner, data, executable: true, rentEpoch: RENT_EPOCH_EXEMPT };
}

/** A program account's bytes: an ELF header's magic, nothing runnable. */
function elfStub(): Uint8Array {
  const data = new Uint8Array(64);
  data.set(ELF_MAGIC, 0);
  return data;
}
