/**
 * StreamBatchQuotes of the external service over real gRPC: request validation, the latest result
 * at open, re-sends every update interval, shutdown.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';

import { pairId } from '../aggregator/swap-route-event.js';
import { createLogger } from '../obs/logger.js';
import { defaultExternalConfig, type ExternalQuotesConfig } from './external-config.js';
import { createExternalQuoteService, type ExternalEndpoints, type ExternalQuoteService } from './external-quote-service.js';
import { BONK, FakeProvider, StreamProbe, USDC, WSOL, eventually, type StreamPairInput } from './testing/fake-provider.js';

const logger = createLogger({ level: 'silent' });
let fake: FakeProvider;
let service: ExternalQuoteService;
let endpoints: ExternalEndpoints;
const probes: StreamProbe[] = [];

async function start(config: Partial<ExternalQuotesConfig> = {}): Promise<void> {
  fake = new FakeProvider();
  await fake.start();
  service = createExternalQuoteService(
    // 'stream.minInterval' 10: a test asks for 30 ms re-sends, below the default minimum.
    defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: fake.url, pollInterval: 60_000, rateLimitRps: 1000, 'log.level': 'silent', 'stream.minInterval': 10, ...config }),
    { logger },
  );
  endpoints = await service.start();
}

function open(request: { pairs: StreamPairInput[]; slippageBps?: number; updateIntervalMs?: number }): StreamProbe {
  const probe = new StreamProbe(endpoints.grpc, request);
  probes.push(probe);
  return probe;
}

const SOL_USDC: StreamPairInput = { inputMint: WSOL, outputMint: USDC, amount: '1000000000' };

afterEach(async () => {
  for (const p of probes.splice(0)) p.close();
  await service?.close();
  await fake?.close();
});

describe('ExternalQuoteServer StreamBatchQuotes', () => {
  it.each([
    ['no pairs', { pairs: [] }, /^pairs: at least one/],
    ['1,001 pairs', { pairs: Array.from({ length: 1001 }, (_, i) => ({ ...SOL_USDC, amount: String(i + 1) })) }, /^pairs: 1001 pairs/],
    ['a bad input mint', { pairs: [{ ...SOL_USDC, inputMint: 'not-a-mint' }] }, /^pairs\[0\]\.input_mint/],
    ['a 31-byte output mint', { pairs: [{ ...SOL_USDC, outputMint: '1111111111111111111111111111111' }] }, /^pairs\[0\]\.output_mint/],
    ['equal mints', { pairs: [SOL_USDC, { ...SOL_USDC, outputMint: WSOL }] }, /^pairs\[1\]\.output_mint: equals input_mint/],
    ['a zero amount', { pairs: [{ ...SOL_USDC, amount: '0' }] }, /^pairs\[0\]\.amount: must be greater than 0/],
    ['slippage above 10,000', { pairs: [SOL_USDC], slippageBps: 10_001 }, /^slippage_bps/],
    // The provider is polled exact in: an exact-out pair is refused, never quoted the other way.
    ['an exact-out pair', { pairs: [SOL_USDC, { ...SOL_USDC, swapMode: 'SWAP_MODE_EXACT_OUT' }] }, /^pairs\[1\]\.swap_mode: SWAP_MODE_EXACT_OUT is not served here/],
  ])('refuses %s with INVALID_ARGUMENT naming the field', async (_name, request, details) => {
    await start();
    const probe = open(request as { pairs: StreamPairInput[] });
    const err = await eventually(() => probe.error, 'the stream error');
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(details);
    expect(fake.requests).toHaveLength(0);
    expect(service.poller.registry.size).toBe(0);
  });

  it('quotes duplicate pairs once, under their pairID', async () => {
    await start();
    const probe = open({ pairs: [SOL_USDC, { ...SOL_USDC }, { inputMint: USDC, outputMint: BONK, amount: '7' }] });
    await eventually(() => probe.quotes.length >= 2, 'two quotes');
    expect(fake.requests).toHaveLength(2);
    expect(new Set(probe.quotes.map((q) => q.pairId))).toEqual(new Set([pairId(WSOL, USDC, 1_000_000_000n), pairId(USDC, BONK, 7n)]));
  });

  it('re-sends the latest quote of a pair every update interval when no new poll came', async () => {
    await start();
    const probe = open({ pairs: [SOL_USDC], updateIntervalMs: 30 });
    await eventually(() => probe.quotes.length >= 4, 'four sends of one poll');
    expect(fake.requests).toHaveLength(1);
    expect(new Set(probe.quotes.map((q) => q.quotedAtUnixMs)).size).toBe(1);
  });

  it('sends a new stream the latest result of a pair at once, without asking the provider again', async () => {
    await start();
    const first = open({ pairs: [SOL_USDC] });
    const q = await eventually(() => first.quotes[0], 'the first quote');
    const second = open({ pairs: [SOL_USDC], slippageBps: 10_000, updateIntervalMs: 60_000 });
    const q2 = await eventually(() => second.quotes[0], 'the cached quote');
    expect(q2).toMatchObject({ pairId: q.pairId, quotedAtUnixMs: q.quotedAtUnixMs, outputAmount: q.outputAmount, minOutputAmount: '0', slippageBps: 10_000 });
    expect(fake.requests).toHaveLength(1);
  });

  it('ends open streams with UNAVAILABLE on close, and close is idempotent', async () => {
    await start();
    const probe = open({ pairs: [SOL_USDC] });
    await eventually(() => probe.quotes[0], 'a quote');
    await Promise.all([service.close(), service.close()]);
    const err = await eventually(() => probe.error, 'the stream end');
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
    expect(service.poller.registry.size).toBe(0);
  });

  it('fails to start with TP_ERR_IO naming what could not listen when the metrics port is taken, and closes its gRPC port', async () => {
    await start();
    const second = createExternalQuoteService(
      defaultExternalConfig({ grpcPort: 0, 'metrics.port': Number(new URL(endpoints.metrics).port), quoteUrl: fake.url, 'log.level': 'silent' }),
      { logger },
    );
    await expect(second.start()).rejects.toMatchObject({ code: 'TP_ERR_IO', message: expect.stringMatching(/metrics server cannot listen/) });
    await second.close();
  });

  it('survives a fetcher that rejects (counted as a connection error) and keeps polling the pair', async () => {
    fake = new FakeProvider();
    await fake.start();
    let calls = 0;
    service = createExternalQuoteService(
      defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: fake.url, pollInterval: 20, 'log.level': 'silent' }),
      {
        logger,
        fetcher: {
          fetchQuote: async () => {
            calls++;
            throw new Error('boom');
          },
        },
      },
    );
    endpoints = await service.start();
    const probe = open({ pairs: [SOL_USDC] });
    await eventually(() => calls >= 3, 'three polls');
    expect(probe.quotes[0]!.error).toMatchObject({ code: 'TP_ERR_EXTERNAL_UNREACHABLE', message: 'boom' });
  });
});
