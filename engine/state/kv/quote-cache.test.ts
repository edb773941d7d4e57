import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HealthHeartbeat } from './health-heartbeat.js';
import { KeySpace } from './key-space.js';
import type { KvEntry, KvStore } from './kv-store.js';
import { MemoryStore } from './memory-store.js';
import { QuoteCacheReader, QuoteCacheWriter } from './quote-cache.js';
import { RedisStore } from './redis-store.js';
import { KV_BACKENDS, TEST_REDIS_URL, testPrefix, type TestKeySpace } from './testing.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** A store whose setMany waits until released, counting calls: to see batching from outside. */
class GatedStore extends MemoryStore {
  calls: KvEntry[][] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async setMany(entries: readonly KvEntry[]): Promise<void> {
    this.calls.push([...entries]);
    if (this.gate !== undefined) await this.gate;
    await super.setMany(entries);
  }
}

describe.each(KV_BACKENDS)('quote cache on $name', ({ create }) => {
  let t: TestKeySpace;
  beforeAll(async () => {
    t = await create();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('a replica reads what the writer wrote, with the 5 min TTL on quote: and price: keys', async () => {
    const writer = new QuoteCacheWriter(t.keys, { flushIntervalMs: 5 });
    writer.offerQuote(SOL, USDC, 1_000_000_000n, '{"outputAmount":"150000000","source":"cache"}');
    writer.offerPrice(SOL, 'dexa_amm', 150.5, 1_700_000_000_000);
    await writer.close();
    expect(writer.stats()).toMatchObject({ offered: 2, written: 2, dropped: 0, errors: 0, pending: 0 });
    const reader = new QuoteCacheReader(t.keys, { timeoutMs: 1000 });
    expect(await reader.get(SOL, USDC, 1_000_000_000n)).toBe('{"outputAmount":"150000000","source":"cache"}');
    expect(await reader.get(SOL, USDC, 2n)).toBeNull();
    expect(reader.stats()).toEqual({ hits: 1, misses: 1, errors: 0 });
    expect(await t.keys.getPrice(SOL, 'dexa_amm')).toEqual({ price: 150.5, timestamp: 1_700_000_000_000 });
    for (const key of [t.keys.quoteKey(SOL, USDC, 1_000_000_000n), t.keys.priceKey(SOL, 'dexa_amm')]) {
      const ttl = await t.store.pttl(key);
      expect(ttl).toBeGreaterThan(290_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
    }
  });

  it('heartbeats write status and time to system:health:{service}, and stopped on close', async () => {
    let status: 'ok' | 'degraded' = 'degraded';
    const hb = new HealthHeartbeat(t.keys, { service: 'scanner', intervalMs: 60_000, status: () => ({ status, detail: { bus: 'down' } }) });
    const before = Date.now();
    await hb.start();
    expect(await t.keys.getHealth('scanner')).toMatchObject({ status: 'degraded', detail: { bus: 'down' } });
    expect((await t.keys.getHealth('scanner'))!.lastHeartbeat).toBeGreaterThanOrEqual(before);
    status = 'ok';
    await hb.beat();
    expect((await t.keys.getHealth('scanner'))?.status).toBe('ok');
    expect(await t.store.pttl(t.keys.healthKey('scanner'))).toBe(-1);
    await hb.close();
    expect((await t.keys.getHealth('scanner'))?.status).toBe('stopped');
    expect(hb.beats).toBe(3);
  });
});

describe('quote cache writer batching', () => {
  it('offers never wait: they coalesce per key while a flush is in flight, and go in the next batch', async () => {
    const store = new GatedStore();
    const keys = new KeySpace(store, 'p:');
    const writer = new QuoteCacheWriter(keys, { flushIntervalMs: 1 });
    store.hold();
    writer.offerQuote(SOL, USDC, 1n, '"a"');
    const first = writer.flush();
    await new Promise((r) => setImmediate(r));
    expect(store.calls).toHaveLength(1);
    // While the first batch is held by the store, offers return at once and coalesce.
    for (let i = 0; i < 100; i++) writer.offerQuote(SOL, USDC, 2n, `"v${i}"`);
    writer.offerQuote(SOL, USDC, 3n, '"c"');
    expect(writer.stats().pending).toBe(2);
    store.release();
    await first;
    await writer.close();
    expect(store.calls.map((c) => c.length)).toEqual([1, 2]);
    expect(await keys.getQuoteText(SOL, USDC, 2n)).toBe('"v99"');
    expect(writer.stats()).toMatchObject({ offered: 102, written: 3, dropped: 0 });
    await store.close();
  });

  it('bounds what waits while the store is stuck, counting what it drops', async () => {
    const store = new GatedStore();
    const writer = new QuoteCacheWriter(new KeySpace(store), { flushIntervalMs: 1, maxPending: 10 });
    store.hold();
    writer.offerQuote(SOL, USDC, 0n, '0');
    const first = writer.flush();
    for (let i = 1; i <= 50; i++) writer.offerQuote(SOL, USDC, BigInt(i), String(i));
    expect(writer.stats()).toMatchObject({ pending: 10, dropped: 40 });
    store.release();
    await first;
    await writer.close();
    expect(writer.stats()).toMatchObject({ written: 11, dropped: 40 });
    await store.close();
  });

  it('a Redis that went away costs counted errors, never a throw on the quote path', async () => {
    const store = await RedisStore.connect({ url: TEST_REDIS_URL });
    const keys = new KeySpace(store, testPrefix());
    await store.close();
    const writer = new QuoteCacheWriter(keys, { flushIntervalMs: 1 });
    expect(() => writer.offerQuote(SOL, USDC, 1n, '1')).not.toThrow();
    await writer.close();
    expect(writer.stats()).toMatchObject({ errors: 1, dropped: 1, written: 0 });
    const reader = new QuoteCacheReader(keys);
    expect(await reader.get(SOL, USDC, 1n)).toBeNull();
    expect(reader.stats().errors).toBe(1);
    const hb = new HealthHeartbeat(keys, { service: 'x' });
    await hb.beat();
    expect(hb.failures).toBe(1);
  });

  it('a read slower than its budget is a miss', async () => {
    const slow: Partial<KvStore> = { get: () => new Promise(() => undefined) };
    const reader = new QuoteCacheReader(new KeySpace(slow as KvStore), { timeoutMs: 5 });
    expect(await reader.get(SOL, USDC, 1n)).toBeNull();
    expect(reader.stats().errors).toBe(1);
  });
});
