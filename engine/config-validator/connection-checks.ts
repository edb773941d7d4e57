import { connect } from 'nats';

import { ChainClient } from '../rpc/index.js';
import { PgClient, redactUrl, RedisStore } from '../state/index.js';



/**
 * One round trip to each dependency of the platform, with its latency or its exact failure:
 * Solana JSON-RPC (`getHealth`), Redis (`PING`), PostgreSQL (`SELECT 1`) and NATS (connect, then
 * JetStream's account info: a server without JetStream fails here).
 */

export interface ConnectionCheck {
  name: 'rpc' | 'redis' | 'postgres' | 'nats';
  /** Where, without credentials. */
  target: string;
  ok: boolean;
  latencyMs?: number;
  error?: string;
}

async function timed(name: ConnectionCheck['name'], target: string, fn: () => Promise<void>): Promise<ConnectionCheck> {
  const started = performance.now();
  try {
    await fn();
    return { name, target, ok: true, latencyMs: performance.now() - started };
  } catch (err) {
    return { name, target, ok: false, error: (err as Error).message };
  }
}

export function checkRpc(url: string, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('rpc', redactUrl(url), async () => {
    const client = new ChainClient({ url, timeoutMs });
    try {
      const health = await client.getHealth();
      if (health !== 'ok') throw new Error(`getHealth answered ${JSON.stringify(health)}`);
    } finally {
      await client.close();
    }
  });
}

export function checkRedis(url: string, password: string | undefined, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('redis', redactUrl(url), async () => {
    const store = await RedisStore.connect({ url, ...(password ? { password } : {}), connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs });
    try {
      const s = await store.status();
      if (!s.ok) throw new Error(s.error ?? 'PING failed');
    } finally {
      await store.close();
    }
  });
}

export function checkPostgres(url: string, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('postgres', redactUrl(url), async () => {
    const db = new PgClient({ url, max: 1, connectTimeoutMs: timeoutMs });
    try {
      await db.ping();
    } finally {
      await db.close();
    }
  });
}

export function checkNats(url: string, token: string | undefined, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('nats', redactUrl(url), async () => {
    const u = new URL(url);
    const nc = await connect({ servers: `${u.hostname}:${u.port || '4222'}`, timeout: timeoutMs, reconnect: false, ...(token ? { token } : {}) });
    try {
      const jsm = await nc.jetstreamManager({ timeout: timeoutMs });
      await jsm.getAccountInfo();
    } finally {
      await nc.close();
    }
  });
}
