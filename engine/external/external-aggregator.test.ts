/**
 * The quote aggregator (engine/aggregator) reading this service as its external upstream, with the
 * simulator's /quote as the provider: the external side of an aggregated quote is the simulator's
 * answer, with the provider's name and uptime.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeUpstream, startTestAggregator, unaryCall, type TestAggregator } from '../aggregator/testing.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import { defaultExternalConfig } from './external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from './external-quote-service.js';
import { eventually } from './testing/fake-provider.js';

const logger = createLogger({ level: 'silent' });
let sim: Simulator;
let simEndpoints: SimEndpoints;
let service: ExternalQuoteService;
let local: FakeUpstream;
let agg: TestAggregator;

beforeAll(async () => {
  const simConfig = loadConfig(simSchema, {
    env: {},
    flags: { seed: '9', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '1' },
  }).values;
  sim = createSimulator(simConfig, { manual: true, logger });
  simEndpoints = await sim.start();
  sim.chain.advanceSlot(2);
  service = createExternalQuoteService(
    defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: `${simEndpoints.http}/quote`, pollInterval: 100, rateLimitRps: 50, 'log.level': 'silent' }),
    { logger },
  );
  const { grpc } = await service.start();
  local = new FakeUpstream();
  await local.start();
  agg = await startTestAggregator(local, grpc, { externalTimeout: 1000 });
});

afterAll(async () => {
  await agg?.close();
  local?.close();
  await service?.close();
  await sim?.close();
});

interface AggregatedQuote {
  externalQuote: { outputAmount: string; provider: string; providerUptime?: number; route: { pool: string }[]; source: string; error: unknown } | null;
}

describe('the aggregator on the external quote service', () => {
  it('takes the external side of GetAggregatedQuote from the provider through StreamBatchQuotes', async () => {
    const request = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '3000000000', slippageBps: 30 };
    const res = await fetch(`${simEndpoints.http}/quote?${new URLSearchParams({ ...request, slippageBps: '30' }).toString()}`);
    const want = (await res.json()) as { outAmount: string; routePlan: { swapInfo: { ammKey: string } }[] };
    const got = await eventually(async () => {
      const q = await unaryCall<AggregatedQuote>(agg.client, 'GetAggregatedQuote', request).catch(() => undefined);
      return q?.externalQuote?.outputAmount ? q : undefined;
    }, 'an aggregated quote with an external side');
    expect(got.externalQuote).toMatchObject({ outputAmount: want.outAmount, provider: 'simulator', providerUptime: 1, source: 'QUOTE_SOURCE_EXTERNAL' });
    expect(got.externalQuote!.route.map((h) => h.pool)).toEqual(want.routePlan.map((s) => s.swapInfo.ammKey));
    expect(service.health().activeStreams).toBeGreaterThanOrEqual(1);
  });
});
