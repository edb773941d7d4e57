import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';

import type { WirePairAmount, WireQuote } from '../quote/quote-wire.js';
import { RoutePublication, swapRouteEventFields } from './route-publication.js';
import { aggregate } from './aggregate.js';
import { encodeSwapRouteEvent, decodeSwapRouteEvent, pairId, routeHash } from './swap-route-event.js';
import { FakeUpstream, MemoryPublisher, SOL, USDC, eventually, makeQuote, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';
import type { PairKey } from './request-validation.js';
import { disabledRoutePublisher } from './disabled-publisher.js';

const PAIR_WIRE: WirePairAmount = { inputMint: SOL, outputMint: USDC, amount: '1000' };
const PAIR: PairKey = { pairId: pairId(SOL, USDC, 1000n), inputMint: SOL, outputMint: USDC, amount: 1000n };
const ON = { scoringEnabled: true, defaultProviderUptime: 0.95 };

function quote(out: bigint, o: Parameters<typeof makeQuote>[2] = {}): WireQuote {
  const q = makeQuote(PAIR_WIRE, out, { poolAgeSeconds: 7200, ...o });
  q.routeHash = routeHash(q.route);
  return q;
}

const agg = (local: WireQuote | undefined, external: WireQuote | undefined, now = 1) =>
  aggregate({ pair: PAIR, local: { quote: local }, external: { quote: external }, oracle: undefined, scoring: ON, now });

describe('route publication rule', () => {
  it('publishes a BOTH quote once per (best route hash, local output, external output)', () => {
    const publisher = new MemoryPublisher();
    const rule = new RoutePublication(publisher, pino({ level: 'silent' }));
    expect(rule.consider(agg(quote(1000n), quote(1010n)))).toBe(true);
    expect(rule.consider(agg(quote(1000n), quote(1010n), 2))).toBe(false); // re-aggregated, nothing changed
    expect(rule.consider(agg(quote(1000n), quote(1020n)))).toBe(true); // external output changed
    expect(rule.consider(agg(quote(1001n), quote(1020n)))).toBe(true); // local output changed
    expect(rule.consider(agg(quote(1001n), quote(1020n, { pool: 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ' })))).toBe(true); // best route changed
    expect(publisher.events).toHaveLength(4);
  });

  it('publishes nothing for local-only, external-only or Skip quotes', () => {
    const publisher = new MemoryPublisher();
    const rule = new RoutePublication(publisher, pino({ level: 'silent' }));
    expect(rule.consider(agg(quote(1000n), undefined))).toBe(false);
    expect(rule.consider(agg(undefined, quote(1000n)))).toBe(false);
    // Both sides score 0.29 (new pools 0.06, 4 hops 0.08, no oracle 0.15, uptime 0, impact 2% 0): Skip.
    const weak = { poolAgeSeconds: 0, hops: 4, providerUptime: 0, priceImpact: 0.02 };
    const skip = agg(quote(1000n, weak), quote(1010n, weak));
    expect(skip.decision).toBe('DECISION_SKIP');
    expect(rule.consider(skip)).toBe(false);
    expect(publisher.events).toHaveLength(0);
  });

  it('builds the event fields from the aggregated quote: best hops, both outputs, local slot, decision', () => {
    const a = agg(quote(1000n, { slot: '77' }), quote(1010n, { hops: 2, slot: '88', quotedAtUnixMs: 5000 }), 6000);
    const before = Date.now();
    const fields = swapRouteEventFields(a);
    // The schema: quoted_at = when the aggregated quote was made; created_at = when the event was built.
    expect(fields.createdAtMs).toBeGreaterThanOrEqual(before);
    expect(fields).toMatchObject({
      inputMint: SOL, outputMint: USDC, inputAmount: 1000n, localOutputAmount: 1000n, externalOutputAmount: 1010n,
      bestSource: a.bestSource === 'QUOTE_SOURCE_EXTERNAL' ? 'external' : 'local', slot: 77n, quotedAtMs: 6000,
      confidence: a.confidence, localConfidence: a.localConfidence!.score, externalConfidence: a.externalConfidence!.score,
    });
    expect(fields.hops).toHaveLength(a.route.length);
    const event = decodeSwapRouteEvent(encodeSwapRouteEvent(fields));
    expect(event.routeHash).toBe(a.routeHash);
    expect(event.estimatedProfit).toBe(10n);
    expect(event.pairId).toBe(PAIR.pairId);
  });

  it('the disabled publisher counts events as dropped', async () => {
    const p = disabledRoutePublisher();
    p.publish(swapRouteEventFields(agg(quote(1000n), quote(1010n))));
    expect(p.stats()).toEqual({ enabled: false, connected: false, published: 0, errors: 0, pending: 0, dropped: 1 });
    await p.close(10);
  });
});

describe('publication from a running aggregator', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  it('publishes exactly one event per change of a streamed BOTH pair', async () => {
    const local = new FakeUpstream();
    const external = new FakeUpstream();
    local.respond = (p) => makeQuote(p, 1000n, { poolAgeSeconds: 7200 });
    external.respond = (p) => makeQuote(p, 1010n, { poolAgeSeconds: 7200 });
    await local.start();
    await external.start();
    cleanups.push(() => local.close(), () => external.close());
    const t: TestAggregator = await startTestAggregator(local, external);
    cleanups.push(() => t.close());
    const call = (t.client['StreamAggregatedQuotes'] as unknown as (r: object) => { on(e: string, f: (x: unknown) => void): void; cancel(): void })({ pairs: [PAIR_WIRE], updateIntervalMs: 20 });
    call.on('error', () => undefined);
    cleanups.push(() => call.cancel());
    await eventually(() => expect(t.publisher.events).toHaveLength(1));
    expect(t.publisher.events[0]).toMatchObject({ localOutputAmount: 1000n, externalOutputAmount: 1010n, bestSource: 'external' });
    // Heartbeats and duplicates re-send nothing new.
    local.push(makeQuote(PAIR_WIRE, 1000n, { poolAgeSeconds: 7200 }));
    await eventually(() => expect(t.aggregator.stats().duplicates.local).toBe(1));
    external.push(makeQuote(PAIR_WIRE, 1020n, { poolAgeSeconds: 7200 }));
    await eventually(() => expect(t.publisher.events).toHaveLength(2));
    expect(t.publisher.events[1]!.externalOutputAmount).toBe(1020n);
    // A unary call on the same unchanged pair does not publish again.
    await unaryCall(t.client, 'GetAggregatedQuote', { ...PAIR_WIRE, slippageBps: 0 });
    expect(t.publisher.events).toHaveLength(2);
  });
});
