import { afterEach, describe, expect, it } from 'vitest';

import type { WireQuote } from '../quote/quote-wire.js';
import { pairId } from './swap-route-event.js';
import { FakeUpstream, SOL, USDC, eventually, makeQuote, silentLogger } from './testing.js';
import { MAX_UNARY_PAIRS, UpstreamClient, type UpstreamClientOptions } from './upstream-client.js';
import type { PairKey } from './request-validation.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function pair(amount: number): PairKey {
  return { pairId: pairId(SOL, USDC, BigInt(amount)), inputMint: SOL, outputMint: USDC, amount: BigInt(amount) };
}

async function fake(): Promise<FakeUpstream> {
  const u = new FakeUpstream();
  u.respond = (p) => makeQuote(p, BigInt(p.amount) * 2n, { quotedAtUnixMs: Date.now() - 3 });
  await u.start();
  cleanups.push(() => u.close());
  return u;
}

function client(u: FakeUpstream, more: Partial<UpstreamClientOptions> = {}): { c: UpstreamClient; quotes: WireQuote[] } {
  const quotes: WireQuote[] = [];
  const c = new UpstreamClient({
    source: 'QUOTE_SOURCE_EXTERNAL',
    address: u.address,
    timeoutMs: 100,
    updateIntervalMs: 1000,
    staleAfterMs: 3000,
    logger: silentLogger(),
    onQuote: (q) => quotes.push(q),
    backoffInitialMs: 20,
    backoffMaxMs: 100,
    ...more,
  });
  cleanups.push(() => c.close());
  return { c, quotes };
}

describe('UpstreamClient', () => {
  it('coalesces the pairs wanted in one tick into one StreamBatchQuotes call, asked at slippage 0', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(1));
    c.want(pair(2));
    c.want(pair(3));
    await eventually(() => expect(quotes).toHaveLength(3));
    expect(u.requests).toHaveLength(1);
    expect(u.requests[0]).toMatchObject({ slippageBps: 0, updateIntervalMs: 1000 });
    expect(u.requests[0]!.pairs.map((p) => p.amount)).toEqual(['1', '2', '3']);
    expect(c.openCalls).toBe(1);
  });

  it('normalises each quote: source of the connection, receipt time, route hash; counts latency', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(5));
    await eventually(() => expect(quotes).toHaveLength(1));
    const q = quotes[0]!;
    expect(q.source).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(Number(q.receivedAtUnixMs)).toBeGreaterThan(0);
    expect(q.routeHash).toMatch(/^[0-9a-f]{64}$/);
    const status = c.status();
    expect(status).toMatchObject({ state: 'UPSTREAM_STATE_STREAMING', healthy: true, quotesReceived: '1', source: 'QUOTE_SOURCE_EXTERNAL', timeoutMs: 100 });
    expect(status.lastLatencyMs).toBeGreaterThanOrEqual(3);
    expect(Number(status.connectedSinceUnixMs)).toBeGreaterThan(0);
  });

  it('adds pairs make-before-break: a new call with the union, the old one cancelled once the new one delivers', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(1), true);
    await eventually(() => expect(quotes).toHaveLength(1));
    c.want(pair(2), true);
    await eventually(() => expect(u.requests).toHaveLength(2));
    expect(u.requests[1]!.pairs.map((p) => p.amount)).toEqual(['2', '1']); // the added pair first
    await eventually(() => expect(u.calls.size).toBe(1));
    expect(c.openCalls).toBe(1);
    expect(c.status().state).toBe('UPSTREAM_STATE_STREAMING');
    expect(c.status().reconnects).toBe('0');
  });

  it('keeps the old call when the new one fails before delivering', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(1), true);
    await eventually(() => expect(quotes).toHaveLength(1));
    u.respond = () => undefined; // the new call never delivers
    c.want(pair(2), true);
    await eventually(() => expect(u.calls.size).toBe(2));
    for (const call of u.calls) if (call.request.pairs.length === 2) call.emit('error', { code: 13, details: 'boom' });
    await eventually(() => expect(c.status().errors).toBe('1'));
    expect(c.status().state).toBe('UPSTREAM_STATE_STREAMING');
    u.push(makeQuote({ inputMint: SOL, outputMint: USDC, amount: '1' }, 7n));
    await eventually(() => expect(quotes.at(-1)?.outputAmount).toBe('7'));
  });

  it('shards past 1,000 pairs: one call per 1,000', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    for (let i = 1; i <= 2500; i++) c.want(pair(i), true); // held by streams: the unary-only cap does not apply
    await eventually(() => expect(quotes.length).toBe(2500));
    expect(u.requests.map((r) => r.pairs.length).sort((a, b) => a - b)).toEqual([500, 1000, 1000]);
    expect(c.openCalls).toBe(3);
  });

  it('drops pairs idle for the idle window at the next resubscribe, never ones a stream holds', async () => {
    let now = 1_000_000;
    const u = await fake();
    const { c, quotes } = client(u, { now: () => now, idleDropMs: 5 * 60_000 });
    c.want(pair(1)); // unary interest only
    c.want(pair(2), true); // held by a stream
    await eventually(() => expect(quotes).toHaveLength(2));
    now += 5 * 60_000 + 1;
    c.want(pair(3));
    await eventually(() => expect(u.requests).toHaveLength(2));
    expect(u.requests[1]!.pairs.map((p) => p.amount)).toEqual(['3', '2']);
    expect(c.pairCount).toBe(2);
  });

  it('drops idle pairs on its own once a while, keeping the held ones streaming', async () => {
    let now = 1_000_000;
    const u = await fake();
    const { c, quotes } = client(u, { now: () => now, idleDropMs: 1000, idleSweepMs: 10 });
    c.start();
    c.want(pair(1));
    c.want(pair(2), true);
    await eventually(() => expect(quotes).toHaveLength(2));
    expect(u.requests).toHaveLength(1);
    now += 1001;
    await eventually(() => expect(u.requests).toHaveLength(2));
    expect(u.requests[1]!.pairs.map((p) => p.amount)).toEqual(['2']);
    await eventually(() => expect(u.calls.size).toBe(1));
    expect(c.pairCount).toBe(1);
  });

  it('reconnects with backoff after the upstream dies, with the full set, and resets the backoff', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(1), true);
    c.want(pair(2), true);
    await eventually(() => expect(quotes).toHaveLength(2));
    u.kill();
    await eventually(() => expect(c.status().state).toBe('UPSTREAM_STATE_RECONNECTING'));
    expect(c.isDown()).toBe(true);
    expect(c.isHealthy()).toBe(false);
    expect(c.status().lastError).toMatch(/UNAVAILABLE|CANCELLED|ended/);
    await u.restart();
    await eventually(() => expect(c.status().state).toBe('UPSTREAM_STATE_STREAMING'), 10_000);
    const s = c.status();
    expect(Number(s.reconnects)).toBeGreaterThanOrEqual(1);
    expect(s.backoffMs).toBe(0);
    expect(u.requests.at(-1)!.pairs.map((p) => p.amount)).toEqual(['1', '2']);
    expect(quotes.length).toBeGreaterThanOrEqual(4);
  });

  it('is unhealthy once its last quote is older than the staleness window', async () => {
    let now = Date.now();
    const u = await fake();
    const { c, quotes } = client(u, { now: () => now });
    c.want(pair(1), true);
    await eventually(() => expect(quotes).toHaveLength(1));
    expect(c.isHealthy()).toBe(true);
    now += 3001;
    expect(c.isHealthy()).toBe(false);
  });

  /** Wants a new unary pair every `everyMs` until stopped; returns how many were wanted so far. */
  function newPairs(c: UpstreamClient, from: number, everyMs: number): { count(): number; stop(): void } {
    let next = from;
    const timer = setInterval(() => c.want(pair(next++)), everyMs);
    cleanups.push(() => clearInterval(timer));
    return { count: () => next - from, stop: () => clearInterval(timer) };
  }

  it('cold start under a steady stream of new pairs: the pending set is not cancelled, it takes over and the pairs get quotes', async () => {
    const u = await fake();
    u.delayMs = 10; // every call answers 10 ms after it opens; a new pair comes every 2 ms
    const { c, quotes } = client(u);
    const adder = newPairs(c, 1, 2);
    // While pairs keep arriving: the upstream streams and the early pairs have their quotes.
    await eventually(() => {
      expect(c.status().state).toBe('UPSTREAM_STATE_STREAMING');
      const got = new Set(quotes.map((q) => q.pairId));
      for (let i = 1; i <= 20; i++) expect(got.has(pair(i).pairId)).toBe(true);
    });
    expect(adder.count()).toBeGreaterThan(20);
    adder.stop();
    const wanted = adder.count();
    await eventually(() => {
      const got = new Set(quotes.map((q) => q.pairId));
      for (let i = 1; i <= wanted; i++) expect(got.has(pair(i).pairId)).toBe(true);
    });
    expect(u.unansweredCancels).toBe(0); // no set was cancelled before it delivered
    expect(u.requests.length).toBeLessThan(wanted / 2); // additions coalesced while a set was opening
    await eventually(() => expect(c.openCalls).toBe(1));
  });

  it('streaming under a steady stream of new pairs: the new pairs get quotes, new pairs first in each request', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(100_000), true);
    await eventually(() => expect(quotes).toHaveLength(1));
    u.delayMs = 10;
    const adder = newPairs(c, 1, 2);
    await eventually(() => {
      const got = new Set(quotes.map((q) => q.pairId));
      for (let i = 1; i <= 20; i++) expect(got.has(pair(i).pairId)).toBe(true);
    });
    adder.stop();
    expect(c.status().state).toBe('UPSTREAM_STATE_STREAMING');
    expect(c.status().reconnects).toBe('0');
    expect(u.unansweredCancels).toBe(0);
    expect(u.requests.length).toBeLessThan(adder.count() / 2);
    // Every request after the first lists the pairs its predecessor lacked first.
    for (let r = 1; r < u.requests.length; r++) {
      const before = new Set(u.requests[r - 1]!.pairs.map((p) => p.amount));
      const amounts = u.requests[r]!.pairs.map((p) => p.amount);
      const firstKnown = amounts.findIndex((a) => before.has(a));
      if (firstKnown >= 0) expect(amounts.slice(firstKnown).every((a) => before.has(a))).toBe(true);
    }
  });

  it('replaces a new set only once it has stalled: no delivery within the stall bound', async () => {
    let now = 1_000_000;
    const u = await fake();
    u.respond = () => undefined; // the upstream accepts the call and never answers
    const { c } = client(u, { now: () => now, pendingStallMs: 1000 });
    c.want(pair(1));
    await eventually(() => expect(u.requests).toHaveLength(1));
    c.want(pair(2));
    await new Promise((r) => setTimeout(r, 30));
    expect(u.requests).toHaveLength(1); // deferred behind the pending set
    now += 1001;
    c.want(pair(3));
    await eventually(() => expect(u.requests).toHaveLength(2));
    expect(u.requests[1]!.pairs.map((p) => p.amount)).toEqual(['1', '2', '3']);
    await eventually(() => expect(u.calls.size).toBe(1));
  });

  it('keeps at most the cap of pairs no stream holds, dropping the least recently wanted; held pairs stay', async () => {
    expect(MAX_UNARY_PAIRS).toBe(1000);
    let now = 1_000_000;
    const u = await fake();
    const { c, quotes } = client(u, { now: () => now, maxUnaryPairs: 2 });
    c.want(pair(1), true); // held by a stream, and the least recently wanted of all
    c.want(pair(2));
    now++;
    c.want(pair(3));
    await eventually(() => expect(quotes).toHaveLength(3));
    now++;
    c.want(pair(2)); // 3 is now the least recently wanted unary pair
    now++;
    c.want(pair(4)); // three unary pairs: 3 is left out at this resubscribe
    await eventually(() => expect(u.requests).toHaveLength(2));
    expect(u.requests[1]!.pairs.map((p) => p.amount)).toEqual(['4', '1', '2']);
    expect(c.pairCount).toBe(3);
    await eventually(() => expect(u.calls.size).toBe(1));
    expect(c.isSubscribed(pair(3).pairId)).toBe(false);
    expect(c.isSubscribed(pair(1).pairId)).toBe(true);
  });

  it("recomputes each quote's pair_id from its mints and amount, and drops quotes for pairs not subscribed", async () => {
    const u = await fake();
    // The upstream labels pair 1's quote with pair 2's id.
    u.respond = (p) => ({ ...makeQuote(p, BigInt(p.amount) * 2n), pairId: p.amount === '1' ? pair(2).pairId : p.amount === '2' ? 'ffffffffffffffff' : pair(1).pairId });
    const { c, quotes } = client(u);
    c.want(pair(1), true);
    c.want(pair(2), true);
    await eventually(() => expect(quotes).toHaveLength(2));
    expect(quotes.map((q) => [q.inputAmount, q.pairId]).sort()).toEqual([
      ['1', pair(1).pairId],
      ['2', pair(2).pairId],
    ]);
    // A quote for a pair nobody asked for, labelled as a subscribed one: dropped, counted as an error.
    u.push({ ...makeQuote({ inputMint: SOL, outputMint: USDC, amount: '99' }, 5n), pairId: pair(1).pairId });
    // A quote whose amount is no u64 at all: dropped too.
    u.push({ ...makeQuote({ inputMint: SOL, outputMint: USDC, amount: '1' }, 5n), inputAmount: 'x' });
    await eventually(() => expect(c.status().errors).toBe('2'));
    expect(c.status().lastError).toMatch(/not subscribed/);
    u.push(makeQuote({ inputMint: SOL, outputMint: USDC, amount: '1' }, 7n));
    await eventually(() => expect(quotes).toHaveLength(3));
    expect(quotes.at(-1)).toMatchObject({ pairId: pair(1).pairId, outputAmount: '7' });
    expect(c.status().quotesReceived).toBe('3');
  });

  it('past 1,000 pairs, a pair is usable once its own call delivers, before the whole set takes over', async () => {
    const u = await fake();
    u.respond = (p) => (Number(p.amount) <= 1000 ? makeQuote(p, 1n) : undefined); // the second call stays silent
    const { c, quotes } = client(u);
    for (let i = 1; i <= 1500; i++) c.want(pair(i), true);
    await eventually(() => expect(quotes).toHaveLength(1000));
    expect(c.status().state).toBe('UPSTREAM_STATE_CONNECTING');
    expect(c.isConnected()).toBe(false);
    expect(c.isConnected(pair(5).pairId)).toBe(true);
    expect(c.isConnected(pair(1200).pairId)).toBe(false);
    expect(c.isConnected(pair(99_999).pairId)).toBe(false);
  });

  it('close() cancels the calls and is idempotent', async () => {
    const u = await fake();
    const { c, quotes } = client(u);
    c.want(pair(1), true);
    await eventually(() => expect(quotes).toHaveLength(1));
    c.close();
    c.close();
    await eventually(() => expect(u.calls.size).toBe(0));
  });
});
