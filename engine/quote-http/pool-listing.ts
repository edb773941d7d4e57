/**
 * `GET /v1/pools` and `GET /v1/pools/{mint}`: the cached pools as JSON, paged. Read through the
 * pool cache's public read API (`pools`, `idOf`, `entryAt`, `ageAt`, `isFresh`), never its columns.
 * Not a hot path: a page sorts the cache's addresses (at most `cache.maxPoolCount`, 1,000 by default).
 *
 * Paging: pools in ascending address order; `limit` 1 to MAX_POOL_PAGE (default
 * DEFAULT_POOL_PAGE); either `cursor` (the last address of the previous page: the page starts
 * after it, stable while pools come and go) or `offset` (skip that many). The answer's
 * `nextCursor` is the last address of the page, null on the last page.
 */
import type { PoolCache, PoolEntry } from '../cache/index.js';
import { labelOfDex } from '../swap-api/index.js';
import { badParameter, quoteFailure, type QuoteFailure, type PubkeyCheck } from '../quote/index.js';
import { ErrorCode } from '../errors.js';

export const DEFAULT_POOL_PAGE = 100;
export const MAX_POOL_PAGE = 500;

/** The page's query, as read (undefined: absent). */
export interface PoolPageQuery {
  limit: string | undefined;
  cursor: string | undefined;
  offset: string | undefined;
}

/** One pool as /v1/pools shows it. u64 values are decimal strings. */
export interface PoolJson {
  address: string;
  dex: string;
  /** The public swap API's label of the DEX (engine/swap-api). */
  label: string;
  tokenA: string;
  tokenB: string;
  /** Constant-product pools: the vault reserves; "0" where the cache keeps none (CL, DLMM). */
  reserveA: string;
  reserveB: string;
  /** CL pools: the active liquidity; null for the others. */
  liquidity: string | null;
  /** The trade fee as numerator / denominator as the scanner stored it ("0" / "0" when unknown). */
  feeNumerator: string;
  feeDenominator: string;
  /** CL pools: the trade fee in millionths (null when the pool's AmmConfig is not known yet, and for the others). */
  feeRateMillionths: number | null;
  /** Slot of the cached state. */
  slot: string;
  /** How long ago the state was stored, ms (cache clock). */
  stateAgeMs: number;
  /** Within the staleness threshold: quotes may use it. */
  fresh: boolean;
}

export interface PoolPage {
  pools: PoolJson[];
  /** Pools matching (all cached pools, or those trading the mint). */
  total: number;
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

function poolJson(cache: PoolCache, e: PoolEntry, now: number): PoolJson {
  const pool = e.pool;
  const cl = pool !== undefined && 'liquidity' in pool && 'sqrtPrice' in pool ? pool : undefined;
  const age = cache.ageAt(e.id, now);
  return {
    address: e.address,
    dex: e.dex,
    label: labelOfDex(e.dex),
    tokenA: e.tokenA,
    tokenB: e.tokenB,
    reserveA: e.reserveA.toString(),
    reserveB: e.reserveB.toString(),
    liquidity: cl === undefined ? null : cl.liquidity.toString(),
    feeNumerator: e.feeNumerator.toString(),
    feeDenominator: e.feeDenominator.toString(),
    feeRateMillionths: cl?.feeRate ?? null,
    slot: e.slot.toString(),
    stateAgeMs: age,
    fresh: cache.isFresh(age),
  };
}

interface Paging {
  limit: number;
  cursor: string | undefined;
  offset: number;
}

function parsePaging(q: PoolPageQuery): Paging | QuoteFailure {
  let limit = DEFAULT_POOL_PAGE;
  if (q.limit !== undefined && q.limit !== '') {
    if (!/^[0-9]{1,6}$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > MAX_POOL_PAGE) {
      return badParameter('limit', `parameter limit is not an integer from 1 to ${MAX_POOL_PAGE}`);
    }
    limit = Number(q.limit);
  }
  let offset = 0;
  if (q.offset !== undefined && q.offset !== '') {
    if (!/^[0-9]{1,9}$/.test(q.offset)) return badParameter('offset', 'parameter offset is not a non-negative integer');
    offset = Number(q.offset);
  }
  const cursor = q.cursor === '' ? undefined : q.cursor;
  if (cursor !== undefined && offset > 0) return badParameter('cursor', 'parameters cursor and offset exclude each other');
  return { limit, cursor, offset };
}

/**
 * One page of the cached pools; with `mint`, of those trading it (404 TP_ERR_UNKNOWN_MINT when none
 * does, 400 when it is not a base58 public key).
 */
export function poolPage(cache: PoolCache, query: PoolPageQuery, mint: string | undefined, pubkeys: PubkeyCheck): PoolPage | QuoteFailure {
  const paging = parsePaging(query);
  if ('ok' in paging) return paging;
  if (mint !== undefined && !pubkeys.isPubkey(mint)) return badParameter('mint', 'path parameter mint is not a base58 public key');
  const now = cache.nowMs();
  const entries: PoolEntry[] = [];
  for (const address of cache.pools()) {
    const e = cache.entryAt(cache.idOf(address));
    if (e === undefined) continue;
    if (mint !== undefined && e.tokenA !== mint && e.tokenB !== mint) continue;
    entries.push(e);
  }
  if (mint !== undefined && entries.length === 0) return quoteFailure(ErrorCode.UnknownMint, `no cached pool trades mint ${mint}`);
  entries.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  let start = paging.offset;
  if (paging.cursor !== undefined) {
    const after = paging.cursor;
    start = entries.findIndex((e) => e.address > after);
    if (start < 0) start = entries.length;
  }
  const slice = entries.slice(start, start + paging.limit);
  const last = start + slice.length < entries.length ? slice[slice.length - 1] : undefined;
  return {
    pools: slice.map((e) => poolJson(cache, e, now)),
    total: entries.length,
    nextCursor: last === undefined ? null : last.address,
  };
}
