import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { RedisStore } from './redis-store.js';
import { TEST_REDIS_URL, testPrefix } from './testing.js';

/**
 * A Redis connection killed under the store (CLIENT KILL, as a Redis restart does) is no crash:
 * the command in flight is retried once or fails with TP_ERR_KV_UNAVAILABLE, the store reports unhealthy or
 * reconnects, and commands resume on the new connection with nothing lost. Only this test's own
 * connection is killed (by its id), never another client of the shared Redis.
 */
let admin: Redis;
const prefix = testPrefix();

beforeAll(() => {
  admin = new Redis(TEST_REDIS_URL, { lazyConnect: false });
});
afterAll(async () => {
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  await admin.quit();
});

function idOf(store: RedisStore): Promise<number> {
  return (store as unknown as { client: Redis }).client.client('ID') as Promise<number>;
}

async function until(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 15_000; !(await probe()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('RedisStore when its connection is killed', () => {
  it('ends the command in flight (retried once, or TP_ERR_KV_UNAVAILABLE), stays up, and resumes on a new connection with nothing lost', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): void => void unhandled.push(err);
    process.on('uncaughtException', onUnhandled);
    process.on('unhandledRejection', onUnhandled);
    const store = await RedisStore.connect({ url: TEST_REDIS_URL, commandTimeoutMs: 10_000 });
    try {
      await store.set(`${prefix}kept`, 'v1');
      for (let round = 0; round < 3; round++) {
        const id = await idOf(store);
        // a command held on the connection when it is killed (BLPOP waits for a list that never fills)
        const held = (store as unknown as { client: Redis }).client.blpop(`${prefix}never`, 1);
        const inFlight = (store as unknown as { run<T>(fn: () => Promise<T>): Promise<T> }).run(() => held).then(() => undefined, (e: unknown) => e);
        await until(async () => ((await admin.client('LIST', 'ID', String(id))) as string).includes('cmd=blpop'), 'the held command');
        expect(await admin.client('KILL', 'ID', String(id))).toBe(1);
        // ioredis retries a command once on the new connection (maxRetriesPerRequest 1): it ends
        // with its own answer (BLPOP's null) or TP_ERR_KV_UNAVAILABLE, never an unhandled error
        const err = await inFlight;
        expect(err === undefined || isTpError(err, ErrorCode.KvUnavailable), String(err)).toBe(true);
        // the store reconnects by itself (backoff in its retry strategy); status says so meanwhile
        await until(async () => (await store.status()).ok, 'the store healthy again');
        expect(await idOf(store)).not.toBe(id);
        expect(await store.get(`${prefix}kept`)).toBe('v1');
        await store.set(`${prefix}round`, String(round));
        expect(await admin.get(`${prefix}round`)).toBe(String(round));
      }
      expect(unhandled).toEqual([]);
    } finally {
      process.off('uncaughtException', onUnhandled);
      process.off('unhandledRejection', onUnhandled);
      await store.close();
    }
  }, 60_000);

  it('a store whose connection is killed while idle reports unhealthy at most briefly and never crashes', async () => {
    const store = await RedisStore.connect({ url: TEST_REDIS_URL });
    try {
      const id = await idOf(store);
      expect(await admin.client('KILL', 'ID', String(id))).toBe(1);
      await until(async () => (await store.status()).ok && (await idOf(store)) !== id, 'a new connection');
      await store.set(`${prefix}idle`, 'x');
      expect(await store.get(`${prefix}idle`)).toBe('x');
    } finally {
      await store.close();
    }
  }, 60_000);
});
