/**
 * The split deployment (issue 5) against the simulator and the local NATS: `tidepool scanner`'s app
 * publishing to a POOL_UPDATES stream of its own (random name and subjects), `tidepool quote-service`'s
 * app consuming it, and the one-process engine (`npm start`) on the same chain beside them. Quotes of
 * the split services must equal the engine's.
 */
import { existsSync } from 'node:fs';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOCAL_NATS_URL, connectLocal, deadPort, deleteStreams, uniqueName, uniqueSubjectRoot, waitFor } from '../bus/testing/local-nats.js';
import { createLogger } from '../obs/logger.js';
import { PoolContextReader } from '../quote/pool-context-reader.js';
import { defaultQuoteConfig, type QuoteServiceConfig } from '../quote-service/quote-config.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { createQuoteApp, type QuoteApp } from './quote-app.js';
import { createScannerApp, type ScannerApp } from './scanner-app.js';
import { PARSE_WORKER, RPC_WORKER, blockstreamFlags, eventually, splitScannerConfig, startEngineUnderSim, type EngineUnderSim } from './testing.js';

const built = existsSync(PARSE_WORKER);
const logger = createLogger({ name: 'split-test', level: 'silent' });

interface QuoteBody {
  outputAmount: string;
  pool: string;
  slot: string;
  source: string;
}

async function quote(base: string, input: string, output: string, amount: bigint): Promise<QuoteBody | { status: number }> {
  const res = await fetch(`${base}/quote?input=${input}&output=${output}&amount=${amount}`);
  if (res.status !== 200) return { status: res.status };
  return (await res.json()) as QuoteBody;
}

describe.skipIf(!built)('split scanner and quote service over NATS under the simulator', () => {
  /** A quote service on the test's stream and the simulator's RPC, consuming as `consumer`. */
  function quoteApp(consumer: string, overrides: Partial<QuoteServiceConfig> = {}, lagIntervalMs?: number): Promise<QuoteApp> {
    return createQuoteApp(
      defaultQuoteConfig({
        port: 0,
        'metrics.port': 0,
        'grpc.port': 0,
        rateLimitRps: 100_000,
        'rpc.endpoints': [e.simEndpoints.rpc],
        'bus.servers': [LOCAL_NATS_URL],
        'bus.streamName': stream,
        'bus.consumerName': consumer,
        ...overrides,
      }),
      { logger, subjectRoot: root, ...(lagIntervalMs === undefined ? {} : { lagIntervalMs }) },
    );
  }

  let e: EngineUnderSim;
  let admin: NatsConnection;
  let scanner: ScannerApp;
  let service: QuoteApp;
  let quoteBase: string;
  const stream = uniqueName('POOL_UPDATES');
  const root = uniqueSubjectRoot();

  beforeAll(async () => {
    admin = await connectLocal();
    e = await startEngineUnderSim();
    const loaded = splitScannerConfig({ rpc: e.simEndpoints.rpc, stream, source: blockstreamFlags(e.simEndpoints.stream) });
    scanner = await createScannerApp(loaded, { logger, pools: e.sim.chain.pools().map((p) => p.address), parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER, subjectRoot: root });
    service = await quoteApp('quote-service', {}, 100);
    await scanner.start();
    quoteBase = (await service.start()).quote;
    await eventually(() => (e.engine.scanner.connected && scanner.service.scanner.connected && service.consumer?.consuming === true ? true : undefined), 15_000, 'streams and consumer');
  });

  afterAll(async () => {
    await service?.close();
    await scanner?.close();
    await e?.close();
    if (admin !== undefined) {
      await deleteStreams(admin, [stream]);
      await admin.close();
    }
  });

  it('serves the same quotes as the one-process engine once every pool has traded', async () => {
    const chain = e.sim.chain;
    const pools = chain.poolsForPair(WSOL_MINT, USDC_MINT);
    expect(pools.length).toBeGreaterThan(1);
    for (const p of pools) {
      const info = chain.poolInfo(p.address)!;
      chain.sendTransaction(swapTransaction(chain, trader(chain, 2), info, { aToB: true, exactIn: true, amount: 2_000_000n, threshold: 0n }));
    }
    chain.advanceSlot(1);
    // Every pool in the split cache at the engine's slot, with the accounts its swap math needs.
    await waitFor(() => {
      for (const p of pools) {
        const entry = service.cache.get(p.address);
        if (entry === undefined || entry.pool === undefined) return false;
        if (PoolContextReader.needsContext(entry.dex) && entry.context === undefined) return false;
      }
      return true;
    }, 15_000, 'every pool in the split cache');
    expect(scanner.publisher.stats.published).toBeGreaterThanOrEqual(pools.length);
    const requests: [string, string, bigint][] = [
      [WSOL_MINT, USDC_MINT, 1_000_000_000n],
      [WSOL_MINT, USDC_MINT, 50_000_000_000n],
      [USDC_MINT, WSOL_MINT, 100_000_000n],
      [USDC_MINT, WSOL_MINT, 10_000_000_000n],
    ];
    for (const [input, output, amount] of requests) {
      const both = await eventually(async () => {
        const [a, b] = await Promise.all([quote(e.endpoints.quote, input, output, amount), quote(quoteBase, input, output, amount)]);
        return 'slot' in a && 'slot' in b && a.slot === b.slot && a.pool === b.pool ? ([a, b] as [QuoteBody, QuoteBody]) : undefined;
      }, 15_000, `same state for ${amount}`);
      expect(both[1].source).toBe('cache');
      expect(both[1].outputAmount).toBe(both[0].outputAmount);
    }
  });

  it('a second scanner (another region) publishing the same transactions under other event ids: the cache converges to the same state', async () => {
    const regionB = await createScannerApp(
      splitScannerConfig({ rpc: e.simEndpoints.rpc, stream, source: blockstreamFlags(e.simEndpoints.stream) }),
      { logger, pools: e.sim.chain.pools().map((p) => p.address), parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER, subjectRoot: root },
    );
    try {
      await regionB.start();
      await eventually(() => (regionB.service.scanner.connected ? true : undefined), 15_000, 'region B stream');
      const chain = e.sim.chain;
      const pools = chain.poolsForPair(WSOL_MINT, USDC_MINT);
      const publishedA = scanner.publisher.stats.published;
      for (const p of pools) chain.sendTransaction(swapTransaction(chain, trader(chain, 5), chain.poolInfo(p.address)!, { aToB: false, exactIn: true, amount: 3_000_000n, threshold: 0n }));
      chain.advanceSlot(1);
      await waitFor(() => regionB.publisher.stats.published >= pools.length && scanner.publisher.stats.published >= publishedA + pools.length, 15_000, 'both regions published');
      for (const amount of [1_000_000_000n, 20_000_000_000n]) {
        const both = await eventually(async () => {
          const [a, b] = await Promise.all([quote(e.endpoints.quote, WSOL_MINT, USDC_MINT, amount), quote(quoteBase, WSOL_MINT, USDC_MINT, amount)]);
          return 'slot' in a && 'slot' in b && a.slot === b.slot && a.pool === b.pool && a.outputAmount === b.outputAmount ? [a, b] : undefined;
        }, 15_000, `converged quote for ${amount}`);
        expect(both).toHaveLength(2);
      }
    } finally {
      await regionB.close();
    }
  });

  it('reports bus status and consumer lag, and counts the pool updates received', async () => {
    const health = (await (await fetch(`${quoteBase}/health`)).json()) as Record<string, unknown>;
    expect(JSON.stringify(health)).toContain('connected');
    await waitFor(() => service.consumer?.stats.lastLag === 0, 10_000, 'lag 0');
    expect(service.consumer!.stats.acked).toBeGreaterThan(0);
  });

  it('GET /ready: the quote service (cache loaded, bus connected) and the scanner (stream and bus connected) are ready', async () => {
    const quoteReady = await fetch(`${quoteBase}/ready`);
    expect(quoteReady.status).toBe(200);
    expect(await quoteReady.json()).toEqual({ status: 'ready' });
    const scannerReady = await fetch(`http://127.0.0.1:${scanner.service.http.port}/ready`);
    expect(scannerReady.status).toBe(200);
    expect(await scannerReady.json()).toEqual({ status: 'ready' });
  });

  it('a restarted quote service (same durable) starts with every traded pool, seeded from the stream, and quotes as before', async () => {
    const before = await quote(quoteBase, WSOL_MINT, USDC_MINT, 1_000_000_000n);
    const known = service.cache.pools().length;
    expect(known).toBeGreaterThan(0);
    await service.close();
    service = await quoteApp('quote-service', {}, 100);
    quoteBase = (await service.start()).quote;
    await waitFor(() => service.cache.pools().length === known, 15_000, 'every pool back in the restarted cache');
    const after = await eventually(async () => {
      const q = await quote(quoteBase, WSOL_MINT, USDC_MINT, 1_000_000_000n);
      return 'source' in q && q.source === 'cache' ? q : undefined;
    }, 15_000, 'a cache quote after the restart');
    expect('outputAmount' in before && before.outputAmount).toBe(after.outputAmount);
  });

  it('bus down: the scanner counts publish errors; a quote service that gets no more updates falls back to RPC', async () => {
    const port = await deadPort();
    const chain = e.sim.chain;
    const deadScanner = await createScannerApp(
      splitScannerConfig({ rpc: e.simEndpoints.rpc, stream: uniqueName('DEAD'), bus: `nats://127.0.0.1:${port}`, source: blockstreamFlags(e.simEndpoints.stream) }),
      { logger, pools: chain.pools().map((p) => p.address), parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER, subjectRoot: uniqueSubjectRoot() },
    );
    // The quote side: a service that knew the pools over the bus, then gets nothing more (delivery
    // stopped), with a short staleness threshold: its quotes fall back to RPC.
    const lonely = await quoteApp('lonely', { 'cache.stalenessThreshold': 300 });
    try {
      await deadScanner.start();
      const base = (await lonely.start()).quote;
      await eventually(() => (deadScanner.service.scanner.connected ? true : undefined), 15_000, 'stream');
      // A new durable starts at the stream's first message: the pools traded above become known.
      await waitFor(() => lonely.quote.directory.size > 0, 15_000, 'pools known over the bus');
      await lonely.consumer!.close();
      const pool = chain.poolsForPair(WSOL_MINT, USDC_MINT)[0]!;
      chain.sendTransaction(swapTransaction(chain, trader(chain, 3), chain.poolInfo(pool.address)!, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      chain.advanceSlot(1);
      await waitFor(async () => (await deadScanner.service.metrics.busPublishErrors.get()).values[0]!.value >= 1, 15_000, 'publish error counted');
      expect(deadScanner.bus.status).toBe('connecting');
      // Partitioned from the bus: the scanner's health check fails.
      const scannerHealth = await fetch(`http://127.0.0.1:${deadScanner.service.http.port}/health`);
      expect(scannerHealth.status).toBe(503);
      expect(await scannerHealth.json()).toMatchObject({ status: 'bus_unavailable', connected: true, bus: 'connecting' });
      const scannerReady = await fetch(`http://127.0.0.1:${deadScanner.service.http.port}/ready`);
      expect(scannerReady.status).toBe(503);
      expect(await scannerReady.json()).toEqual({ status: 'not_ready', reason: 'pool update bus is connecting' });
      // Nothing arrives over the bus any more: once stale, the quote comes from the RPC fallback.
      await eventually(async () => {
        const q = await quote(base, WSOL_MINT, USDC_MINT, 1_000_000_000n);
        return 'source' in q && q.source === 'rpc' ? q : undefined;
      }, 15_000, 'an RPC quote');
      // The same chain state as the engine's cache, once the engine has read the swap too.
      await eventually(async () => {
        const [fromEngine, fromRpc] = await Promise.all([quote(e.endpoints.quote, WSOL_MINT, USDC_MINT, 1_000_000_000n), quote(base, WSOL_MINT, USDC_MINT, 1_000_000_000n)]);
        return 'outputAmount' in fromEngine && 'outputAmount' in fromRpc && fromEngine.outputAmount === fromRpc.outputAmount ? true : undefined;
      }, 15_000, 'the RPC quote equal to the engine\'s');
    } finally {
      await lonely.close();
      await deadScanner.close();
    }
  });

  // Last: it stops the shared scanner.
  it('scanner crash: the quote service serves its cached data until it goes stale, then falls back to RPC', async () => {
    const chain = e.sim.chain;
    const survivor = await quoteApp('survivor', { 'cache.stalenessThreshold': 3_000 });
    try {
      const base = (await survivor.start()).quote;
      await waitFor(() => survivor.consumer?.consuming === true, 15_000, 'consumer');
      // A fresh update of every SOL/USDC pool, through the scanner and the bus.
      for (const p of chain.poolsForPair(WSOL_MINT, USDC_MINT)) {
        chain.sendTransaction(swapTransaction(chain, trader(chain, 2), chain.poolInfo(p.address)!, { aToB: false, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      }
      chain.advanceSlot(1);
      const slot = chain.slot();
      const fromCache = await eventually(async () => {
        const q = await quote(base, WSOL_MINT, USDC_MINT, 1_000_000_000n);
        return 'source' in q && q.source === 'cache' && BigInt(q.slot) >= slot ? q : undefined;
      }, 15_000, 'a cache quote on the newest state');
      await scanner.close(); // the scanner crashes: no more updates
      const right = await quote(base, WSOL_MINT, USDC_MINT, 1_000_000_000n);
      expect(right).toMatchObject({ source: 'cache', outputAmount: fromCache.outputAmount });
      const later = await eventually(async () => {
        const q = await quote(base, WSOL_MINT, USDC_MINT, 1_000_000_000n);
        return 'source' in q && q.source === 'rpc' ? q : undefined;
      }, 15_000, 'an RPC quote once the cache went stale');
      // Nothing moved on chain since: the RPC quote is the cached one.
      expect(later.outputAmount).toBe(fromCache.outputAmount);
    } finally {
      await survivor.close();
    }
  });
});
