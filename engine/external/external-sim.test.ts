/**
 * The external quote service against the real simulator's GET /quote (engine/sim/quote-api): what
 * a stream receives is what the simulator answers for the same query.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import { defaultExternalConfig } from './external-config.js';
import { createExternalQuoteService, type ExternalEndpoints, type ExternalQuoteService } from './external-quote-service.js';
import { StreamProbe, eventually } from './testing/fake-provider.js';

const logger = createLogger({ level: 'silent' });
let sim: Simulator;
let simEndpoints: SimEndpoints;
let service: ExternalQuoteService;
let endpoints: ExternalEndpoints;

beforeAll(async () => {
  const simConfig = loadConfig(simSchema, {
    env: {},
    flags: { seed: '7', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '3', 'pools-per-kind': '2' },
  }).values;
  sim = createSimulator(simConfig, { manual: true, logger });
  simEndpoints = await sim.start();
  sim.chain.advanceSlot(3);
  service = createExternalQuoteService(
    defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: `${simEndpoints.http}/quote`, pollInterval: 200, rateLimitRps: 50, 'log.level': 'silent' }),
    { logger },
  );
  endpoints = await service.start();
});

afterAll(async () => {
  await service?.close();
  await sim?.close();
});

interface SimQuote {
  inAmount: string;
  outAmount: string;
  otherAmountThreshold: string;
  priceImpactPct: string;
  contextSlot: number;
  routePlan: { swapInfo: { ammKey: string; label: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string; feeAmount: string; feeMint: string } }[];
}

describe('external quote service on the simulator', () => {
  it('streams exactly what the simulator\'s /quote answers, for direct and multi-hop pairs', async () => {
    // A token pooled only against SOL: USDC -> it goes through SOL (two hops).
    const pools = sim.chain.pools();
    const other = sim.chain.tokens().find(
      (t) => t.mint !== WSOL_MINT && t.mint !== USDC_MINT && !pools.some((p) => [p.pool.tokenA, p.pool.tokenB].includes(t.mint) && [p.pool.tokenA, p.pool.tokenB].includes(USDC_MINT)),
    )!.mint;
    const pairs = [
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '2500000000' },
      { inputMint: USDC_MINT, outputMint: WSOL_MINT, amount: '1000000000' },
      { inputMint: USDC_MINT, outputMint: other, amount: '1000000' },
    ];
    const probe = new StreamProbe(endpoints.grpc, { pairs, slippageBps: 75 });
    try {
      for (const pair of pairs) {
        const q = await eventually(() => probe.quotes.find((m) => m.inputMint === pair.inputMint && m.outputMint === pair.outputMint), `a quote for ${pair.inputMint}`);
        const res = await fetch(`${simEndpoints.http}/quote?${new URLSearchParams({ ...pair, slippageBps: '75' }).toString()}`);
        expect(res.status).toBe(200);
        const want = (await res.json()) as SimQuote;
        expect(q.error ?? undefined).toBeUndefined();
        expect(q).toMatchObject({
          inputAmount: want.inAmount,
          outputAmount: want.outAmount,
          // Our min output and the provider's threshold are the same formula at the same slippage.
          minOutputAmount: want.otherAmountThreshold,
          slippageBps: 75,
          slot: String(want.contextSlot),
          contextSlot: String(want.contextSlot),
          provider: 'simulator',
          source: 'QUOTE_SOURCE_EXTERNAL',
          origin: 'QUOTE_ORIGIN_EXTERNAL_API',
        });
        expect(q.priceImpact).toBe(Number(want.priceImpactPct));
        expect(q.route.map((h) => [h.pool, h.dex, h.inputMint, h.outputMint, h.inAmount, h.outAmount])).toEqual(
          want.routePlan.map(({ swapInfo: s }) => [s.ammKey, s.label, s.inputMint, s.outputMint, s.inAmount, s.outAmount]),
        );
        if (pair.outputMint === other) expect(q.route).toHaveLength(2);
        for (let i = 0; i < q.route.length; i++) {
          const s = want.routePlan[i]!.swapInfo;
          if (s.feeMint === s.inputMint) expect(q.route[i]!.fee).toBe(s.feeAmount);
        }
      }
    } finally {
      probe.close();
    }
  });

  it('answers NOT_FOUND for a token the simulator does not trade', async () => {
    const probe = new StreamProbe(endpoints.grpc, { pairs: [{ inputMint: WSOL_MINT, outputMint: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263', amount: '1000' }] });
    try {
      const q = await eventually(() => probe.quotes[0], 'an error quote');
      expect(q.error).toMatchObject({ code: 'TP_ERR_EXTERNAL_NO_ROUTE', grpcStatus: 5 });
      expect(q.error!.message).toMatch(/TOKEN_NOT_TRADABLE/);
      expect(service.breaker.state).toBe('closed');
    } finally {
      probe.close();
    }
  });

  it('counts the simulator\'s injected 503s against the provider', async () => {
    sim.faults.quoteApi.failRate = 1;
    sim.faults.quoteApi.failStatus = 503;
    const probe = new StreamProbe(endpoints.grpc, { pairs: [{ inputMint: USDC_MINT, outputMint: WSOL_MINT, amount: '777' }] });
    try {
      const q = await eventually(() => probe.quotes.find((m) => m.error != null), 'an error quote');
      expect(q.error).toMatchObject({ code: 'TP_ERR_EXTERNAL_SERVER_ERROR', grpcStatus: 14 });
      expect(service.health().provider.errors['server_error']).toBeGreaterThanOrEqual(1);
    } finally {
      sim.faults.quoteApi.failRate = 0;
      probe.close();
    }
  });
});
