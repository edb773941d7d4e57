import * as grpc from '@grpc/grpc-js';
import { connect } from 'nats';

import { busAuthError, natsConnectOptions } from '../bus/index.js';
import type { BusAuth, UpstreamTls } from '../config/index.js';
import { ChainClient } from '../rpc/index.js';
import { PgClient, redactUrl, RedisStore } from '../state/index.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * One round trip to each dependency of the platform, with its latency or its exact failure:
 * Solana JSON-RPC (`getHealth`), Redis (`PING`), PostgreSQL (`SELECT 1`), NATS (connect with the
 * configured token, user/password, credentials file and TLS, then JetStream's account info: a
 * server without JetStream fails here; refused credentials are TP_ERR_BUS_AUTH), the block engine
 * (`getTipAccounts` on /api/v1/bundles), the external aggregator (a small SOL to USDC GET /quote)
 * the block-entry stream (a gRPC channel to the ShredStream proxy becomes ready) and the aggregator's
 * quote upstreams (a gRPC channel becomes ready, over TLS or not as each address says).
 */

const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** Where an HTTP endpoint is, without user info or query (provider keys live there). */
function endpointTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export interface ConnectionCheck {
  name: 'rpc' | 'redis' | 'postgres' | 'nats' | 'block-engine' | 'external-quote' | 'shredstream' | 'quote-upstream';
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
      if (health !== 'ok') throw new TpError(ErrorCode.Unavailable, `getHealth answered ${JSON.stringify(health)}`);
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
      if (!s.ok) throw new TpError(ErrorCode.KvUnavailable, s.error ?? 'PING failed');
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

export function checkNats(url: string, auth: BusAuth, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('nats', redactUrl(url), async () => {
    const u = new URL(url);
    const tls = u.protocol === 'tls:' && auth.tls === undefined ? { ...auth, tls: {} } : auth;
    const options = natsConnectOptions(tls);
    let nc;
    try {
      nc = await connect({ servers: `${u.hostname}:${u.port || '4222'}`, timeout: timeoutMs, reconnect: false, ...options });
    } catch (err) {
      const refused = busAuthError(err, [url]);
      throw refused === undefined ? err : new TpError(refused.code, `${refused.code}: ${refused.message}`);
    }
    try {
      const jsm = await nc.jetstreamManager({ timeout: timeoutMs });
      await jsm.getAccountInfo();
    } finally {
      await nc.close();
    }
  });
}

/** The block engine answers `getTipAccounts` (JSON-RPC on /api/v1/bundles) with a list of addresses. */
export function checkBlockEngine(url: string, uuid: string | undefined, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('block-engine', endpointTarget(url), async () => {
    const endpoint = new URL('/api/v1/bundles', url);
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(uuid ? { 'x-jito-auth': uuid } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTipAccounts', params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new TpError(ErrorCode.Unavailable, `getTipAccounts answered HTTP ${res.status}`);
    const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
    if (!Array.isArray(body.result) || body.result.length === 0) throw new TpError(ErrorCode.Unavailable, `getTipAccounts answered no tip accounts${body.error?.message ? `: ${body.error.message}` : ''}`);
  });
}

/** The external aggregator quotes 0.01 SOL to USDC (GET /quote, Jupiter Swap API shape). */
export function checkExternalQuote(url: string, apiKey: string | undefined, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('external-quote', endpointTarget(url), async () => {
    const u = new URL(url);
    u.searchParams.set('inputMint', WSOL);
    u.searchParams.set('outputMint', USDC);
    u.searchParams.set('amount', '10000000');
    u.searchParams.set('slippageBps', '50');
    const res = await fetch(u, { headers: apiKey ? { 'x-api-key': apiKey } : {}, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) throw new TpError(ErrorCode.ExternalServerError, `GET /quote answered HTTP ${res.status}`);
    const body = (await res.json()) as { outAmount?: unknown };
    if (typeof body.outAmount !== 'string' || !/^\d+$/.test(body.outAmount)) throw new TpError(ErrorCode.ExternalMalformed, 'GET /quote answered without an outAmount');
  });
}

/** A gRPC channel to the ShredStream proxy (host:port, or http(s)://host:port for plaintext / TLS) becomes ready. */
export function checkShredstream(address: string, timeoutMs: number): Promise<ConnectionCheck> {
  const secure = address.startsWith('https://');
  const target = address.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return timed('shredstream', redactUrl(address.includes('://') ? address : `grpc://${address}`), async () => {
    const client = new grpc.Client(target, secure ? grpc.credentials.createSsl() : grpc.credentials.createInsecure());
    try {
      await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())));
    } finally {
      client.close();
    }
  });
}

/**
 * An aggregator upstream (local or external quote service, `target` as the aggregator has it):
 * a gRPC channel to `hostPort` becomes ready, over TLS trusting `tls.ca` (or the system roots)
 * when `tls` is given, in plaintext otherwise. A TLS channel to a plaintext port, or the other
 * way round, never becomes ready.
 */
export function checkQuoteUpstream(target: string, hostPort: string, tls: UpstreamTls | undefined, timeoutMs: number): Promise<ConnectionCheck> {
  return timed('quote-upstream', target, async () => {
    const creds = tls === undefined ? grpc.credentials.createInsecure() : grpc.credentials.createSsl(tls.ca === undefined ? null : Buffer.from(tls.ca));
    const client = new grpc.Client(hostPort, creds);
    try {
      await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())));
    } finally {
      client.close();
    }
  });
}
