import { randomBytes } from 'node:crypto';

import { KeySpace } from './key-space.js';
import type { KvStore } from './kv-store.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';

/**
 * Test support: the key space over the shared Redis (a random key prefix per test file, its keys
 * deleted afterwards; never FLUSHALL) and over the in-process store, so every key-space test runs
 * on both.
 */

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestKeySpace {
  keys: KeySpace;
  store: KvStore;
  /** Deletes this test's keys and closes the store. */
  drop(): Promise<void>;
}

export function testPrefix(): string {
  return `tp-test:${randomBytes(6).toString('hex')}:`;
}

export async function createRedisKeySpace(): Promise<TestKeySpace> {
  const store = await RedisStore.connect({ url: TEST_REDIS_URL });
  const keys = new KeySpace(store, testPrefix());
  return {
    keys,
    store,
    drop: async () => {
      for (const key of await store.keys(keys.prefix)) await store.del(key);
      await store.close();
    },
  };
}

export async function createMemoryKeySpace(): Promise<TestKeySpace> {
  const store = new MemoryStore();
  return { keys: new KeySpace(store, testPrefix()), store, drop: () => store.close() };
}

export const KV_BACKENDS = [
  { name: 'redis', create: createRedisKeySpace },
  { name: 'memory', create: createMemoryKeySpace },
] as const;
