import { Redis } from 'ioredis';

import { ErrorCode, TpError } from '../../errors.js';
import type { DependencyStatus, KvEntry, KvStore } from './kv-store.js';

/**
 * KvStore over Redis with ioredis. Commands fail fast while the connection is down (no offline
 * queue, one retry per request) with TP_ERR_KV_UNAVAILABLE, so a caller on a hot path never waits
 * for a Redis that is gone; ioredis keeps reconnecting in the background. The compare-and-delete
 * and compare-and-expire of the executor lock are Lua scripts (EVALSHA, loaded on first use), so
 * "check the owner, then act" cannot interleave with another client.
 */

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://`. */
  url: string;
  /** Used when the URL carries none. */
  password?: string;
  /** Connect timeout. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Per-command timeout. Default 5000 ms. */
  commandTimeoutMs?: number;
}

/** DEL the key if it holds ARGV[1]. */
const DELETE_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
/** PEXPIRE the key by ARGV[2] ms if it holds ARGV[1]. */
const EXPIRE_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

type ScriptedRedis = Redis & {
  tpDeleteIfEquals(key: string, expected: string): Promise<number>;
  tpExpireIfEquals(key: string, expected: string, ttlMs: string): Promise<number>;
};

export class RedisStore implements KvStore {
  readonly kind = 'redis' as const;
  readonly target: string;
  private readonly client: ScriptedRedis;
  private closed = false;

  private constructor(client: ScriptedRedis, target: string) {
    this.client = client;
    this.target = target;
  }

  /** Connects; TP_ERR_KV_UNAVAILABLE when Redis does not answer within the connect timeout. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const url = new URL(options.url);
    const target = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
    const client = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      commandTimeout: options.commandTimeoutMs ?? 5000,
      ...(url.password === '' && options.password ? { password: options.password } : {}),
      retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 6), 5000),
    }) as ScriptedRedis;
    // Errors surface through the commands that fail; the connection's own events are not fatal.
    // The first socket error is kept: connect() itself only says "Connection is closed".
    let socketError: Error | undefined;
    client.on('error', (err: Error) => {
      socketError ??= err;
    });
    client.defineCommand('tpDeleteIfEquals', { numberOfKeys: 1, lua: DELETE_IF_EQUALS });
    client.defineCommand('tpExpireIfEquals', { numberOfKeys: 1, lua: EXPIRE_IF_EQUALS });
    try {
      await client.connect();
    } catch (err) {
      client.disconnect();
      throw unavailable(target, socketError ?? err);
    }
    return new RedisStore(client, target);
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw unavailable(this.target, err);
    }
  }

  get(key: string): Promise<string | null> {
    return this.run(() => this.client.get(key));
  }

  mget(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return this.run(() => this.client.mget(...keys));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    await this.run(() => (ttlMs === undefined ? this.client.set(key, value) : this.client.set(key, value, 'PX', ttlMs)));
  }

  async setMany(entries: readonly KvEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const results = await this.run(() => {
      const p = this.client.pipeline();
      for (const e of entries) {
        if (e.ttlMs === undefined) p.set(e.key, e.value);
        else p.set(e.key, e.value, 'PX', e.ttlMs);
      }
      return p.exec();
    });
    const failed = results?.find(([err]) => err !== null);
    if (failed !== undefined) throw unavailable(this.target, failed[0]);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.client.set(key, value, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.run(() => this.client.tpDeleteIfEquals(key, expected))) === 1;
  }

  async expireIfEquals(key: string, expected: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.client.tpExpireIfEquals(key, expected, String(ttlMs)))) === 1;
  }

  async del(key: string): Promise<boolean> {
    return (await this.run(() => this.client.del(key))) > 0;
  }

  pttl(key: string): Promise<number> {
    return this.run(() => this.client.pttl(key));
  }

  async keys(prefix: string): Promise<string[]> {
    const pattern = prefix.replace(/[*?[\]\\]/g, '\\$&') + '*';
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.run(() => this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
      cursor = next;
      out.push(...batch);
    } while (cursor !== '0');
    return [...new Set(out)].sort();
  }

  async status(): Promise<DependencyStatus> {
    const started = performance.now();
    try {
      await this.client.ping();
      return { name: 'redis', target: this.target, ok: true, latencyMs: performance.now() - started };
    } catch (err) {
      return { name: 'redis', target: this.target, ok: false, error: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}

function unavailable(target: string, err: unknown): TpError {
  if (err instanceof TpError) return err;
  return new TpError(ErrorCode.KvUnavailable, `Redis ${target}: ${(err as Error).message}`, { cause: err, context: { target } });
}
