import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_AUTH_SETTINGS, createGrpcAuth } from '../auth/index.js';

import { PoolCache } from '../cache/index.js';
import { GrpcStatus } from '../error-status.js';
import { loadTidepoolProto } from '../proto.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { QuoteStreamServer } from './quote-stream-server.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import { QuoteBudget } from './stream-budget.js';
import { clientOfPeer, streamClientKey } from './stream-limits.js';
import { FakeClock, manualSimulator, quoteHttpServer, storePool } from '../quote/testing.js';

/**
 * Issue 11 item 1 over a real grpc-js server and client: per-client and global stream limits
 * (the client keyed by its verified JWT subject with auth on), pairs per stream, least interval,
 * the client's quote budget, and interval pushes shed under load.
 */
const sim = manualSimulator();
const { QuoteService } = loadTidepoolProto();
type Client = grpc.Client & { StreamBatchQuotes(request: unknown, metadata?: grpc.Metadata): grpc.ClientReadableStream<UpstreamQuote> };

let http: QuoteHttpServer;
const servers: QuoteStreamServer[] = [];
const clients: Client[] = [];
const calls: grpc.ClientReadableStream<UpstreamQuote>[] = [];

beforeAll(() => {
  const cache = new PoolCache({ stalenessThresholdMs: 3_600_000 });
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  http = quoteHttpServer({ cache, rateLimiter: false, clock: () => 0 });
});

afterEach(async () => {
  for (const c of calls.splice(0)) c.cancel();
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await http.close();
  await sim.close();
});

async function serve(options: Partial<ConstructorParameters<typeof QuoteStreamServer>[0]> = {}): Promise<{ server: QuoteStreamServer; client: Client }> {
  const server = new QuoteStreamServer({ engine: http.engine, shutdownTimeoutMs: 500, ...options });
  servers.push(server);
  const port = await server.start(0);
  const client = new QuoteService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Client;
  clients.push(client);
  return { server, client };
}

function pairs(n: number): { inputMint: string; outputMint: string; amount: string }[] {
  return Array.from({ length: n }, (_, i) => ({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: String(1_000_000 + i) }));
}

/** Opens a stream; resolves with its first quote, or the status it ended with. */
function open(client: Client, request: unknown, metadata?: grpc.Metadata): { call: grpc.ClientReadableStream<UpstreamQuote>; quotes: UpstreamQuote[]; outcome: Promise<'data' | grpc.ServiceError> } {
  const call = metadata === undefined ? client.StreamBatchQuotes(request) : client.StreamBatchQuotes(request, metadata);
  calls.push(call);
  const quotes: UpstreamQuote[] = [];
  const outcome = new Promise<'data' | grpc.ServiceError>((resolve) => {
    call.on('data', (q: UpstreamQuote) => {
      quotes.push(q);
      resolve('data');
    });
    call.on('error', (e: grpc.ServiceError) => resolve(e));
  });
  return { call, quotes, outcome };
}

async function eventually<T>(probe: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('stream admission', () => {
  it('refuses a client past its streams with RESOURCE_EXHAUSTED naming the setting, and admits again once one closes', async () => {
    const { server, client } = await serve({ limits: { maxStreamsPerClient: 2 } });
    const a = open(client, { pairs: pairs(1) });
    const b = open(client, { pairs: pairs(1) });
    expect(await a.outcome).toBe('data');
    expect(await b.outcome).toBe('data');
    const c = open(client, { pairs: pairs(1) });
    const refused = (await c.outcome) as grpc.ServiceError;
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(refused.details).toMatch(/^too many streams: 127\.0\.0\.1 has 2 open, at most 2 per client \(stream\.maxStreamsPerClient\)$/);
    expect(server.activeStreams).toBe(2);
    a.call.cancel();
    await eventually(() => (server.activeStreams === 1 ? true : undefined), 'the cancelled stream released');
    expect(await open(client, { pairs: pairs(1) }).outcome).toBe('data');
    expect(server.admission.streamsOf('127.0.0.1')).toBe(2);
  });

  it('refuses past the streams of the whole server', async () => {
    const { client } = await serve({ limits: { maxStreams: 1, maxStreamsPerClient: 10 } });
    expect(await open(client, { pairs: pairs(1) }).outcome).toBe('data');
    const refused = (await open(client, { pairs: pairs(1) }).outcome) as grpc.ServiceError;
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(refused.details).toBe('too many streams: 1 open, at most 1 (stream.maxStreams)');
  });

  it('refuses too many pairs and too short an interval with INVALID_ARGUMENT naming the limit', async () => {
    const { server, client } = await serve({ limits: { maxPairsPerStream: 10 } });
    const many = (await open(client, { pairs: pairs(11) }).outcome) as grpc.ServiceError;
    expect(many.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(many.details).toBe('pairs: 11 pairs, at most 10 per stream (stream.maxPairsPerStream)');
    const fast = (await open(client, { pairs: pairs(1), updateIntervalMs: 10 }).outcome) as grpc.ServiceError;
    expect(fast.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(fast.details).toBe('update_interval_ms: 10 is below the minimum of 100 ms (stream.minInterval)');
    expect(server.activeStreams).toBe(0);
    // 0 still means the default interval (1 s).
    expect(await open(client, { pairs: pairs(1), updateIntervalMs: 0 }).outcome).toBe('data');
  });

  it('keys clients by their verified JWT subject with auth on: two subjects behind one address each get their own streams', async () => {
    const secret = 'a-stream-limit-test-secret-of-32-bytes!';
    const auth = createGrpcAuth({ ...DEFAULT_AUTH_SETTINGS, 'auth.mode': 'on', 'auth.jwtSecret': secret }, '127.0.0.1');
    const { server, client } = await serve({ auth, limits: { maxStreamsPerClient: 1 } });
    const bearer = async (sub: string): Promise<grpc.Metadata> => {
      const token = await new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('10m').sign(new TextEncoder().encode(secret));
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${token}`);
      return md;
    };
    expect(await open(client, { pairs: pairs(1) }, await bearer('alice')).outcome).toBe('data');
    // Bob shares Alice's address, not her limit.
    expect(await open(client, { pairs: pairs(1) }, await bearer('bob')).outcome).toBe('data');
    // Alice's second stream, even with a fresh token, counts against her own limit.
    const again = (await open(client, { pairs: pairs(1) }, await bearer('alice')).outcome) as grpc.ServiceError;
    expect(again.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(again.details).toBe('too many streams: sub:alice has 1 open, at most 1 per client (stream.maxStreamsPerClient)');
    expect(server.admission.streamsOf('sub:alice')).toBe(1);
    expect(server.admission.streamsOf('sub:bob')).toBe(1);
    expect(server.admission.streamsOf('127.0.0.1')).toBe(0);
  });

  it('keys a client by its address without a subject, and a very long subject by its hash', () => {
    expect(streamClientKey('ipv4:10.1.2.3:5555', undefined)).toBe('10.1.2.3');
    expect(streamClientKey('ipv4:10.1.2.3:5555', '')).toBe('10.1.2.3');
    expect(streamClientKey('ipv4:10.1.2.3:5555', 'alice')).toBe('sub:alice');
    const long = streamClientKey('ipv4:10.1.2.3:5555', 'x'.repeat(10_000));
    expect(long).toMatch(/^sub:sha256:/);
    expect(long.length).toBeLessThan(64);
  });

  it('reads the client of a grpc-js peer without its port', () => {
    expect(clientOfPeer('ipv4:10.1.2.3:5555')).toBe('10.1.2.3');
    expect(clientOfPeer('127.0.0.1:41000')).toBe('127.0.0.1');
    expect(clientOfPeer('ipv6:[::1]:41000')).toBe('[::1]');
    expect(clientOfPeer('unix:/tmp/s')).toBe('unix:/tmp/s');
  });
});

describe('paced stream work and shedding', () => {
  it('sends every first quote of a 300-pair stream in slices, and sheds interval pushes while overloaded', async () => {
    const load = { overloaded: false };
    const { server, client } = await serve({ load, limits: { minIntervalMs: 50 } });
    const s = open(client, { pairs: pairs(300), updateIntervalMs: 50 });
    await eventually(() => (new Set(s.quotes.map((q) => q.pairId)).size === 300 ? true : undefined), 'a quote of each of the 300 pairs');
    expect(s.quotes.every((q) => q.error === undefined || q.error === null)).toBe(true);
    expect(server.pacer.saturatedTurns).toBeGreaterThan(0); // it did not all run in one turn
    // Interval pushes flow...
    await eventually(() => (s.quotes.length >= 600 ? true : undefined), 'interval pushes');
    // ...and stop while the process is overloaded: every due push is shed.
    load.overloaded = true;
    await eventually(() => (server.shedPushes >= 600 ? true : undefined), 'shed interval pushes');
    const during = s.quotes.length;
    await eventually(() => (server.shedPushes >= 1200 ? true : undefined), 'more shed pushes');
    // At most the pushes already flagged before the switch went out.
    expect(s.quotes.length - during).toBeLessThanOrEqual(300);
    load.overloaded = false;
    const after = s.quotes.length;
    await eventually(() => (s.quotes.length >= after + 300 ? true : undefined), 'interval pushes again');
  });
});

describe('the client quote budget', () => {
  it('bounds the quotes of all a client\'s streams together, serves every pair in turn, and coalesces what waits instead of queueing it', async () => {
    const clock = new FakeClock();
    // 100 quotes a second, burst 10, on a clock that only moves when the test moves it.
    const { server, client } = await serve({ budgetClock: clock.now, limits: { maxQuotesPerSecondPerClient: 100, minIntervalMs: 20 } });
    const a = open(client, { pairs: pairs(30), updateIntervalMs: 20 });
    const b = open(client, { pairs: pairs(30).map((p) => ({ ...p, amount: `${p.amount}0` })), updateIntervalMs: 20 });
    const budget = await eventually(() => server.admission.budgetOf('127.0.0.1'), 'the client budget');
    expect(budget.burst).toBe(10);
    // The burst is spent, by both streams together, and they wait.
    await eventually(() => (server.streamsAwaitingBudget === 2 && server.quotesSent === 10 ? true : undefined), 'both streams waiting after 10 quotes');
    // While they wait, their interval pushes come due again and again: merged into the pending ones.
    await eventually(() => (server.coalescedPushes >= 60 ? true : undefined), 'coalesced interval pushes');
    expect(server.quotesSent).toBe(10);
    // 50 ms of budget: 5 more quotes, not one more.
    clock.advance(50);
    await eventually(() => (server.quotesSent === 15 && server.streamsAwaitingBudget === 2 ? true : undefined), '5 more quotes');
    // Ten seconds of budget is still the burst: what waited was coalesced, not queued.
    clock.advance(10_000);
    await eventually(() => (server.quotesSent === 25 && server.streamsAwaitingBudget === 2 ? true : undefined), 'one burst more');
    // Every pair gets its turn: keep refilling until both streams have a quote of each of their pairs.
    await eventually(() => {
      if (new Set(a.quotes.map((q) => q.pairId)).size === 30 && new Set(b.quotes.map((q) => q.pairId)).size === 30) return true;
      if (server.streamsAwaitingBudget === 2) clock.advance(100);
      return undefined;
    }, 'a quote of every pair of both streams');
  });

  it('refills at its rate up to its burst', () => {
    const clock = new FakeClock();
    const budget = new QuoteBudget(1_000, clock.now);
    expect(budget.available()).toBe(100);
    budget.spend(100);
    expect(budget.available()).toBe(0);
    expect(budget.msUntil(10)).toBe(10);
    clock.advance(10);
    expect(budget.available()).toBe(10);
    clock.advance(60_000);
    expect(budget.available()).toBe(100);
    expect(budget.msUntil(1_000)).toBe(0); // capped at the burst, which is there
  });
});
