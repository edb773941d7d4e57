/**
 * A pool's state as read from the chain (Solana JSON-RPC): the decoded pool account and the swap
 * context its quotes need (tick arrays, bin arrays, the Raydium AmmConfig fee), all read at or
 * after `slot`. The scanner stores it in the pool cache after a transaction touches the pool; the
 * quote service's RPC fallback quotes from it directly. Leaf module: types only.
 */
import type { DecodedMint, DecodedPool, Dex, PoolTransferFees, SwapContext } from '../dex/index.js';
import type { AccountData } from '../rpc/index.js';

export interface LoadedPool {
  address: string;
  dex: Dex;
  /**
   * Decoded pool account (`address` set), ready to quote: a Raydium CLMM pool carries its
   * AmmConfig's fee rate (`feeRate` stays undefined when that account could not be read).
   */
  pool: DecodedPool;
  /**
   * Extra accounts of the swap math; undefined for dexa_amm (an AMM v4 pool carries its vault
   * balances and reserves itself, `pool.vaultAmounts`).
   */
  context: SwapContext | undefined;
  /**
   * `context.slot` of the RPC answer that carried the pool account; for an AMM v4 pool the newest
   * of that and its vaults' slots (its reserves are the vaults').
   */
  slot: bigint;
  /**
   * With an account-stream source (scanner.stateSource geyser): the write version of the newest
   * write the state includes, within `slot` (which is then the newest slot of the pool's accounts'
   * writes). Orders two states of one slot; undefined for a state read over RPC.
   */
  writeVersion?: bigint;
  /** The raw pool account data (for the event's optional `state.rawData`). */
  data: Uint8Array;
  /**
   * Token A and B reserves: for dexa_amm the reserves its swaps use (AMM v4: vault balances less
   * need_take_pnl; spec 02 layout: the account's fields), for concentrated and DLMM pools the
   * balances of their vault token accounts; undefined when unread.
   */
  reserves?: readonly [bigint, bigint];
  /** With the loader's readMints: token A's and B's mint accounts, decoded. */
  mints?: readonly [DecodedMint, DecodedMint];
  /** With readMints and an epoch source: the epoch the load read. */
  epoch?: bigint;
  /**
   * With readMints, when either mint has a Token-2022 TransferFeeConfig: both configs and the
   * epoch, for `quoteSwap(pool, req, context, transferFees)` (amounts the trader sends and gets).
   * Absent: the pool's transfers are free and quoteSwap without it is exact.
   */
  transferFees?: PoolTransferFees;
  /**
   * With the loader's keepAccounts: every account this load read for the pool (the pool account,
   * its tick or bin arrays and AmmConfig, reserve vaults, mints with readMints), as read; null for
   * an account that does not exist. What the market scanner puts in a MarketEvent's state so a
   * replay can load the pool again from these bytes alone.
   */
  accounts?: ReadonlyMap<string, AccountData | null>;
}

/** Why one pool could not be loaded: an answer, not an exception. */
export interface PoolLoadFailure {
  address: string;
  /** 'missing' (no account), 'unknown_owner', 'decode' (bad bytes), 'rpc' (the call failed). */
  reason: 'missing' | 'unknown_owner' | 'decode' | 'rpc';
  message: string;
}

export type PoolLoadResult = { ok: true; value: LoadedPool } | { ok: false; error: PoolLoadFailure };

export interface PoolLoader {
  /**
   * Reads `addresses` (pool accounts) and whatever each one's swap math needs, through batched,
   * coalesced getMultipleAccounts calls, and decodes them. One result per address, in order.
   * When `options.signal` aborts, the load rejects with its reason at once and does no further
   * work (no second round of reads, no decoding); reads already sent finish for their other callers.
   */
  load(addresses: readonly string[], options?: { signal?: AbortSignal }): Promise<PoolLoadResult[]>;
}
