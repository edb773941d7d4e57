import { existsSync } from 'node:fs';

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadTidepoolProto } from '../proto.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * The one-process engine's local upstream (StreamBatchQuotes on `localQuotes`) under the manual
 * simulator: a swap sent to the chain reaches the scanner, the scanner stores the new pool state in
 * the cache, and the stream pushes the new quote without waiting for its interval.
 */

const built = existsSync(PARSE_WORKER);
const ONE_SOL = 1_000_000_000n;

type StreamClient = grpc.Client & { StreamBatchQuotes: (request: unknown) => grpc.ClientReadableStream<UpstreamQuote> };

describe.skipIf(!built)('the engine\'s gRPC quote stream under the simulator', () => {
  let e: EngineUnderSim;
  let client: StreamClient;

  beforeAll(async () => {
    e = await startEngineUnderSim();
    await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'stream connected');
    const { QuoteService } = loadTidepoolProto();
    client = new QuoteService(e.endpoints.localQuotes, grpc.credentials.createInsecure()) as unknown as StreamClient;
  });

  afterAll(async () => {
    client?.close();
    await e?.close();
  });

  it('pushes a new quote for the pair when a swap on the chain changes its pool', async () => {
    expect(e.endpoints.localQuotes).toMatch(/^127\.0\.0\.1:[1-9][0-9]*$/);
    const quotes: UpstreamQuote[] = [];
    const call = client.StreamBatchQuotes({ pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: ONE_SOL.toString() }], updateIntervalMs: 600_000 });
    call.on('data', (q: UpstreamQuote) => quotes.push(q));
    call.on('error', () => undefined);
    try {
      const first = await eventually(() => quotes.find((q) => q.error === undefined || q.error === null), 10_000, 'a first quote');
      expect(first).toMatchObject({ origin: 'QUOTE_ORIGIN_CACHE', source: 'QUOTE_SOURCE_LOCAL', provider: 'tidepool' });
      const pool = first.route[0]!.pool;
      const count = quotes.length;

      // Sell SOL into the winning pool: its state, and so the pair's quote, changes.
      const chain = e.sim.chain;
      const info = chain.poolInfo(pool)!;
      const tx = swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === WSOL_MINT, exactIn: true, amount: 50n * ONE_SOL, threshold: 0n });
      chain.sendTransaction(tx);
      const swapSlot = chain.slot();
      chain.advanceSlot(1);

      const pushed = await eventually(() => quotes.slice(count).find((q) => BigInt(q.slot) >= swapSlot), 15_000, 'the pushed quote');
      expect(pushed.error ?? undefined).toBeUndefined();
      expect(pushed.origin).toBe('QUOTE_ORIGIN_CACHE');
      expect(BigInt(pushed.contextSlot)).toBeGreaterThanOrEqual(BigInt(pushed.slot));
      // The pool was loaded at start: it existed before the engine, so its age is not known yet.
      expect(pushed.route[0]!.poolAgeSeconds).toBeUndefined();
    } finally {
      call.cancel();
    }
  });
});
