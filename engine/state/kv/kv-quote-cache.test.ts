import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../../cache/index.js';
import { SwapMode } from '../../dex/index.js';
import type { QuoteEngineOptions, QuoteRequest, QuoteResult } from '../../quote/index.js';
import { PoolDirectory, QuoteEngine } from '../../quote/index.js';
import type { QuoteHttpServer } from '../../quote-http/quote-http-server.js';
import { CountingLoader, FakeClock, manualSimulator, quoteHttpServer, storePool } from '../../quote/testing.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/index.js';
import { KeySpace } from './key-space.js';
import type { KvStore } from './kv-store.js';
import { KvQuoteCache } from './kv-quote-cache.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import { TEST_REDIS_URL, testPrefix } from './testing.js';

/**
 * The quote engine's shared quote cache over the real Redis (a random key prefix), with real quote
 * engines over real HTTP: a writer whose pool cache holds the simulator's pools, and a replica with
 * an empty cache whose RPC fallback reads the same simulator (failing on demand).
 */

const sim = manualSimulator(23);
const chain = sim.chain;
let rpcUrl = '';
const prefix = testPrefix();
const stores: KvStore[] = [];
const servers: QuoteHttpServer[] = [];

async function redisKeys(): Promise<KeySpace> {
  const store = await RedisStore.connect({ url: TEST_REDIS_URL });
  stores.push(store);
  return new KeySpace(store, prefix);
}

beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  const cleanup = await RedisStore.connect({ url: TEST_REDIS_URL });
  for (const key of await cleanup.keys(prefix)) await cleanup.del(key);
  await cleanup.close();
  await Promise.all(stores.map((s) => s.close()));
  await sim.close();
});

function request(amount: bigint, over: Partial<QuoteRequest> = {}): QuoteRequest {
  return { inputMint: WSOL_MINT, outputMint: USDC_MINT, mode: SwapMode.ExactIn, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps: 50, ...over };
}

/** Every simulator pool, as a replica learns them from the bus before it has their state. */
function knownPools(): PoolDirectory {
  const directory = new PoolDirectory();
  for (const view of chain.pools()) directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
  return directory;
}

/**
 * A quote server whose engine's pool cache holds every simulator pool (fresh), or none (a replica:
 * its RPC fallback knows the pools, its cache holds no state).
 */
async function server(options: Partial<QuoteEngineOptions> & { fill: boolean }): Promise<{ server: QuoteHttpServer; base: string; loader: CountingLoader }> {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  if (options.fill) for (const view of chain.pools()) storePool(cache, view, chain.slot());
  const loader = new CountingLoader(rpcUrl, 2_000);
  const s = quoteHttpServer({ rateLimiter: false, ...(options.fill ? {} : { directory: knownPools() }), ...options, cache, loader });
  servers.push(s);
  return { server: s, base: `http://127.0.0.1:${await s.start(0)}`, loader };
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: JSON.parse(await res.text()) as Record<string, unknown> };
}

const quotePath = (amount: bigint): string => `/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}`;

describe('shared quote cache over Redis', () => {
  it('a quote writes quote: and price: keys off the quote path, in one batch per flush', async () => {
    const keys = await redisKeys();
    const shared = new KvQuoteCache(keys, { flushIntervalMs: 60_000 });
    const { server: s, base } = await server({ fill: true, sharedCache: shared });

    // The answer is given synchronously, before anything is written.
    const direct = s.engine.quote(request(2_000_000n));
    expect(direct instanceof Promise).toBe(false);
    expect((direct as QuoteResult).ok).toBe(true);
    expect(shared.writer.stats()).toMatchObject({ pending: 1, flushes: 0, written: 0 });
    expect(await keys.getQuoteText(WSOL_MINT, USDC_MINT, 2_000_000n)).toBeNull();

    // Repeats of one quote coalesce: one pending route, one quote key.
    const answers: Record<string, unknown>[] = [];
    for (let i = 0; i < 20; i++) answers.push((await getJson(base + quotePath(1_000_000n))).body);
    await getJson(base + quotePath(3_000_000n));
    expect(answers[0]).toMatchObject({ source: 'cache' });
    expect(shared.writer.stats()).toMatchObject({ pending: 3, flushes: 0 });

    await shared.writer.flush();
    const stats = shared.writer.stats();
    expect(stats.flushes).toBe(1);
    expect(stats.pending).toBe(0);
    expect(stats.errors).toBe(0);

    const stored = JSON.parse((await keys.getQuoteText(WSOL_MINT, USDC_MINT, 1_000_000n))!) as Record<string, unknown>;
    const { stateAgeMs: _age, ...answerFields } = answers[0]!;
    expect(stored).toMatchObject(answerFields);
    expect(typeof stored.cachedAt).toBe('number');
    const hops = answers[0]!.route as { dex: string; inAmount: string; outAmount: string; outputMint: string }[];
    expect((stored.route as { slot: string }[])[0]!.slot).toBe(answers[0]!.slot);
    const ttl = await keys.store.pttl(keys.quoteKey(WSOL_MINT, USDC_MINT, 1_000_000n));
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(300_000);

    // One price: key per hop (the last quote of the pair through that DEX wins).
    const price = await keys.getPrice(WSOL_MINT, hops[0]!.dex);
    expect(price).not.toBeNull();
    expect(price!.quoteMint).toBe(USDC_MINT);
    expect(price!.price).toBeGreaterThan(0);
    expect(await keys.store.pttl(keys.priceKey(WSOL_MINT, hops[0]!.dex))).toBeGreaterThan(290_000);
    expect(await keys.getQuoteText(WSOL_MINT, USDC_MINT, 3_000_000n)).not.toBeNull();
    await shared.close();
  });

  it('the timer flushes on its own', async () => {
    const keys = await redisKeys();
    const shared = new KvQuoteCache(keys, { flushIntervalMs: 5 });
    const { base } = await server({ fill: true, sharedCache: shared });
    expect((await getJson(base + quotePath(4_000_000n))).status).toBe(200);
    while ((await keys.getQuoteText(WSOL_MINT, USDC_MINT, 4_000_000n)) === null) await new Promise((r) => setTimeout(r, 5));
    expect(shared.writer.stats().flushes).toBeGreaterThanOrEqual(1);
    await shared.close();
  });

  it('a replica with an empty cache and its RPC failing answers from quote:, labelled shared', async () => {
    const writerCache = new KvQuoteCache(await redisKeys(), { flushIntervalMs: 60_000 });
    const writer = await server({ fill: true, sharedCache: writerCache });
    const written = (await getJson(writer.base + quotePath(5_000_000n))).body;
    await writerCache.writer.flush();

    const clock = new FakeClock(Date.now());
    // A generous read budget: the test is about what is read, not how fast (the budget has its own test).
    const replicaCache = new KvQuoteCache(await redisKeys(), { now: clock.now, readTimeoutMs: 5_000 });
    const replica = await server({ fill: false, sharedCache: replicaCache });
    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      clock.advance(1_500);
      const { status, body } = await getJson(replica.base + quotePath(5_000_000n) + '&slippageBps=100');
      expect(status).toBe(200);
      expect(body).toMatchObject({
        source: 'shared',
        inputAmount: '5000000',
        outputAmount: written.outputAmount,
        pool: written.pool,
        route: written.route,
        slot: written.slot,
        slippageBps: 100,
      });
      // The age counts the time since the writer answered.
      expect(body.stateAgeMs).toBeGreaterThanOrEqual(1_500);
      expect(replica.loader.calls).toBe(0);
      expect(replicaCache.stats()).toMatchObject({ used: 1, reader: { hits: 1 } });

      // Nothing stored for this amount: the RPC fallback runs, and fails.
      const missing = await getJson(replica.base + quotePath(6_000_000n));
      expect(missing.status).toBe(503);
      expect(replica.loader.calls).toBe(1);

      // Stored, but older than the request accepts: not used, RPC again.
      clock.advance(30_000);
      expect((await getJson(replica.base + quotePath(5_000_000n))).status).toBe(503);
      expect(replicaCache.stats().refused).toBe(1);
      expect(replica.loader.calls).toBe(2);
    } finally {
      sim.faults.clear();
    }
    // RPC back: the replica quotes from RPC, and writes that answer for the others.
    const fromRpc = await getJson(replica.base + quotePath(6_000_000n));
    expect(fromRpc.body.source).toBe('rpc');
    await replicaCache.writer.flush();
    expect(await replicaCache.keys.getQuoteText(WSOL_MINT, USDC_MINT, 6_000_000n)).toContain('"source":"rpc"');
    await writerCache.close();
    await replicaCache.close();
  });

  it('exact-out and filtered quotes are neither written nor read (the key names neither)', async () => {
    const keys = await redisKeys();
    const shared = new KvQuoteCache(keys, { flushIntervalMs: 60_000 });
    const { server: s } = await server({ fill: true, sharedCache: shared });
    expect((s.engine.quote(request(7_000_000n, { mode: SwapMode.ExactOut })) as QuoteResult).ok).toBe(true);
    expect(shared.writer.stats().pending).toBe(0);
    const filtered = request(7_000_000n, { routeFilter: { dexes: undefined, excludeDexes: undefined, onlyDirectRoutes: true } });
    s.engine.quote(filtered);
    expect(shared.writer.stats().pending).toBe(0);
    expect(await shared.lookup(filtered, 60_000)).toBeNull();
    await shared.close();
  });
});

describe('shared quote cache when Redis fails', () => {
  it('a Redis that is down: cache answers stay synchronous, writes are counted drops, the replica goes to RPC', async () => {
    const dead = await RedisStore.connect({ url: TEST_REDIS_URL });
    await dead.close();
    const shared = new KvQuoteCache(new KeySpace(dead, prefix), { flushIntervalMs: 1 });
    const { server: s, base } = await server({ fill: true, sharedCache: shared });
    for (let i = 0; i < 5; i++) {
      const r = s.engine.quote(request(BigInt(8_000_000 + i)));
      expect(r instanceof Promise).toBe(false);
      expect((r as QuoteResult).ok).toBe(true);
    }
    expect((await getJson(base + quotePath(8_000_000n))).status).toBe(200);
    await shared.writer.flush();
    expect(shared.writer.stats()).toMatchObject({ written: 0, pending: 0 });
    expect(shared.writer.stats().errors).toBeGreaterThanOrEqual(1);
    expect(shared.writer.stats().dropped).toBeGreaterThanOrEqual(5);

    const replicaCache = new KvQuoteCache(new KeySpace(dead, prefix), { read: true });
    const replica = await server({ fill: false, sharedCache: replicaCache });
    const { status, body } = await getJson(replica.base + quotePath(8_000_000n));
    expect(status).toBe(200);
    expect(body.source).toBe('rpc');
    expect(replicaCache.stats().reader.errors).toBe(1);
    await shared.close();
  });

  it('a Redis that hangs: the read gives up within its budget and RPC answers', async () => {
    const hung: Partial<KvStore> = { kind: 'redis', get: () => new Promise<string | null>(() => undefined) };
    const replicaCache = new KvQuoteCache(new KeySpace(hung as KvStore, prefix), { readTimeoutMs: 10 });
    const replica = await server({ fill: false, sharedCache: replicaCache });
    const { status, body } = await getJson(replica.base + quotePath(9_000_000n));
    expect(status).toBe(200);
    expect(body.source).toBe('rpc');
    expect(replicaCache.stats().reader.errors).toBe(1);
  });

  it('over the in-process store it writes but never reads back (no answer of its own instead of RPC)', async () => {
    const store = new MemoryStore();
    stores.push(store);
    const shared = new KvQuoteCache(new KeySpace(store), { flushIntervalMs: 60_000 });
    const writer = await server({ fill: true, sharedCache: shared });
    expect((await getJson(writer.base + quotePath(10_000_000n))).status).toBe(200);
    await shared.writer.flush();
    expect(await shared.keys.getQuoteText(WSOL_MINT, USDC_MINT, 10_000_000n)).not.toBeNull();
    expect(await shared.lookup(request(10_000_000n), 60_000)).toBeNull();
    expect(shared.stats().reader).toEqual({ hits: 0, misses: 0, errors: 0 });
    await shared.close();
  });
});

describe('QuoteEngine without a shared cache', () => {
  it('behaves as before (no hook, RPC fallback)', async () => {
    const engine = new QuoteEngine({ cache: new PoolCache({}), loader: new CountingLoader(rpcUrl, 2_000), directory: knownPools() });
    const r = await engine.quote(request(1_000_000n));
    expect(r.ok).toBe(true);
    expect(r.ok && r.source).toBe('rpc');
    await engine.close();
  });
});
