/**
 * Test helpers of engine/quote: a manual simulator's chain as the source of real decoded pools, and
 * a pool cache filled from it under a fake clock.
 */
import { createHash } from 'node:crypto';

import { NO_ID, type PoolCache } from '../cache/index.js';
import { base58 } from '../chain/index.js';
import { loadConfig } from '../config/index.js';
import { Dex, directionFor, quoteSwap, type DecodedPool, type SwapMode, type SwapQuote } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import type { PoolLoadResult, PoolLoader } from '../pools/types.js';
import { QuoteEngine, type QuoteEngineOptions } from './quote-engine.js';
import { betterSwap, chooseRoute, DEFAULT_INTERMEDIATE_MINTS, sameSwap, type HopChoice, type HopFinder } from './route-search.js';
import { QuoteHttpServer, type QuoteHttpServerOptions } from '../quote-http/quote-http-server.js';
import { createFallbackLoader } from '../quote-service/rpc-loader.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import type { SimPoolView } from '../sim/market-view.js';

/**
 * A manual simulator (nothing bound, slots advance only by hand) with SOL, USDC and `tokens` more
 * tokens (2 unless given), `poolsPerKind` pools of each of the four kinds (2 unless given).
 */
export function manualSimulator(seed = 7, market: { tokens?: number; poolsPerKind?: number } = {}): Simulator {
  const config = loadConfig(simSchema, {
    env: {},
    flags: {
      seed: String(seed),
      'rpc-port': '0',
      'ws-port': '0',
      'stream-port': '0', 'geyser-port': '0',
      'http-port': '0',
      tokens: String(market.tokens ?? 2),
      'pools-per-kind': String(market.poolsPerKind ?? 2),
    },
  }).values;
  return createSimulator(config, { manual: true, logger: createLogger({ name: 'quote-test', level: 'silent' }) });
}

function reservesOf(pool: DecodedPool): [bigint, bigint] {
  return 'reserveA' in pool && typeof pool.reserveA === 'bigint' ? [pool.reserveA, pool.reserveB] : [0n, 0n];
}

/** Stores `view` in `cache` at `slot` (the decoded pool and its context, as the scanner would). */
export function storePool(cache: PoolCache, view: SimPoolView, slot: bigint): void {
  const [reserveA, reserveB] = reservesOf(view.pool);
  cache.upsert({
    address: view.address,
    dex: view.dex,
    tokenA: view.pool.tokenA,
    tokenB: view.pool.tokenB,
    reserveA,
    reserveB,
    slot,
    pool: view.pool,
    context: view.ctx,
    ...(view.transferFees !== undefined ? { transferFees: view.transferFees } : {}),
  });
}

/** A pool address (base58 of 32 bytes) that no simulator pool has, from `label`. */
export function syntheticAddress(label: string): string {
  return base58.encode(createHash('sha256').update(`tidepool-test:${label}`).digest());
}

/**
 * A constant-product pool of the tests' own: `base`'s decoded AMM pool (its fee, its layout) with
 * other mints and reserves, at a new address. For routes the simulator's market does not have (a
 * shallow direct pool beside a deep two-hop route, a pair isolated from SOL and USDC).
 */
export function syntheticAmmPool(base: SimPoolView, over: { label: string; tokenA: string; tokenB: string; reserveA: bigint; reserveB: bigint }): SimPoolView {
  if (base.pool.dex !== Dex.Amm) throw new Error('syntheticAmmPool: the base must be a dexa_amm pool');
  const address = syntheticAddress(over.label);
  return {
    ...base,
    address,
    pool: { ...base.pool, address, tokenA: over.tokenA, tokenB: over.tokenB, reserveA: over.reserveA, reserveB: over.reserveB },
    ctx: {},
    transferFees: undefined,
  };
}

/**
 * The fallback's real loader (engine/pools RpcPoolLoader) on the simulator's JSON-RPC, counting
 * its load() calls.
 */
export class CountingLoader implements PoolLoader {
  /** load() calls made. */
  calls = 0;
  private readonly inner: PoolLoader;

  constructor(rpcUrl: string, timeoutMs = 10_000) {
    this.inner = createFallbackLoader([rpcUrl], timeoutMs);
  }

  /** The signal of the last load() call. */
  lastSignal: AbortSignal | undefined;

  load(addresses: readonly string[], options: { signal?: AbortSignal } = {}): Promise<PoolLoadResult[]> {
    this.calls++;
    this.lastSignal = options.signal;
    return this.inner.load(addresses, options);
  }
}

/** A fake clock: read with `now()`, move with `advance(ms)`. */
export class FakeClock {
  constructor(public t = 1_700_000_000_000) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A GET /quote server over a quote engine of its own, built from one set of options for both. */
export function quoteHttpServer(options: QuoteEngineOptions & Omit<QuoteHttpServerOptions, 'engine'>): QuoteHttpServer {
  return new QuoteHttpServer({ ...options, engine: new QuoteEngine(options) });
}

/**
 * The exhaustive leg search the route tests compare with: every candidate at most `maxAgeMs` old
 * quoted, ties to the lower address; no rate bounds, nothing kept between searches.
 */
export class ExhaustiveFinder implements HopFinder<number> {
  private readonly scratch;
  constructor(
    private readonly cache: PoolCache,
    private readonly maxAgeMs = Infinity,
  ) {
    this.scratch = cache.newCandidates();
  }

  best(inputMint: string, outputMint: string, amount: bigint, mode: SwapMode): HopChoice<number> | undefined {
    const cache = this.cache;
    const c = cache.candidates(cache.mintIdOf(inputMint), cache.mintIdOf(outputMint), this.maxAgeMs, this.scratch);
    let best: SwapQuote | undefined;
    let bestId = NO_ID;
    for (let i = 0; i < c.count; i++) {
      const id = c.ids[i]!;
      const pool = cache.poolAt(id)!;
      const r = quoteSwap(pool, { aToB: directionFor(pool, inputMint, outputMint), mode, amount }, cache.contextAt(id), cache.transferFeesAt(id));
      if (!r.ok) continue;
      if (best === undefined || betterSwap(r, best, mode) || (sameSwap(r, best, mode) && cache.addressOf(id)! < cache.addressOf(bestId)!)) {
        best = r;
        bestId = id;
      }
    }
    return best === undefined ? undefined : { pool: bestId, swap: best, inputMint, outputMint };
  }
}

/** The exhaustive search's route (direct or through wrapped SOL or USDC) as `pool:in>out` per hop; 'none' without one. */
export function exhaustiveRoute(cache: PoolCache, input: string, output: string, amount: bigint, mode: SwapMode, maxAgeMs = Infinity): string {
  const route = chooseRoute(new ExhaustiveFinder(cache, maxAgeMs), input, output, amount, mode, DEFAULT_INTERMEDIATE_MINTS, true);
  return route === undefined ? 'none' : route.map((h) => `${cache.addressOf(h.pool)}:${h.swap.amountIn}>${h.swap.amountOut}`).join(' ');
}
