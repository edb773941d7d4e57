/**
 * JWT bearer auth on the three tidepool.v1 gRPC services over real gRPC (port 0): the external and
 * local StreamBatchQuotes and QuoteAggregatorService; HS256 and EdDSA; `auto` on a non-loopback
 * bind; the aggregator's upstream token.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { defaultAggregatorConfig, type AggregatorConfig } from '../aggregator/aggregator-config.js';
import { createAggregator } from '../aggregator/aggregator.js';
import { FakeUpstream, MemoryPublisher, makeQuote, silentLogger, startTestAggregator, type TestAggregator } from '../aggregator/testing.js';
import type { WireAggregatedQuote } from '../aggregator/wire-types.js';
import { PoolCache } from '../cache/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { defaultExternalConfig, type ExternalQuotesConfig } from '../external/external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from '../external/external-quote-service.js';
import { FakeProvider, StreamProbe, eventually, type StreamPairInput } from '../external/testing/fake-provider.js';
import { createLogger } from '../obs/logger.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import { QuoteStreamServer } from '../quote-grpc/quote-stream-server.js';
import { manualSimulator, storePool } from '../quote/testing.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { DEFAULT_AUTH_SETTINGS, type AuthSettings } from './auth-config.js';
import { createGrpcAuth } from './grpc-auth.js';

const SECRET = 'a-test-secret-that-is-32-bytes-long!!';
const logger = createLogger({ level: 'silent' });
const PAIR: StreamPairInput = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000' };
const HS256_ON: Partial<AuthSettings> = { 'auth.mode': 'on', 'auth.jwtSecret': SECRET };

const nowS = (): number => Math.floor(Date.now() / 1000);
function hs256(expS = nowS() + 600, secret = SECRET): Promise<string> {
  return new SignJWT({ sub: 'tester' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(expS).sign(new TextEncoder().encode(secret));
}
function bearer(token: string | undefined, raw?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (raw !== undefined) md.set('authorization', raw);
  else if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return md;
}

const dir = mkdtempSync(join(tmpdir(), 'tidepool-grpc-auth-'));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function externalService(config: Partial<ExternalQuotesConfig>): Promise<{ service: ExternalQuoteService; port: number }> {
  const fake = new FakeProvider();
  await fake.start();
  cleanups.push(() => fake.close());
  const service = createExternalQuoteService(
    defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: fake.url, pollInterval: 60_000, rateLimitRps: 1000, 'log.level': 'silent', ...config }),
    { logger },
  );
  cleanups.push(() => service.close());
  const { grpcPort } = await service.start();
  return { service, port: grpcPort };
}

function probe(port: number, metadata: grpc.Metadata): StreamProbe {
  const p = new StreamProbe(`127.0.0.1:${port}`, { pairs: [PAIR], updateIntervalMs: 100 }, metadata);
  cleanups.push(() => p.close());
  return p;
}

async function refused(p: StreamProbe, details: RegExp): Promise<void> {
  const err = await eventually(() => p.error, 'the stream error');
  expect(err.code).toBe(grpc.status.UNAUTHENTICATED);
  expect(err.details).toMatch(details);
  expect(p.quotes).toHaveLength(0);
}

async function served(p: StreamProbe): Promise<void> {
  await eventually(() => p.quotes.length > 0, 'a quote');
  expect(p.error).toBeUndefined();
}

/** The local StreamBatchQuotes (engine/quote) over a pool cache of the manual simulator. */
async function localServer(auth: Partial<AuthSettings>, host = '127.0.0.1'): Promise<number> {
  const sim = manualSimulator(11);
  const cache = new PoolCache({ stalenessThresholdMs: 60_000 });
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  const metrics = createQuoteMetrics();
  const engine = new QuoteEngine({ cache, metrics, hybridMode: false });
  cleanups.push(() => engine.close());
  const server = new QuoteStreamServer({ engine, host, shutdownTimeoutMs: 1000, auth: createGrpcAuth({ ...DEFAULT_AUTH_SETTINGS, ...auth }, host) });
  cleanups.push(() => server.close());
  return server.start(0);
}

type Client = grpc.Client & Record<string, (...args: never[]) => unknown>;
function unary<T>(client: Client, method: string, request: object, metadata = new grpc.Metadata()): Promise<T> {
  return new Promise((resolve, reject) => {
    (client[method] as unknown as (r: object, m: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: T) => void) => void)(request, metadata, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
async function unaryStatus(client: Client, method: string, request: object, metadata?: grpc.Metadata): Promise<grpc.ServiceError> {
  return unary(client, method, request, metadata).then(
    () => {
      throw new Error(`${method} succeeded`);
    },
    (err: grpc.ServiceError) => err,
  );
}

function configRefusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(TpError);
    expect((err as TpError).code).toBe(ErrorCode.ConfigInvalid);
    return (err as TpError).message;
  }
  throw new Error('started');
}

describe('external StreamBatchQuotes with auth', () => {
  it('is off by default on 127.0.0.1', async () => {
    const { port } = await externalService({});
    await served(probe(port, new grpc.Metadata()));
  });

  it('HS256 on: no token, a malformed header, a bad signature, an expired token are UNAUTHENTICATED; a valid token is served', async () => {
    const { port, service } = await externalService(HS256_ON);
    await refused(probe(port, new grpc.Metadata()), /^unauthenticated: missing authorization metadata/);
    await refused(probe(port, bearer(undefined, 'Basic dXNlcjpwYXNz')), /not "Bearer <jwt>"/);
    await refused(probe(port, bearer(await hs256(nowS() + 600, 'another-secret-of-at-least-32-bytes!!'))), /signature invalid/);
    await refused(probe(port, bearer(await hs256(nowS() - 60))), /token expired/);
    expect(service.poller.registry.size).toBe(0);
    const token = await hs256();
    await served(probe(port, bearer(token)));
    // The same token again: from the verifier's cache.
    await served(probe(port, bearer(token)));
  });

  it('EdDSA on with a public key file: a token signed by the private key is served, another key is not', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const file = join(dir, 'ed25519.pub.pem');
    writeFileSync(file, publicKey.export({ type: 'spki', format: 'pem' }));
    const { port } = await externalService({ 'auth.mode': 'on', 'auth.jwtPublicKeyFile': file });
    const sign = (key: KeyObject): Promise<string> => new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime('5m').sign(key);
    await refused(probe(port, bearer(await sign(generateKeyPairSync('ed25519').privateKey))), /signature invalid/);
    await refused(probe(port, bearer(await hs256())), /algorithm not accepted \(accepted: EdDSA\)/);
    await served(probe(port, bearer(await sign(privateKey))));
  });

  it('auto turns it on when bound to 0.0.0.0, and refuses to start without a secret', async () => {
    expect(configRefusal(() => createExternalQuoteService(defaultExternalConfig({ host: '0.0.0.0', grpcPort: 0, 'metrics.port': 0 }), { logger }))).toMatch(
      /auth\.mode: auth\.mode is auto and host 0\.0\.0\.0 is not loopback, but neither auth\.jwtSecret/,
    );
    const { port } = await externalService({ host: '0.0.0.0', 'auth.jwtSecret': SECRET });
    await refused(probe(port, new grpc.Metadata()), /missing authorization/);
    await served(probe(port, bearer(await hs256())));
  });

  it('off stays off on 0.0.0.0', async () => {
    const { port } = await externalService({ host: '0.0.0.0', 'auth.mode': 'off' });
    await served(probe(port, new grpc.Metadata()));
  });
});

describe('local StreamBatchQuotes with auth', () => {
  it('is off by default on 127.0.0.1', async () => {
    await served(probe(await localServer({}), new grpc.Metadata()));
  });

  it('HS256 on: refuses calls without a valid token, serves a valid one', async () => {
    const port = await localServer(HS256_ON);
    await refused(probe(port, new grpc.Metadata()), /missing authorization/);
    await refused(probe(port, bearer(await hs256(nowS() - 60))), /expired/);
    await refused(probe(port, bearer('abc.def.ghi')), /malformed|invalid/);
    await served(probe(port, bearer(await hs256())));
  });

  it('auto on 0.0.0.0: on with a secret, refused without one', async () => {
    expect(() => createGrpcAuth(DEFAULT_AUTH_SETTINGS, '0.0.0.0')).toThrow(/auth\.mode/);
    const port = await localServer({ 'auth.jwtSecret': SECRET }, '0.0.0.0');
    await refused(probe(port, new grpc.Metadata()), /missing authorization/);
    await served(probe(port, bearer(await hs256())));
  });
});

describe('QuoteAggregatorService with auth', () => {
  async function aggregator(overrides: Partial<AggregatorConfig>, local?: string, external?: string): Promise<TestAggregator> {
    let upstreams: [string | FakeUpstream, string | FakeUpstream];
    if (local === undefined || external === undefined) {
      const l = new FakeUpstream();
      const e = new FakeUpstream();
      l.respond = (p) => makeQuote(p, 1000n);
      e.respond = (p) => makeQuote(p, 1010n);
      await l.start();
      await e.start();
      cleanups.push(() => l.close(), () => e.close());
      upstreams = [l, e];
    } else {
      upstreams = [local, external];
    }
    const t = await startTestAggregator(upstreams[0], upstreams[1], { localTimeout: 1000, externalTimeout: 1000, ...overrides });
    cleanups.push(() => t.close());
    return t;
  }

  it('is off by default on 127.0.0.1', async () => {
    const t = await aggregator({});
    await unary(t.client, 'Health', {});
  });

  it('HS256 on: unary and stream calls need a valid token', async () => {
    const t = await aggregator(HS256_ON);
    for (const method of ['Health', 'GetAggregatedQuote', 'GetConfidenceBreakdown']) {
      const err = await unaryStatus(t.client, method, method === 'Health' ? {} : { ...PAIR, slippageBps: 50 });
      expect(err.code, method).toBe(grpc.status.UNAUTHENTICATED);
      expect(err.details).toMatch(/missing authorization/);
    }
    expect((await unaryStatus(t.client, 'Health', {}, bearer(await hs256(nowS() - 60)))).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await unaryStatus(t.client, 'Health', {}, bearer(await hs256(nowS() + 600, 'another-secret-of-at-least-32-bytes!!')))).details).toMatch(/signature/);
    const token = await hs256();
    await unary(t.client, 'Health', {}, bearer(token));
    const q = await unary<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', { ...PAIR, slippageBps: 50 }, bearer(token));
    expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');

    const stream = (md: grpc.Metadata): { quotes: unknown[]; error?: grpc.ServiceError; call: grpc.ClientReadableStream<unknown> } => {
      const call = (t.client['StreamAggregatedQuotes'] as unknown as (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<unknown>)({ pairs: [PAIR], slippageBps: 50 }, md);
      const s: { quotes: unknown[]; error?: grpc.ServiceError; call: grpc.ClientReadableStream<unknown> } = { quotes: [], call };
      call.on('data', (x: unknown) => s.quotes.push(x));
      call.on('error', (err: grpc.ServiceError) => (s.error = err));
      cleanups.push(() => call.cancel());
      return s;
    };
    const denied = stream(new grpc.Metadata());
    const err = await eventually(() => denied.error, 'the stream error');
    expect(err.code).toBe(grpc.status.UNAUTHENTICATED);
    const allowed = stream(bearer(token));
    await eventually(() => allowed.quotes.length > 0, 'an aggregated quote');
  });

  it('auto on 0.0.0.0: refuses to start without a secret, and asks for a token with one', async () => {
    const base = { grpcPort: 0, httpPort: 0, host: '0.0.0.0' };
    expect(configRefusal(() => createAggregator(defaultAggregatorConfig(base), { logger: silentLogger(), publisher: new MemoryPublisher() }))).toMatch(/auth\.mode: auth\.mode is auto and host 0\.0\.0\.0/);
    const t = await aggregator({ host: '0.0.0.0', 'auth.jwtSecret': SECRET });
    // startTestAggregator's client connects to 127.0.0.1:<port>.
    expect((await unaryStatus(t.client, 'Health', {})).code).toBe(grpc.status.UNAUTHENTICATED);
    await unary(t.client, 'Health', {}, bearer(await hs256()));
  });

  it('reaches auth-on upstreams with its upstream token (TIDEPOOL_JWT_TOKEN), and not without', async () => {
    const local = await localServer(HS256_ON);
    const { port: external } = await externalService(HS256_ON);
    const request = { ...PAIR, slippageBps: 50 };

    const without = await aggregator({}, `127.0.0.1:${local}`, `127.0.0.1:${external}`);
    const failed = await unary<WireAggregatedQuote>(without.client, 'GetAggregatedQuote', request).then(
      (q) => q.sourceClass,
      (err: grpc.ServiceError) => err.code,
    );
    expect(failed).not.toBe('SOURCE_CLASS_BOTH');
    const lastError = (side: 'local' | 'external'): string => String(without.aggregator.core.upstreams[side].status().lastError ?? '');
    await eventually(() => /unauthenticated/i.test(lastError('local')) && /unauthenticated/i.test(lastError('external')), `UNAUTHENTICATED upstreams (${lastError('local')})`);

    const token = await hs256();
    const t = await aggregator({ upstreamToken: token }, `127.0.0.1:${local}`, `127.0.0.1:${external}`);
    const q = await unary<WireAggregatedQuote>(t.client, 'GetAggregatedQuote', request);
    expect(q.sourceClass).toBe('SOURCE_CLASS_BOTH');
    expect(q.localQuote).toBeTruthy();
    expect(q.externalQuote).toBeTruthy();
  });
});
