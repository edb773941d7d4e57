import { afterEach, describe, expect, it } from 'vitest';

import type { WireQuote } from '../quote/quote-wire.js';
import { pairId } from './swap-route-event.js';
import { FakeUpstream, SOL, USDC, eventually, makeQuote, silentLogger } from './testing.js';
import { UpstreamClient, type UpstreamClientOptions } from './upstream-client.js';
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
    for (let i = 1; i <= 2500; i++) c.want(pair(i));
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
