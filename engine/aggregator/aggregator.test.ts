import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';

import type { WirePairAmount } from '../quote/quote-wire.js';
import { GET_AGGREGATED_QUOTE_TIMEOUT_MS } from './aggregator-config.js';
import { pairId } from './swap-route-event.js';
import {
  FakeUpstream,
  FixedOracle,
  SOL,
  USDC,
  eventually,
  makeErrorQuote,
  makeQuote,
  startTestAggregator,
  unaryCall,
  type TestAggregator,
} from './testing.js';
import type { WireAggregatedQuote } from './wire-types.js';

const PAIR_ID = pairId(SOL, USDC, 1_000_000_000n);
const REQUEST = { inputMint: SOL, outputMint: USDC, amount: '1000000000', slippageBps: 50 };
/** Another pair, asked first so that both upstreams have delivered (warm) before a timeout test. */
const WARM_UP = { inputMint: SOL, outputMint: USDC, amount: '7', slippageBps: 0 };

async function warmUp(t: TestAggregator): Promise<void> {
  const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', WARM_UP);
  expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function upstream(respond?: (p: WirePairAmount) => ReturnType<typeof makeQuote> | undefined): Promise<FakeUpstream> {
  const u = new FakeUpstream();
  if (respond) u.respond = respond;
  await u.start();
  cleanups.push(() => u.close());
  return u;
}

async function aggregatorOn(local: FakeUpstream | string, external: FakeUpstream | string, ...rest: Parameters<typeof startTestAggregator> extends [unknown, unknown, ...infer R] ? R : never): Promise<TestAggregator> {
  const t = await startTestAggregator(local, external, ...rest);
  cleanups.push(() => t.close());
  return t;
}

/** A port nothing listens on. */
async function deadAddress(): Promise<string> {
  const u = new FakeUpstream();
  await u.start();
  u.close();
  return u.address;
}

describe('GetAggregatedQuote', () => {
  it('merges both sources: class BOTH, the better quote best, price difference (ext − local) / local × 100', async () => {
    const local = await upstream((p) => makeQuote(p, 100_000_000n, { poolAgeSeconds: 7200 }));
    const external = await upstream((p) => makeQuote(p, 102_000_000n, { poolAgeSeconds: 7200 }));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
    expect(q.pairId).toBe(PAIR_ID);
    expect(q.bestSource).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(q.outputAmount).toBe('102000000');
    expect(q.minOutputAmount).toBe(String((102_000_000n * 9950n) / 10_000n));
    expect(q.priceDifferencePct).toBeCloseTo(2, 10);
    expect(q.localQuote?.source).toBe('QUOTE_SOURCE_LOCAL');
    expect(q.externalQuote?.source).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(q.localQuote?.routeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(q.localQuote?.receivedAtUnixMs)).toBeGreaterThan(0);
    expect(q.localError).toBeNull();
    expect(q.sequence).toBe('0');
    expect(t.aggregator.stats().requests).toMatchObject({ total: 1, full: 1 });
  });

  it('prefers the more trustworthy quote over a slightly larger one', async () => {
    const local = await upstream((p) => makeQuote(p, 100_000_000n, { poolAgeSeconds: 7200 }));
    // External is 1% larger but routes through a pool seen seconds ago: 0.3 × (1 − 0.2) less confidence.
    const external = await upstream((p) => makeQuote(p, 101_000_000n, { poolAgeSeconds: 0 }));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.bestSource).toBe('QUOTE_SOURCE_LOCAL');
    expect(q.confidence).toBe(q.localConfidence?.score);
    expect(q.localConfidence!.score).toBeGreaterThan(q.externalConfidence!.score);
  });

  it('scores the oracle factor against the oracle price source, and tracks the mints it is asked about', async () => {
    const oracle = new FixedOracle();
    oracle.setAtomPrice(SOL, USDC, 0.1); // quote: 100,000,000 / 1,000,000,000 = 0.1 exactly
    const local = await upstream((p) => makeQuote(p, 100_000_000n));
    const external = await upstream((p) => makeQuote(p, 102_500_000n)); // 2.5 % above the oracle
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 }, { oracle });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    const oracleOf = (c: WireAggregatedQuote['localConfidence']) => c!.factors.find((f) => f.kind === 'CONFIDENCE_FACTOR_KIND_ORACLE')!;
    expect(oracleOf(q.localConfidence)).toMatchObject({ inputKnown: true, score: 1 });
    expect(oracleOf(q.externalConfidence)).toMatchObject({ inputKnown: true, score: 0.5 });
    expect(oracleOf(q.externalConfidence).input).toBeCloseTo(0.025, 12);
    expect([...oracle.tracked].sort()).toEqual([SOL, USDC].sort());
  });

  it('with scoring off picks the larger output, confidence 0, decision Verify', async () => {
    const local = await upstream((p) => makeQuote(p, 100n, { hops: 4 }));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000, enableConfidenceScoring: false });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q).toMatchObject({ bestSource: 'QUOTE_SOURCE_LOCAL', confidence: 0, decision: 'DECISION_VERIFY' });
    expect(q.localConfidence).toMatchObject({ scoringEnabled: false, decision: 'DECISION_UNSPECIFIED', factors: [] });
    expect(t.aggregator.stats().averageConfidence).toBe(0);
  });

  it('answers local-only when the external upstream is down, external-only when the local one is', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const t = await aggregatorOn(local, await deadAddress(), { localTimeout: 1000, externalTimeout: 1000 });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.sourceClass).toBe('SOURCE_CLASS_LOCAL_ONLY');
    expect(q.externalQuote).toBeNull();
    expect(q.externalError?.code).toBe('TP_ERR_UNAVAILABLE');
    expect(q.externalError?.grpcStatus).toBe(14);

    const external = await upstream((p) => makeQuote(p, 100n));
    const t2 = await aggregatorOn(await deadAddress(), external, { localTimeout: 1000, externalTimeout: 1000 });
    const q2 = await unaryCall<WireAggregatedQuote>(t2.client, 'GetAggregatedQuote', REQUEST);
    expect(q2.sourceClass).toBe('SOURCE_CLASS_EXTERNAL_ONLY');
    expect(q2.bestSource).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(q2.localError?.code).toBe('TP_ERR_UNAVAILABLE');
  });

  it('leaves out a local upstream slower than -local-timeout (10 ms) with TP_ERR_DEADLINE and counts the timeout', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external, { externalTimeout: 1000 });
    await warmUp(t);
    local.delayMs = 400;
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.sourceClass).toBe('SOURCE_CLASS_EXTERNAL_ONLY');
    expect(q.localError).toMatchObject({ code: 'TP_ERR_DEADLINE', grpcStatus: 4 });
    expect(t.aggregator.stats().upstreams.local.timeouts).toBe(1);
    expect(t.aggregator.stats().requests.externalOnly).toBe(1);
  });

  it('leaves out an external upstream slower than -external-timeout (100 ms)', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external, { localTimeout: 1000 });
    await warmUp(t);
    external.delayMs = 1000;
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.sourceClass).toBe('SOURCE_CLASS_LOCAL_ONLY');
    expect(q.externalError).toMatchObject({ code: 'TP_ERR_DEADLINE', grpcStatus: 4 });
    expect(t.aggregator.stats().upstreams.external.timeouts).toBe(1);
    expect(t.aggregator.stats().requests.localOnly).toBe(1);
  });

  it('never waits past 150 ms, whatever the per-source timeouts say', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external, { localTimeout: 5000, externalTimeout: 5000 }, { unaryDeadlineMs: GET_AGGREGATED_QUOTE_TIMEOUT_MS });
    await warmUp(t);
    external.delayMs = 600; // inside its 5 s timeout, outside the call's 150 ms
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.sourceClass).toBe('SOURCE_CLASS_LOCAL_ONLY');
    expect(q.externalError).toMatchObject({ code: 'TP_ERR_DEADLINE', grpcStatus: 4 });
  });

  it('logs a price difference above 1% at info, once per pair within the throttle window', async () => {
    const lines: { msg: string; priceDifferencePct?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const local = await upstream((p) => makeQuote(p, 100_000n));
    const external = await upstream((p) => makeQuote(p, 98_000n));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 }, { logger });
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    const logged = lines.filter((l) => l.msg === 'local and external quotes differ by more than 1%');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.priceDifferencePct).toBeCloseTo(-2, 10);
  });

  it('fails with DEADLINE_EXCEEDED when neither source answers in time', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external);
    await warmUp(t);
    local.delayMs = 1000;
    external.delayMs = 1000;
    await expect(unaryCall(t.client, 'GetAggregatedQuote', REQUEST)).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    expect(t.aggregator.stats().requests.failed).toBe(1);
  });

  it('on a cold start waits for the upstream subscriptions within 150 ms, past the per-source timeout', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    local.delayMs = 40; // the first answer comes later than -local-timeout (10 ms), within 150 ms
    const t = await aggregatorOn(local, external, {}, { unaryDeadlineMs: GET_AGGREGATED_QUOTE_TIMEOUT_MS });
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(q.localQuote?.outputAmount).toBe('100');
    expect(q.localError ?? undefined).toBeUndefined();
  });

  it('on a cold start that outlasts 150 ms says UNAVAILABLE with the reason, not DEADLINE_EXCEEDED', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    local.delayMs = 1000;
    external.delayMs = 1000;
    const t = await aggregatorOn(local, external, {}, { unaryDeadlineMs: GET_AGGREGATED_QUOTE_TIMEOUT_MS });
    const err = (await unaryCall(t.client, 'GetAggregatedQuote', REQUEST).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
    expect(err.details).toMatch(/local upstream: subscription not warm yet: no quote since the aggregator started/);
  });

  it('fails with UNAVAILABLE when both upstreams are down', async () => {
    const t = await aggregatorOn(await deadAddress(), await deadAddress(), { localTimeout: 1000, externalTimeout: 1000 });
    await expect(unaryCall(t.client, 'GetAggregatedQuote', REQUEST)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('fails with NOT_FOUND when both upstreams report no route', async () => {
    const local = await upstream((p) => makeErrorQuote(p));
    const external = await upstream((p) => makeErrorQuote(p));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    await expect(unaryCall(t.client, 'GetAggregatedQuote', REQUEST)).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('answers from held quotes at once once the pair is subscribed', async () => {
    const local = await upstream((p) => makeQuote(p, 100n));
    const external = await upstream((p) => makeQuote(p, 99n));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    local.delayMs = 5000; // a new call would be late; the held quote must answer
    const again = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(again.sourceClass).toBe('SOURCE_CLASS_BOTH');
    expect(local.requests).toHaveLength(1);
  });

  it('reuses the quote it built while the held quotes are the same, and builds again when one changes', async () => {
    const local = await upstream((p) => makeQuote(p, 1_000_000n));
    const external = await upstream((p) => makeQuote(p, 990_000n));
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    const first = await eventually(async () => {
      const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
      expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
      return q;
    });
    const built = t.aggregator.stats().aggregations.both;
    const again = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
    expect(again).toEqual(first); // the same quote, aggregated_at included
    expect(t.aggregator.stats().aggregations.both).toBe(built);
    // Another slippage is another answer (its own minimum outputs), from the same held quotes.
    const wider = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', { ...REQUEST, slippageBps: 100 });
    expect(BigInt(wider.minOutputAmount)).toBeLessThan(BigInt(first.minOutputAmount));
    external.push(makeQuote({ inputMint: SOL, outputMint: USDC, amount: '1000000000' }, 1_500_000n));
    const changed = await eventually(async () => {
      const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', REQUEST);
      expect(q.externalQuote?.outputAmount).toBe('1500000');
      return q;
    });
    expect(changed.bestSource).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(t.aggregator.stats().requests.total).toBeGreaterThanOrEqual(4);
  });

  it('past 1,000 pairs, answers from the call that delivered before the whole set of calls has taken over', async () => {
    // The second call of each upstream (pairs 1,001–1,500) never answers: the set never takes over.
    const answer = (p: WirePairAmount): ReturnType<typeof makeQuote> | undefined => (BigInt(p.amount) <= 1000n ? makeQuote(p, 100n) : undefined);
    const local = await upstream(answer);
    const external = await upstream(answer);
    const t = await aggregatorOn(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    const { core } = t.aggregator;
    for (let i = 1; i <= 1500; i++) {
      const pair = { pairId: pairId(SOL, USDC, BigInt(i)), inputMint: SOL, outputMint: USDC, amount: BigInt(i) };
      core.upstreams.local.want(pair, true);
      core.upstreams.external.want(pair, true);
    }
    await eventually(() => {
      expect(core.tables.local.get(pairId(SOL, USDC, 5n))).toBeDefined();
      expect(core.tables.external.get(pairId(SOL, USDC, 5n))).toBeDefined();
    });
    expect(core.upstreams.local.status().state).toBe('UPSTREAM_STATE_CONNECTING');
    const q = await unaryCall<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', { ...REQUEST, amount: '5' });
    expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
    expect(core.upstreams.local.status().timeouts).toBe('0');
  });

  it.each([
    ['a bad mint', { ...REQUEST, inputMint: 'not-a-mint' }],
    ['a zero amount', { ...REQUEST, amount: '0' }],
    ['slippage above 10,000 bps', { ...REQUEST, slippageBps: 10_001 }],
    ['the same mint twice', { ...REQUEST, outputMint: SOL }],
  ])('rejects %s with INVALID_ARGUMENT', async (_name, request) => {
    const t = await aggregatorOn(await deadAddress(), await deadAddress());
    await expect(unaryCall(t.client, 'GetAggregatedQuote', request)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });
});
