import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';

import { GrpcStatus } from '../error-status.js';
import type { WirePairAmount } from '../quote/quote-wire.js';
import { FakeUpstream, SOL, USDC, eventually, makeQuote, startTestAggregator, type TestAggregator } from './testing.js';
import type { WireAggregatedQuote } from './wire-types.js';

/** Issue 11 item 1 on the aggregator: StreamAggregatedQuotes limits over real gRPC. */
const PAIR: WirePairAmount = { inputMint: SOL, outputMint: USDC, amount: '1000000000' };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function aggregator(overrides: object, load?: { overloaded: boolean }): Promise<TestAggregator> {
  const ups = [new FakeUpstream(), new FakeUpstream()];
  for (const u of ups) {
    u.respond = (p) => makeQuote(p, 100n, { poolAgeSeconds: 7200 });
    await u.start();
    cleanups.push(() => u.close());
  }
  const t = await startTestAggregator(ups[0]!, ups[1]!, overrides, load === undefined ? {} : { load });
  cleanups.push(() => t.close());
  return t;
}

/** Resolves 'data' at the first message, or with the error the call ended with; `items` counts messages. */
function open(t: TestAggregator, request: object, items?: WireAggregatedQuote[], metadata = new grpc.Metadata()): Promise<'data' | grpc.ServiceError> {
  const stream = t.client['StreamAggregatedQuotes'] as unknown as (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<WireAggregatedQuote>;
  const call = stream.call(t.client, request, metadata);
  cleanups.push(() => call.cancel());
  return new Promise((resolve) => {
    call.on('data', (q: WireAggregatedQuote) => {
      items?.push(q);
      resolve('data');
    });
    call.on('error', (e: grpc.ServiceError) => resolve(e));
  });
}

describe('StreamAggregatedQuotes limits', () => {
  it('refuses a client past its streams (RESOURCE_EXHAUSTED), and too short an interval or too many pairs (INVALID_ARGUMENT)', async () => {
    const t = await aggregator({ streamMaxStreamsPerClient: 2, streamMinInterval: 100, streamMaxPairsPerStream: 1 });
    const request = { pairs: [PAIR], updateIntervalMs: 60_000 };
    expect(await open(t, request)).toBe('data');
    expect(await open(t, request)).toBe('data');
    const third = (await open(t, request)) as grpc.ServiceError;
    expect(third.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(third.details).toBe('too many streams: 127.0.0.1 has 2 open, at most 2 per client (stream.maxStreamsPerClient)');
    const fast = (await open(t, { pairs: [PAIR], updateIntervalMs: 20 })) as grpc.ServiceError;
    expect(fast.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(fast.details).toBe('update_interval_ms: 20 is below the minimum of 100 ms (stream.minInterval)');
    const many = (await open(t, { pairs: [PAIR, { ...PAIR, amount: '7' }] })) as grpc.ServiceError;
    expect(many.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(many.details).toBe('pairs: 2 pairs, at most 1 per stream (stream.maxPairsPerStream)');
    expect(t.aggregator.stats().activeStreams).toBe(2);
  });

  it('keys clients by their verified JWT subject with auth on: two subjects behind one address each get their own streams', async () => {
    const secret = 'an-aggregator-limit-secret-of-32-bytes!';
    const t = await aggregator({ 'auth.mode': 'on', 'auth.jwtSecret': secret, streamMaxStreamsPerClient: 1 });
    const bearer = async (sub: string): Promise<grpc.Metadata> => {
      const token = await new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('10m').sign(new TextEncoder().encode(secret));
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${token}`);
      return md;
    };
    const request = { pairs: [PAIR], updateIntervalMs: 60_000 };
    expect(await open(t, request, undefined, await bearer('alice'))).toBe('data');
    expect(await open(t, request, undefined, await bearer('bob'))).toBe('data');
    const again = (await open(t, request, undefined, await bearer('alice'))) as grpc.ServiceError;
    expect(again.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(again.details).toBe('too many streams: sub:alice has 1 open, at most 1 per client (stream.maxStreamsPerClient)');
  });

  it('skips the interval re-sends while the process is overloaded, and resumes after', async () => {
    const load = { overloaded: false };
    const t = await aggregator({ streamMinInterval: 10 }, load);
    const items: WireAggregatedQuote[] = [];
    expect(await open(t, { pairs: [PAIR], updateIntervalMs: 20 }, items)).toBe('data');
    await eventually(() => expect(items.length).toBeGreaterThanOrEqual(5));
    load.overloaded = true;
    await eventually(() => expect(t.aggregator.core.shedHeartbeats).toBeGreaterThanOrEqual(2));
    const during = items.length;
    const shed = t.aggregator.core.shedHeartbeats;
    await eventually(() => expect(t.aggregator.core.shedHeartbeats).toBeGreaterThanOrEqual(shed + 10));
    // Nothing changed upstream: nothing sent while shedding (but a re-send already on the wire).
    expect(items.length).toBeLessThanOrEqual(during + 1);
    load.overloaded = false;
    await eventually(() => expect(items.length).toBeGreaterThan(during + 3));
  });
});
