import { KeySpace } from './key-space.js';
import type { KvStore } from './kv-store.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';

/**
 * Opens the key-value store: Redis at `url` when one is configured, otherwise the in-process
 * store (the embedded default). Returns the key space over it, with `prefix` in front of every key.
 */
export interface OpenKeySpaceOptions {
  /** `redis.url`; empty or absent = in-process. */
  url?: string;
  password?: string;
  /** `redis.keyPrefix`. */
  prefix?: string;
  connectTimeoutMs?: number;
}

export async function openKvStore(options: OpenKeySpaceOptions = {}): Promise<KvStore> {
  if (options.url === undefined || options.url === '') return new MemoryStore();
  return RedisStore.connect({
    url: options.url,
    ...(options.password ? { password: options.password } : {}),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
  });
}

export async function openKeySpace(options: OpenKeySpaceOptions = {}): Promise<KeySpace> {
  return new KeySpace(await openKvStore(options), options.prefix ?? '');
}
