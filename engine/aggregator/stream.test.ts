import type * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';

import type { WirePairAmount } from '../quote/quote-wire.js';
import { pairId } from './swap-route-event.js';
import { FakeUpstream, SOL, USDC, USDT, eventually, makeQuote, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';
import type { WireAggregatedQuote } from './wire-types.js';

const PAIR: WirePairAmount = { inputMint: SOL, outputMint: USDC, amount: '1000000000' };
const PAIR2: WirePairAmount = { inputMint: SOL, outputMint: USDT, amount: '5' };
const PAIR_ID = pairId(SOL, USDC, 1_000_000_000n);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function upstream(output: bigint): Promise<FakeUpstream> {
  const u = new FakeUpstream();
  u.respond = (p) => makeQuote(p, output, { poolAgeSeconds: 7200 });
  await u.start();
  cleanups.push(() => u.close());
  return u;
}

async function aggregatorOn(local: FakeUpstream, external: FakeUpstream, overrides = {}): Promise<TestAggregator> {
  const t = await startTestAggregator(local, external, overrides);
  cleanups.push(() => t.close());
  return t;
}

interface Stream {
  items: WireAggregatedQuote[];
  status: grpc.StatusObject | undefined;
  ended: boolean;
  error: grpc.ServiceError | undefined;
  call: grpc.ClientReadableStream<WireAggregatedQuote>;
}

function stream(t: TestAggregator, request: object): Stream {
  const call = (t.client['StreamAggregatedQuotes'] as unknown as (r: object) => grpc.ClientReadableStream<WireAggregatedQuote>)(request);
  const s: Stream = { items: [], status: undefined, ended: false, error: undefined, call };
  call.on('data', (q: WireAggregatedQuote) => s.items.push(q));
  call.on('status', (st: grpc.StatusObject) => (s.status = st));
  call.on('end', () => (s.ended = true));
  call.on('error', (e: grpc.ServiceError) => (s.error = e));
  cleanups.push(() => call.cancel());
  return s;
}

const withoutTimes = (q: WireAggregatedQuote) => ({ ...q, sequence: undefined });

describe('StreamAggregatedQuotes', () => {
  it('sends every client the same aggregated quote, each with its own per-pair sequence from 1', async () => {
    const local = await upstream(100n);
    const external = await upstream(101n);
    const t = await aggregatorOn(local, external);
    const request = { pairs: [PAIR], slippageBps: 50, updateIntervalMs: 60_000 };
    const clients = [stream(t, request), stream(t, request), stream(t, request)];
    await eventually(() => {
      for (const c of clients) expect(c.items.at(-1)?.sourceClass).toBe('SOURCE_CLASS_BOTH');
    });
    external.push(makeQuote(PAIR, 105n, { poolAgeSeconds: 7200 }));
    await eventually(() => {
      for (const c of clients) expect(c.items.at(-1)?.externalQuote?.outputAmount).toBe('105');
    });
    for (const c of clients) {
      expect(c.items.map((q) => Number(q.sequence))).toEqual(c.items.map((_, i) => i + 1));
      expect(c.items.at(-1)).toMatchObject({ pairId: PAIR_ID, bestSource: 'QUOTE_SOURCE_EXTERNAL', outputAmount: '105', minOutputAmount: String((105n * 9950n) / 10000n) });
    }
    // The late joiners may have missed the first update; the last ones are byte-for-byte the same body.
    expect(withoutTimes(clients[1]!.items.at(-1)!)).toEqual(withoutTimes(clients[0]!.items.at(-1)!));
    expect(withoutTimes(clients[2]!.items.at(-1)!)).toEqual(withoutTimes(clients[0]!.items.at(-1)!));
    expect(t.aggregator.stats().activeStreams).toBe(3);
  });

  it('does not push a duplicate (same route hash and output), and counts it', async () => {
    const local = await upstream(100n);
    const external = await upstream(101n);
    const t = await aggregatorOn(local, external);
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(() => expect(s.items.at(-1)?.sourceClass).toBe('SOURCE_CLASS_BOTH'));
    const before = s.items.length;
    local.push(makeQuote(PAIR, 100n, { poolAgeSeconds: 7200 }));
    await eventually(() => expect(t.aggregator.stats().duplicates.local).toBe(1));
    local.push(makeQuote(PAIR, 99n, { poolAgeSeconds: 7200 }));
    await eventually(() => expect(s.items.at(-1)?.localQuote?.outputAmount).toBe('99'));
    expect(s.items).toHaveLength(before + 1);
  });

  it('pushes at least every update_interval_ms while nothing changes', async () => {
    const t = await aggregatorOn(await upstream(100n), await upstream(100n));
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 20 });
    await eventually(() => expect(s.items.length).toBeGreaterThanOrEqual(4));
    expect(s.items.map((q) => Number(q.sequence)).slice(0, 4)).toEqual([1, 2, 3, 4]);
  });

  it('streams several pairs, each with its own sequence', async () => {
    const t = await aggregatorOn(await upstream(100n), await upstream(100n));
    const s = stream(t, { pairs: [PAIR, PAIR2, PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(() => expect(new Set(s.items.map((q) => q.pairId)).size).toBe(2));
    for (const id of new Set(s.items.map((q) => q.pairId))) {
      expect(s.items.filter((q) => q.pairId === id).map((q) => q.sequence)[0]).toBe('1');
    }
  });

  it('goes local-only while the external upstream is down, reports DEGRADED, and reconnects when it returns on the same port', async () => {
    const local = await upstream(100n);
    const external = await upstream(101n);
    const t = await aggregatorOn(local, external);
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(() => expect(s.items.at(-1)?.sourceClass).toBe('SOURCE_CLASS_BOTH'));
    await eventually(async () => expect((await unaryCall<{ status: string }>(t.client, 'Health', {})).status).toBe('SERVING_STATUS_SERVING'));

    external.kill();
    await eventually(() => expect(s.items.at(-1)?.sourceClass).toBe('SOURCE_CLASS_LOCAL_ONLY'));
    expect(s.items.at(-1)?.externalError?.code).toBe('TP_ERR_UNAVAILABLE');
    const degraded = await unaryCall<{ status: string; external: { healthy: boolean; state: string; errors: string; lastError: string } }>(t.client, 'Health', {});
    expect(degraded.status).toBe('SERVING_STATUS_DEGRADED');
    expect(degraded.external.healthy).toBe(false);
    expect(['UPSTREAM_STATE_RECONNECTING', 'UPSTREAM_STATE_CONNECTING']).toContain(degraded.external.state);
    expect(Number(degraded.external.errors)).toBeGreaterThanOrEqual(1);
    expect(degraded.external.lastError).not.toBe('');

    await external.restart();
    await eventually(() => expect(s.items.at(-1)?.sourceClass).toBe('SOURCE_CLASS_BOTH'));
    const healthy = await unaryCall<{ status: string; external: { reconnects: string; state: string } }>(t.client, 'Health', {});
    expect(healthy.status).toBe('SERVING_STATUS_SERVING');
    expect(healthy.external.state).toBe('UPSTREAM_STATE_STREAMING');
    expect(Number(healthy.external.reconnects)).toBeGreaterThanOrEqual(1);
  });

  it('before any pair is asked for, is SERVING while both upstream channels connect, DEGRADED without one', async () => {
    const local = await upstream(100n);
    const external = await upstream(100n);
    const t = await aggregatorOn(local, external);
    await eventually(async () => expect((await unaryCall<{ status: string }>(t.client, 'Health', {})).status).toBe('SERVING_STATUS_SERVING'));
    expect(local.requests).toHaveLength(0);
    external.kill();
    await eventually(async () => expect((await unaryCall<{ status: string }>(t.client, 'Health', {})).status).toBe('SERVING_STATUS_DEGRADED'));
  });

  it('reports NOT_SERVING when no upstream is healthy', async () => {
    const local = await upstream(100n);
    const external = await upstream(100n);
    const t = await aggregatorOn(local, external);
    local.kill();
    external.kill();
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(async () => expect((await unaryCall<{ status: string }>(t.client, 'Health', {})).status).toBe('SERVING_STATUS_NOT_SERVING'));
    expect(s.items).toHaveLength(0);
  });

  it.each([
    ['no pairs', { pairs: [], slippageBps: 0 }],
    ['more than 1,000 pairs', { pairs: Array.from({ length: 1001 }, (_, i) => ({ ...PAIR, amount: String(i + 1) })), slippageBps: 0 }],
    ['a zero amount', { pairs: [{ ...PAIR, amount: '0' }] }],
    ['a bad mint', { pairs: [{ ...PAIR, outputMint: 'xyz' }] }],
    ['slippage above 10,000 bps', { pairs: [PAIR], slippageBps: 20_000 }],
    ['an exact-out pair (the aggregator merges exact-in quotes only)', { pairs: [PAIR, { ...PAIR, swapMode: 'SWAP_MODE_EXACT_OUT' }] }, 'pairs[1].swap_mode'],
  ])('rejects %s with INVALID_ARGUMENT', async (_name, request, field?: string) => {
    const t = await aggregatorOn(await upstream(1n), await upstream(1n));
    const s = stream(t, request);
    await eventually(() => expect(s.error?.code).toBe(3));
    if (field !== undefined) expect(s.error?.details).toContain(field);
    expect(t.aggregator.stats().activeStreams).toBe(0);
  });

  it('close() ends every stream with OK, closes the publisher with the shutdown timeout and is idempotent', async () => {
    const t = await startTestAggregator(await upstream(100n), await upstream(100n), { shutdownTimeout: 1234 });
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(() => expect(s.items.length).toBeGreaterThan(0));
    await Promise.all([t.aggregator.close(), t.aggregator.close()]);
    await eventually(() => expect(s.status?.code).toBe(0));
    expect(t.publisher.closedWith).toBe(1234);
    expect(t.aggregator.stats().activeStreams).toBe(0);
    const pair = { pairId: PAIR_ID, inputMint: SOL, outputMint: USDC, amount: 1_000_000_000n };
    await expect(t.aggregator.core.getAggregatedQuote(pair, 0)).rejects.toMatchObject({ code: 'TP_ERR_UNAVAILABLE' });
    t.client.close();
  });

  it('forgets a stream the client cancels', async () => {
    const t = await aggregatorOn(await upstream(100n), await upstream(100n));
    const s = stream(t, { pairs: [PAIR], slippageBps: 0, updateIntervalMs: 60_000 });
    await eventually(() => expect(t.aggregator.stats().activeStreams).toBe(1));
    s.call.cancel();
    await eventually(() => expect(t.aggregator.stats().activeStreams).toBe(0));
  });
});
