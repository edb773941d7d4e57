/**
 * Addresses and constants of the real network that the simulated chain reuses (a leaf of engine/sim).
 * Sources: docs/wire-formats.md §0, §3, §4.5, §8; solana-labs/solana sdk (rent, fees, loaders).
 */

export {
  ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  JITO_TIP_ACCOUNTS,
  MEMO_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  USDC_MINT,
  WSOL_MINT,
} from '../chain/index.js';
export const VOTE_PROGRAM_ID = 'Vote111111111111111111111111111111111111111';

/** Owners of program accounts. */
export const NATIVE_LOADER_ID = 'NativeLoader1111111111111111111111111111111';
export const BPF_LOADER_2_ID = 'BPFLoader2111111111111111111111111111111111';
export const BPF_LOADER_UPGRADEABLE_ID = 'BPFLoaderUpgradeab1e11111111111111111111111';

/** Orca's mainnet WhirlpoolsConfig, which every simulated Whirlpool points at. */
export const WHIRLPOOLS_CONFIG = '2LecshUwdy9xi7meFgHtFJQNSKk4KdTrcpvaB56dP2NQ';


export const LAMPORTS_PER_SOL = 1_000_000_000n;
/** Fee per signature (`DEFAULT_TARGET_LAMPORTS_PER_SIGNATURE / 2`). */
export const LAMPORTS_PER_SIGNATURE = 5000n;

/** `rentEpoch` of rent-exempt accounts as nodes report it: u64::MAX. */
export const RENT_EPOCH_EXEMPT = (1n << 64n) - 1n;
/** Rent: 3480 lamports per byte-year, exempt at two years, plus 128 bytes of account overhead. */
const RENT_LAMPORTS_PER_BYTE = 6960n;
const ACCOUNT_STORAGE_OVERHEAD = 128n;

/** The rent-exempt minimum balance of an account holding `dataLength` bytes. */
export function rentExemptMinimum(dataLength: number): bigint {
  return (ACCOUNT_STORAGE_OVERHEAD + BigInt(dataLength)) * RENT_LAMPORTS_PER_BYTE;
}

/** Compute units: the default limit per instruction and the cap per transaction. */
export const DEFAULT_COMPUTE_UNITS_PER_INSTRUCTION = 200_000;
export const MAX_COMPUTE_UNITS_PER_TRANSACTION = 1_400_000;

/** Slots per epoch on mainnet (`DEFAULT_SLOTS_PER_EPOCH`), without warmup. */
export const DEFAULT_SLOTS_PER_EPOCH = 432_000;

/** A blockhash stays usable for this many blocks after its own (`MAX_PROCESSING_AGE`). */
export const MAX_PROCESSING_AGE = 150;
/** Slots the status cache keeps signatures for (`MAX_RECENT_BLOCKHASHES`). */
export const STATUS_CACHE_SLOTS = 300;
/** Slots between a processed slot and its root in the simulator (confirmed trails by 1). */
export const FINALIZATION_DEPTH = 32;
/** Ticks per slot (`DEFAULT_TICKS_PER_SLOT`) and hashes per tick (`DEFAULT_HASHES_PER_TICK`). */
export const TICKS_PER_SLOT = 64;
export const HASHES_PER_TICK = 12_500;
