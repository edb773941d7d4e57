/**
 * The accounts a pool's quotes need besides the pool account, derived as clients derive them
 * (docs/wire-formats.md §0, §4), and the SwapContext assembled from them once read:
 *
 * - dexc_whirlpool: tick arrays `["tick_array", pool, start as decimal string]`, the array of the
 *   current tick and `arraysEachSide` on each side (swaps walk consecutive arrays);
 * - dexa_clmm: tick arrays `["tick_array", pool, start as i32 big-endian]`, only those the pool's
 *   tick_array_bitmap marks initialized: the current one and the next `arraysEachSide` each way;
 *   plus the AmmConfig (`pool.ammConfig`), which holds the trade fee;
 * - dexb_dlmm: bin arrays `["bin_array", pool, index as i64 little-endian]`, those the
 *   bin_array_bitmap marks, the active one and the next `arraysEachSide` each way;
 * - dexa_amm: Raydium AMM v4 AmmInfo: its two vault token accounts (the reserves are their balances
 *   less need_take_pnl); spec 02's simplified layout: none (the reserves live in the pool account).
 *
 * Outside the ±512-array bitmaps (the extension accounts are not decoded) consecutive arrays are
 * taken instead. An array that does not exist is simply absent from the context: the swap math
 * refuses with insufficient_liquidity_data once a swap would run past the data it was given.
 */
import { base58 } from '../chain/index.js';
import { findProgramAddress } from '../chain/index.js';
import { invalidArgument } from '../errors.js';
import { isAmmInfoPool, withAmmVaultAmounts } from './amm/amm-info.js';
import { withAmmConfig } from './clmm/amm-config.js';
import { CLMM_TICK_ARRAY_SIZE } from './clmm/tick-array.js';
import { MAX_TICK, MIN_TICK } from './concentrated/tick-math.js';
import { MAX_BITMAP_ARRAY_INDEX, MIN_BITMAP_ARRAY_INDEX, nextBinArrayWithLiquidity } from './dlmm/bin-array-bitmap.js';
import { MAX_BIN_ARRAY_INDEX, MIN_BIN_ARRAY_INDEX, binArrayIndexOf } from './dlmm/bin-array.js';
import type { DecodedAccount, DecoderRegistry } from './registry.js';
import { readPubkey } from './account-bytes.js';
import { tokenAccountAmount } from './token-account.js';
import { Dex, type AmmPool, type BinArray, type ConcentratedPool, type DecodedPool, type SwapContext, type TickArray } from './types.js';
import { WHIRLPOOL_TICK_ARRAY_SIZE } from './whirlpool/tick-array.js';

/** Tick or bin arrays read on each side of the current one, by default. */
export const DEFAULT_ARRAYS_EACH_SIDE = 3;

export interface PoolAccountsOptions {
  /** Arrays to read on each side of the current one (0..64). Default 3. */
  arraysEachSide?: number;
}

// ---- program derived addresses

/** Whirlpool tick array: `["tick_array", whirlpool, start_tick_index.to_string()]`. */
export function whirlpoolTickArrayAddress(programId: string, pool: string, startTickIndex: number): string {
  return findProgramAddress(['tick_array', base58.decodePubkey(pool), String(startTickIndex)], programId).address;
}

/** Raydium CLMM tick array: `["tick_array", pool_state, start_tick_index.to_be_bytes()]` (i32). */
export function clmmTickArrayAddress(programId: string, pool: string, startTickIndex: number): string {
  const start = new Uint8Array(4);
  new DataView(start.buffer).setInt32(0, startTickIndex, false);
  return findProgramAddress(['tick_array', base58.decodePubkey(pool), start], programId).address;
}

/** Raydium CLMM AmmConfig of fee tier `index`: `["amm_config", index.to_be_bytes()]` (u16). */
export function clmmAmmConfigAddress(programId: string, index: number): { address: string; bump: number } {
  return findProgramAddress(['amm_config', new Uint8Array([(index >> 8) & 0xff, index & 0xff])], programId);
}

/** Meteora DLMM bin array: `["bin_array", lb_pair, index.to_le_bytes()]` (i64). */
export function dlmmBinArrayAddress(programId: string, pool: string, index: number): string {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigInt64(0, BigInt(index), true);
  return findProgramAddress(['bin_array', base58.decodePubkey(pool), bytes], programId).address;
}

// ---- which arrays

/** Ticks per tick array of a CL protocol. */
export function ticksPerArray(dex: ConcentratedPool['dex']): number {
  return dex === Dex.Whirlpool ? WHIRLPOOL_TICK_ARRAY_SIZE : CLMM_TICK_ARRAY_SIZE;
}

/**
 * The key of the array holding the pool's current price: the start tick of the tick array (CL
 * pools), the bin array index (DLMM); undefined for the AMM.
 */
export function currentArrayKey(pool: DecodedPool): number | undefined {
  switch (pool.dex) {
    case Dex.Amm:
      return undefined;
    case Dex.Dlmm:
      return binArrayIndexOf(pool.activeId);
    default: {
      const span = pool.tickSpacing * ticksPerArray(pool.dex);
      return Math.floor(pool.tick / span) * span;
    }
  }
}

/** The bitmap that decides which arrays exist (Raydium CLMM, DLMM); undefined for the others. */
export function arrayBitmapOf(pool: DecodedPool): readonly bigint[] | undefined {
  if (pool.dex === Dex.Dlmm) return pool.binArrayBitmap;
  if (pool.dex === Dex.Clmm) return pool.tickArrayBitmap;
  return undefined;
}

/**
 * Appends to `out` the keys (tick array start ticks, or bin array indexes), ascending, of the
 * arrays to read for `pool`: see the module comment. Empty for the AMM.
 */
export function swapArrayKeys(pool: DecodedPool, options: PoolAccountsOptions = {}, out: number[] = []): number[] {
  const each = arraysEachSide(options);
  if (pool.dex === Dex.Amm) return out;
  if (pool.dex === Dex.Dlmm) {
    const current = binArrayIndexOf(pool.activeId);
    const bitmap = pool.binArrayBitmap;
    if (bitmap.length > 0 && current >= MIN_BITMAP_ARRAY_INDEX && current <= MAX_BITMAP_ARRAY_INDEX) markedAround(bitmap, current, each, 1, out);
    else consecutive(current, each, MIN_BIN_ARRAY_INDEX, MAX_BIN_ARRAY_INDEX, 1, out);
    return out;
  }
  const span = pool.tickSpacing * ticksPerArray(pool.dex);
  const current = Math.floor(pool.tick / span);
  const bitmap = pool.dex === Dex.Clmm ? pool.tickArrayBitmap : undefined;
  if (bitmap !== undefined && bitmap.length > 0 && current >= MIN_BITMAP_ARRAY_INDEX && current <= MAX_BITMAP_ARRAY_INDEX) {
    markedAround(bitmap, current, each, span, out);
  } else {
    consecutive(current, each, Math.floor(MIN_TICK / span), Math.floor(MAX_TICK / span), span, out);
  }
  return out;
}

/**
 * Appends to `out` the keys, ascending and distinct, of the arrays to hold ahead of `pool`'s price
 * (an account stream follows them before a swap needs them): the arrays swapArrayKeys picks with
 * `arraysEachSide + arraysAhead` each side, i.e. every array the read window of `arraysEachSide`
 * takes after the price moved by up to `arraysAhead` arrays either way; and for the bitmap
 * protocols (Raydium CLMM, DLMM) every array within `arraysAhead` of the current one, marked or
 * not, so an array created there (its bitmap bit set) is followed before the pool reads it. Empty
 * for the AMM. At most 2 (arraysEachSide + arraysAhead) + 1 keys, plus 2 arraysAhead + 1 for the
 * bitmap protocols.
 */
export function lookaheadArrayKeys(pool: DecodedPool, arraysAhead: number, options: PoolAccountsOptions = {}, out: number[] = []): number[] {
  if (pool.dex === Dex.Amm) return out;
  const each = arraysEachSide(options);
  if (!Number.isInteger(arraysAhead) || arraysAhead < 0 || each + arraysAhead > 64) {
    throw invalidArgument('arraysAhead', arraysAhead, `arraysAhead must be 0..${64 - each}, got ${arraysAhead}`);
  }
  const first = out.length;
  swapArrayKeys(pool, { arraysEachSide: each + arraysAhead }, out);
  if (pool.dex === Dex.Whirlpool) return out;
  if (pool.dex === Dex.Dlmm) consecutive(binArrayIndexOf(pool.activeId), arraysAhead, MIN_BIN_ARRAY_INDEX, MAX_BIN_ARRAY_INDEX, 1, out);
  else {
    const span = pool.tickSpacing * ticksPerArray(pool.dex);
    consecutive(Math.floor(pool.tick / span), arraysAhead, Math.floor(MIN_TICK / span), Math.floor(MAX_TICK / span), span, out);
  }
  const keys = [...new Set(out.splice(first))].sort((a, b) => a - b);
  for (const key of keys) out.push(key);
  return out;
}

/** The address of the array `key` of `pool` (not the AMM), owned by `programId`. */
export function swapArrayAddress(pool: DecodedPool, programId: string, key: number): string {
  const address = poolAddressOf(pool);
  switch (pool.dex) {
    case Dex.Whirlpool:
      return whirlpoolTickArrayAddress(programId, address, key);
    case Dex.Clmm:
      return clmmTickArrayAddress(programId, address, key);
    case Dex.Dlmm:
      return dlmmBinArrayAddress(programId, address, key);
    default:
      throw invalidArgument('pool.dex', pool.dex, `${pool.dex} pools have no swap arrays`);
  }
}

/**
 * Every account `pool`'s quotes need besides the pool account, appended to `out`: its arrays
 * (ascending), then the Raydium AmmConfig; for an AMM v4 AmmInfo its two vaults. Derives each
 * address (a few sha256 and curve checks): callers that reload a pool often keep the addresses by key.
 */
export function swapAccountAddresses(pool: DecodedPool, programId: string, options: PoolAccountsOptions = {}, out: string[] = []): string[] {
  if (pool.dex === Dex.Amm) {
    const vaults = reserveAccountsOf(pool);
    if (vaults !== undefined) out.push(vaults[0], vaults[1]);
    return out;
  }
  for (const key of swapArrayKeys(pool, options)) out.push(swapArrayAddress(pool, programId, key));
  if (pool.dex === Dex.Clmm && pool.ammConfig !== undefined) out.push(pool.ammConfig);
  return out;
}

/**
 * The token accounts holding the reserves (AMM v4 and CL vaults, DLMM reserves); undefined for
 * spec 02's simplified AMM layout, whose reserves are in the pool account.
 */
export function reserveAccountsOf(pool: DecodedPool): readonly [string, string] | undefined {
  if (pool.dex === Dex.Amm) return isAmmInfoPool(pool) ? [pool.vaultA!, pool.vaultB!] : undefined;
  if (pool.dex === Dex.Dlmm) return [pool.reserveX, pool.reserveY];
  return [pool.vaultA, pool.vaultB];
}

function arraysEachSide(options: PoolAccountsOptions): number {
  const each = options.arraysEachSide ?? DEFAULT_ARRAYS_EACH_SIDE;
  if (!Number.isInteger(each) || each < 0 || each > 64) throw invalidArgument('arraysEachSide', each, `arraysEachSide must be 0..64, got ${each}`);
  return each;
}

/** Array indexes current-each..current+each within [min, max], times `scale`, ascending. */
function consecutive(current: number, each: number, min: number, max: number, scale: number, out: number[]): void {
  const from = Math.max(min, current - each);
  const to = Math.min(max, current + each);
  for (let i = from; i <= to; i++) out.push(i * scale);
}

/**
 * The marked array indexes of a ±512 bitmap (bit index+512; Raydium's tick_array_bitmap and
 * DLMM's bin_array_bitmap share the layout): `current` if marked, the `each` nearest marked below
 * and above it, times `scale`, ascending.
 */
function markedAround(bitmap: readonly bigint[], current: number, each: number, scale: number, out: number[]): void {
  const first = out.length;
  let at = nextBinArrayWithLiquidity(bitmap, true, current);
  for (let left = at === current ? each + 1 : each; at !== undefined && left > 0; left--) {
    out.push(at * scale);
    at = at - 1 >= MIN_BITMAP_ARRAY_INDEX ? nextBinArrayWithLiquidity(bitmap, true, at - 1) : undefined;
  }
  // Found downward: reverse to ascending.
  for (let i = first, j = out.length - 1; i < j; i++, j--) {
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  at = current + 1 <= MAX_BITMAP_ARRAY_INDEX ? nextBinArrayWithLiquidity(bitmap, false, current + 1) : undefined;
  for (let left = each; at !== undefined && left > 0; left--) {
    out.push(at * scale);
    at = at + 1 <= MAX_BITMAP_ARRAY_INDEX ? nextBinArrayWithLiquidity(bitmap, false, at + 1) : undefined;
  }
}

function poolAddressOf(pool: DecodedPool): string {
  if (pool.address === undefined) throw invalidArgument('pool.address', null, `${pool.dex} pool without its address: its arrays cannot be derived`);
  return pool.address;
}

// ---- the swap context

/** An account as read from the chain. */
export interface FetchedAccount {
  owner: string;
  data: Uint8Array;
}

/**
 * An AMM v4 pool with the balances of its two vault accounts as read (withAmmVaultAmounts), or
 * why not: a vault that does not exist, is not an initialized token account, or holds another
 * mint than the pool's side. Spec 02 pools are returned as they are.
 */
export function withAmmVaultAccounts(pool: AmmPool, vaultA: FetchedAccount | null | undefined, vaultB: FetchedAccount | null | undefined): AmmPool | string {
  if (!isAmmInfoPool(pool)) return pool;
  const amounts: bigint[] = [];
  for (const [account, address, mint] of [
    [vaultA, pool.vaultA!, pool.tokenA],
    [vaultB, pool.vaultB!, pool.tokenB],
  ] as const) {
    if (account === null || account === undefined) return `vault ${address} does not exist`;
    const amount = tokenAccountAmount(account.data);
    if (amount === undefined) return `vault ${address} is not an initialized token account`;
    if (readPubkey(account.data, 0) !== mint) return `vault ${address} holds ${readPubkey(account.data, 0)}, not ${mint}`;
    amounts.push(amount);
  }
  return withAmmVaultAmounts(pool, amounts[0]!, amounts[1]!);
}

/** A pool ready to quote: Raydium CLMM with its AmmConfig's fee rate, AMM v4 with its vault balances, and its swap context. */
export interface PoolSwapState {
  pool: DecodedPool;
  /** undefined for dexa_amm. */
  context: SwapContext | undefined;
}

/**
 * Decodes one context account of `pool` with the registry (tick arrays get the pool's spacing).
 * undefined when the account is absent, does not decode, or is not one of this pool's (another
 * pool's array, another AmmConfig): such an account is left out of the context, never guessed.
 * Decoding failures are counted by the registry.
 */
export function decodeSwapAccount(
  registry: DecoderRegistry,
  pool: DecodedPool,
  address: string,
  account: FetchedAccount | null | undefined,
): DecodedAccount | undefined {
  if (account === null || account === undefined || pool.dex === Dex.Amm) return undefined;
  if (registry.dexOf(account.owner) !== pool.dex) return undefined;
  let decoded: DecodedAccount;
  try {
    decoded = registry.decodeAccount(account.owner, account.data, address, pool.dex === Dex.Dlmm ? undefined : pool.tickSpacing);
  } catch {
    return undefined;
  }
  switch (decoded.kind) {
    case 'tickArray':
      return decoded.tickArray.pool === pool.address ? decoded : undefined;
    case 'binArray':
      return decoded.binArray.pool === pool.address ? decoded : undefined;
    case 'ammConfig':
      return pool.dex === Dex.Clmm && pool.ammConfig === address ? decoded : undefined;
    default:
      return undefined;
  }
}

/**
 * The pool and context from the pool's decoded context accounts (any order; undefined entries
 * skipped): Raydium's AmmConfig applied with withAmmConfig, tick or bin arrays collected, and
 * `nowSeconds` (Unix seconds for DLMM volatility and Raydium's dynamic fee) when given.
 */
export function assembleSwapState(pool: DecodedPool, decoded: readonly (DecodedAccount | undefined)[], nowSeconds?: bigint): PoolSwapState {
  if (pool.dex === Dex.Amm) return { pool, context: undefined };
  const tickArrays: TickArray[] = [];
  const binArrays: BinArray[] = [];
  let result: DecodedPool = pool;
  for (const d of decoded) {
    if (d === undefined) continue;
    if (d.kind === 'tickArray') tickArrays.push(d.tickArray);
    else if (d.kind === 'binArray') binArrays.push(d.binArray);
    else if (d.kind === 'ammConfig' && pool.dex === Dex.Clmm) result = withAmmConfig(pool, d.ammConfig);
  }
  const context: SwapContext = pool.dex === Dex.Dlmm ? { binArrays } : { tickArrays };
  if (nowSeconds !== undefined) context.nowSeconds = nowSeconds;
  return { pool: result, context };
}

/**
 * The pool and swap context from fetched accounts: `accounts[i]` is what was read at
 * `addresses[i]` (null or undefined when absent), e.g. the addresses of swapAccountAddresses
 * (an AMM v4 pool takes its vault balances from them).
 */
export function buildSwapState(
  registry: DecoderRegistry,
  pool: DecodedPool,
  addresses: readonly string[],
  accounts: readonly (FetchedAccount | null | undefined)[],
  nowSeconds?: bigint,
): PoolSwapState {
  if (pool.dex === Dex.Amm) {
    const vaults = reserveAccountsOf(pool);
    if (vaults === undefined) return { pool, context: undefined };
    const withVaults = withAmmVaultAccounts(pool, accounts[addresses.indexOf(vaults[0])], accounts[addresses.indexOf(vaults[1])]);
    // A vault that cannot be read leaves the reserves unknown: the quote refuses (insufficient_liquidity_data).
    return { pool: typeof withVaults === 'string' ? pool : withVaults, context: undefined };
  }
  const decoded = new Array<DecodedAccount | undefined>(addresses.length);
  for (let i = 0; i < addresses.length; i++) decoded[i] = decodeSwapAccount(registry, pool, addresses[i]!, accounts[i]);
  return assembleSwapState(pool, decoded, nowSeconds);
}
