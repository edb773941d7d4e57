/**
 * Test helpers of engine/quote: a manual simulator's chain as the source of real decoded pools, and
 * a pool cache filled from it under a fake clock.
 */
import { type PoolCache } from '../cache/index.js';
import { loadConfig } from '../config/index.js';
import type { DecodedPool } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import type { PoolLoadResult, PoolLoader } from '../pools/types.js';
import { QuoteEngine, type QuoteEngineOptions } from './quote-engine.js';
import { QuoteHttpServer, type QuoteHttpServerOptions } from './quote-http-server.js';
import { createFallbackLoader } from './rpc-loader.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import type { SimPoolView } from '../sim/market-view.js';

/** A manual simulator (nothing bound, slots advance only by hand) with SOL, USDC and 2 more tokens. */
export function manualSimulator(seed = 7): Simulator {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: String(seed), 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '2' },
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
  });
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

  load(addresses: readonly string[]): Promise<PoolLoadResult[]> {
    this.calls++;
    return this.inner.load(addresses);
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
