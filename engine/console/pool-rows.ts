/**
 * The console's pool table: one row per monitored pool with its DEX, mints, liquidity (reserves,
 * and the active liquidity of concentrated pools), last slot and state age, fresh or stale.
 *
 * Two sources, one row shape:
 * - `cachePoolRows`: inside `npm start`, the quote service's own pool cache, read in place (the
 *   age and freshness are exactly the ones its quotes use);
 * - `RpcPoolRows`: for `tidepool console` on its own, the scanner's monitored pools (`GET /config`)
 *   read from Solana JSON-RPC with the engine's pool loader every interval. The age there is the time
 *   since the console saw the pool's slot change, so a quiet pool turns stale as it would in a cache
 *   without refreshes.
 */
import { NO_ID, type PoolCache } from '../cache/index.js';
import { createDecoderRegistry, type DecodedPool } from '../dex/index.js';
import { reservesOf, RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';

export interface PoolRow {
  address: string;
  /** DEX kind; '' while the pool has no state yet. */
  dex: string;
  tokenA: string;
  tokenB: string;
  /** u64 decimal strings. */
  reserveA: string;
  reserveB: string;
  /** Active liquidity of a concentrated pool (u128 decimal string); null for the others. */
  liquidity: string | null;
  /** Slot of the state held; null while none is. */
  slot: string | null;
  /** Milliseconds since the state was stored; null while none is. */
  ageMs: number | null;
  fresh: boolean;
}

export interface PoolRowSource {
  rows(): Promise<PoolRow[]>;
  /**
   * Calls `listener` when a pool may have changed (sources that know; the others are polled
   * alone). The listener only flags the change. Returns its removal.
   */
  onChange?(listener: () => void): () => void;
  close(): Promise<void>;
}

function liquidityOf(pool: DecodedPool | undefined): string | null {
  return pool !== undefined && 'liquidity' in pool ? pool.liquidity.toString() : null;
}

function emptyRow(address: string): PoolRow {
  return { address, dex: '', tokenA: '', tokenB: '', reserveA: '0', reserveB: '0', liquidity: null, slot: null, ageMs: null, fresh: false };
}

/** Rows of `addresses()` from a pool cache in this process. */
export function cachePoolRows(cache: PoolCache, addresses: () => readonly string[]): PoolRowSource {
  return {
    async rows() {
      const now = cache.nowMs();
      return addresses().map((address) => {
        const id = cache.idOf(address);
        const entry = id === NO_ID ? undefined : cache.entryAt(id);
        if (entry === undefined) return emptyRow(address);
        const ageMs = cache.ageAt(id, now);
        return {
          address,
          dex: entry.dex,
          tokenA: entry.tokenA,
          tokenB: entry.tokenB,
          reserveA: entry.reserveA.toString(),
          reserveB: entry.reserveB.toString(),
          liquidity: liquidityOf(entry.pool),
          slot: entry.slot.toString(),
          ageMs,
          fresh: cache.isFresh(ageMs),
        };
      });
    },
    // Runs inside the cache's upsert (its hot path): the hub only flags it and reads later.
    onChange: (listener) => cache.onChange(listener),
    async close() {},
  };
}

export interface RpcPoolRowsOptions {
  /** Solana JSON-RPC URL(s). */
  rpcEndpoints: readonly string[];
  /** The monitored pools: a fixed list, or read from the scanner's GET /config at each refresh. */
  pools: readonly string[] | { scannerUrl: string };
  /** Age past which a pool shows stale (the cache's staleness threshold, 30 s by default). */
  staleAfterMs: number;
  now?: () => number;
}

/** Rows read from the chain by RPC (for `tidepool console` without an engine in the process). */
export class RpcPoolRows implements PoolRowSource {
  private readonly rpc: RpcClient;
  private readonly loader: RpcPoolLoader;
  private readonly now: () => number;
  /** address → the slot last seen and when it changed. */
  private readonly seen = new Map<string, { slot: bigint; at: number }>();
  private lastPools: readonly string[] = [];

  constructor(private readonly options: RpcPoolRowsOptions) {
    this.rpc = new RpcClient({ endpoints: [...options.rpcEndpoints] });
    this.loader = new RpcPoolLoader({ fetcher: new AccountFetcher(this.rpc), registry: createDecoderRegistry() });
    this.now = options.now ?? Date.now;
  }

  private async poolList(): Promise<readonly string[]> {
    const src = this.options.pools;
    if (Array.isArray(src)) return src;
    try {
      const res = await fetch(`${(src as { scannerUrl: string }).scannerUrl}/config`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as Record<string, unknown>;
      const pools = body['pools.monitored'];
      if (Array.isArray(pools)) this.lastPools = pools.filter((p): p is string => typeof p === 'string');
    } catch {
      // The scanner is down: keep showing the pools it named last (its health panel says it is down).
    }
    return this.lastPools;
  }

  async rows(): Promise<PoolRow[]> {
    const addresses = await this.poolList();
    if (addresses.length === 0) return [];
    let results;
    try {
      results = await this.loader.load(addresses);
    } catch {
      results = addresses.map((address) => ({ ok: false as const, error: { address, reason: 'rpc' as const, message: 'rpc failed' } }));
    }
    const now = this.now();
    return results.map((r, i) => {
      const address = addresses[i]!;
      const seen = this.seen.get(address);
      if (!r.ok) {
        if (seen === undefined) return emptyRow(address);
        return { ...emptyRow(address), slot: seen.slot.toString(), ageMs: now - seen.at };
      }
      const p = r.value;
      if (seen === undefined || seen.slot !== p.slot) this.seen.set(address, { slot: p.slot, at: now });
      const at = this.seen.get(address)!.at;
      const [reserveA, reserveB] = reservesOf(p);
      return {
        address,
        dex: p.dex,
        tokenA: p.pool.tokenA,
        tokenB: p.pool.tokenB,
        reserveA: reserveA.toString(),
        reserveB: reserveB.toString(),
        liquidity: liquidityOf(p.pool),
        slot: p.slot.toString(),
        ageMs: now - at,
        fresh: now - at <= this.options.staleAfterMs,
      };
    });
  }

  async close(): Promise<void> {
    await this.rpc.close();
  }
}
