/**
 * The aggregator against the real local upstream: engine/quote's StreamBatchQuotes server quoting
 * from a pool cache filled with a simulator's pools (the external side is a fake upstream).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { quoteFromCache } from '../quote/cache-quoter.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import { QuoteStreamServer } from '../quote-grpc/quote-stream-server.js';
import { manualSimulator, storePool } from '../quote/testing.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { Simulator } from '../sim/simulator.js';
import { pairId } from './swap-route-event.js';
import { FakeUpstream, eventually, makeQuote, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';
import type { WireAggregatedQuote } from './wire-types.js';

const AMOUNT = 1_000_000_000n;
let sim: Simulator;
let cache: PoolCache;
let engine: QuoteEngine;
let server: QuoteStreamServer;
let external: FakeUpstream;
let t: TestAggregator;
let localOutput: bigint;

beforeAll(async () => {
  sim = manualSimulator(11);
  cache = new PoolCache({ stalenessThresholdMs: 60_000 });
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  const metrics = createQuoteMetrics();
  engine = new QuoteEngine({ cache, metrics, hybridMode: false });
  server = new QuoteStreamServer({ engine, shutdownTimeoutMs: 1000 });
  const port = await server.start(0);
  localOutput = quoteFromCache(cache, WSOL_MINT, USDC_MINT, AMOUNT).outputAmount;
  external = new FakeUpstream();
  external.respond = (p) => makeQuote(p, (localOutput * 101n) / 100n, { poolAgeSeconds: 7200 });
  await external.start();
  t = await startTestAggregator(`127.0.0.1:${port}`, external, { localTimeout: 1000, externalTimeout: 1000 });
});

afterAll(async () => {
  await t?.close();
  external?.close();
  await server?.close();
  await engine?.close();
});

describe('aggregator over the engine quote service', () => {
  it('merges the local upstream quote (exact cache math) with the external one', async () => {
    const request = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: AMOUNT.toString(), slippageBps: 30 };
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', request);
    expect(q.pairId).toBe(pairId(WSOL_MINT, USDC_MINT, AMOUNT));
    expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
    expect(q.localQuote).toMatchObject({ source: 'QUOTE_SOURCE_LOCAL', outputAmount: localOutput.toString(), minOutputAmount: ((localOutput * 9970n) / 10_000n).toString(), slippageBps: 30 });
    expect(q.localQuote!.route.length).toBeGreaterThan(0);
    expect(q.localQuote!.routeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(q.priceDifferencePct).toBeCloseTo(Number(((localOutput * 101n) / 100n - localOutput) * 1_000_000n / localOutput) / 10_000, 3);
    expect(q.localConfidence!.factors).toHaveLength(5);
    await eventually(() => expect(t.aggregator.stats().upstreams.local).toMatchObject({ healthy: true, state: 'UPSTREAM_STATE_STREAMING' }));
  });
});
