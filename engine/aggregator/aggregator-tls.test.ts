/**
 * TLS on the aggregator (tls.certFile / tls.keyFile, tls.upstream / tls.upstreamCaFile) over real
 * sockets with a certificate openssl makes for the test: its gRPC and HTTP ports answer TLS
 * clients that trust the certificate and refuse plaintext ones; it reaches a TLS upstream with
 * the CA file and not without it; TLS is chosen per upstream by the address's scheme, one TLS and
 * one plaintext upstream in the same aggregator; a missing or mismatched key stops it at start,
 * naming the setting.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeSelfSignedCert, OPENSSL, type SelfSignedCert } from '../config/testing/self-signed-cert.js';
import { ErrorCode, TpError } from '../errors.js';
import { loadTidepoolProto } from '../proto.js';
import { createAggregator } from './aggregator.js';
import { defaultAggregatorConfig } from './aggregator-config.js';
import { FakeUpstream, MemoryPublisher, SOL, USDC, eventually, makeQuote, silentLogger, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';
import type { WireAggregatedQuote } from './wire-types.js';

const dir = mkdtempSync(join(tmpdir(), 'tp-aggregator-tls-'));
let server: SelfSignedCert;
let upstreamCert: SelfSignedCert;
let local: FakeUpstream;
let external: FakeUpstream;
let t: TestAggregator | undefined;

function httpsStatus(port: number, path: string, ca: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', servername: 'localhost', ...(ca === undefined ? {} : { ca }) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function aggregatorClient(port: number, creds: grpc.ChannelCredentials): TestAggregator['client'] {
  return new (loadTidepoolProto().QuoteAggregatorService)(`localhost:${port}`, creds) as TestAggregator['client'];
}

const QUOTE_REQUEST = { inputMint: SOL, outputMint: USDC, amount: '1000000000', slippageBps: 30 };

beforeAll(async () => {
  if (!OPENSSL) return;
  server = makeSelfSignedCert(dir, 'aggregator');
  upstreamCert = makeSelfSignedCert(dir, 'upstream');
  // tls.upstream covers both upstreams: both serve TLS with the same certificate.
  const upstreamTls = { cert: upstreamCert.cert, key: readFileSync(upstreamCert.keyFile, 'utf8') };
  local = new FakeUpstream();
  local.tls = upstreamTls;
  local.respond = (p) => makeQuote(p, 150_000_000n);
  await local.start();
  external = new FakeUpstream();
  external.tls = upstreamTls;
  external.respond = (p) => makeQuote(p, 149_000_000n);
  await external.start();
  t = await startTestAggregator(local, external, {
    localTimeout: 1000,
    externalTimeout: 1000,
    'tls.certFile': server.certFile,
    'tls.keyFile': server.keyFile,
    'tls.upstream': true,
    'tls.upstreamCaFile': upstreamCert.certFile,
  });
});

afterAll(async () => {
  await t?.close();
  local?.close();
  external?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!OPENSSL)('the aggregator with tls.certFile and tls.keyFile', () => {
  it('answers GetAggregatedQuote over TLS, with the local quote read from a TLS upstream trusted by tls.upstreamCaFile', async () => {
    const client = aggregatorClient(t!.grpcPort, grpc.credentials.createSsl(Buffer.from(server.cert)));
    try {
      const q = await eventually(async () => {
        const answer = await unaryCall<WireAggregatedQuote>(client, 'GetAggregatedQuote', QUOTE_REQUEST);
        expect(answer.sourceClass).toBe('SOURCE_CLASS_BOTH');
        return answer;
      });
      expect(q.localQuote?.outputAmount).toBe('150000000');
      expect(q.externalQuote?.outputAmount).toBe('149000000');
      await eventually(() => expect(t!.aggregator.stats().upstreams.local).toMatchObject({ state: 'UPSTREAM_STATE_STREAMING' }));
    } finally {
      client.close();
    }
  });

  it('refuses plaintext and untrusting gRPC clients', async () => {
    for (const creds of [grpc.credentials.createInsecure(), grpc.credentials.createSsl()]) {
      const client = aggregatorClient(t!.grpcPort, creds);
      const err = await unaryCall(client, 'Health', {}).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      client.close();
      expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    }
  });

  it('serves HTTPS on its HTTP port; plain HTTP gets no answer', async () => {
    expect([200, 503]).toContain(await httpsStatus(t!.httpPort, '/health', server.cert));
    await expect(httpsStatus(t!.httpPort, '/health', undefined)).rejects.toThrow(/self[- ]signed|certificate/i);
    await expect(fetch(`http://127.0.0.1:${t!.httpPort}/health`)).rejects.toThrow();
  });

  it('does not reach a TLS upstream without tls.upstream (plaintext against TLS)', async () => {
    const plain = await startTestAggregator(local, external, { localTimeout: 200, externalTimeout: 200 });
    try {
      await expect(unaryCall<WireAggregatedQuote>(plain.client, 'GetAggregatedQuote', QUOTE_REQUEST)).rejects.toThrow();
      expect(plain.aggregator.stats().upstreams.local.state).not.toBe('UPSTREAM_STATE_STREAMING');
      expect(plain.aggregator.stats().upstreams.external.state).not.toBe('UPSTREAM_STATE_STREAMING');
    } finally {
      await plain.close();
    }
  });

  /** A plaintext external upstream answering `output` for every quote. */
  async function plainUpstream(output: bigint): Promise<FakeUpstream> {
    const upstream = new FakeUpstream();
    upstream.respond = (p) => makeQuote(p, output);
    await upstream.start();
    return upstream;
  }

  /** The aggregator's first answer quoted by both upstreams. */
  function quotedByBoth(client: Parameters<typeof unaryCall>[0]): Promise<WireAggregatedQuote> {
    return eventually(async () => {
      const answer = await unaryCall<WireAggregatedQuote>(client, 'GetAggregatedQuote', QUOTE_REQUEST);
      expect(answer.sourceClass).toBe('SOURCE_CLASS_BOTH');
      return answer;
    });
  }

  it('reaches one upstream over TLS (https://) and the other in plaintext (http://) at once', async () => {
    const plainExternal = await plainUpstream(148_000_000n);
    // tls.upstream stays off: only the https:// scheme asks for TLS, towards the local upstream.
    const mixed = await startTestAggregator(`https://${local.address}`, `http://${plainExternal.address}`, {
      localTimeout: 1000,
      externalTimeout: 1000,
      'tls.upstreamCaFile': upstreamCert.certFile,
    });
    try {
      const q = await quotedByBoth(mixed.client);
      expect(q.localQuote?.outputAmount).toBe('150000000');
      expect(q.externalQuote?.outputAmount).toBe('148000000');
      const upstreams = mixed.aggregator.stats().upstreams;
      expect(upstreams.local.state).toBe('UPSTREAM_STATE_STREAMING');
      expect(upstreams.external.state).toBe('UPSTREAM_STATE_STREAMING');
    } finally {
      await mixed.close();
      plainExternal.close();
    }
  });

  it('a scheme wins over tls.upstream: grpc:// stays plaintext with tls.upstream on', async () => {
    const plainExternal = await plainUpstream(147_000_000n);
    const mixed = await startTestAggregator(local.address, `grpc://${plainExternal.address}`, {
      localTimeout: 1000,
      externalTimeout: 1000,
      'tls.upstream': true,
      'tls.upstreamCaFile': upstreamCert.certFile,
    });
    try {
      const q = await quotedByBoth(mixed.client);
      expect(q.localQuote?.outputAmount).toBe('150000000');
      expect(q.externalQuote?.outputAmount).toBe('147000000');
    } finally {
      await mixed.close();
      plainExternal.close();
    }
  });

  it('stops at start when the key is missing or is not the certificate\'s, naming tls.keyFile', () => {
    const start = (overrides: object) => {
      try {
        createAggregator(defaultAggregatorConfig({ grpcPort: 0, httpPort: 0, ...overrides }), { logger: silentLogger(), publisher: new MemoryPublisher() });
        return undefined;
      } catch (err) {
        return err as TpError;
      }
    };
    for (const keyFile of [join(dir, 'missing-key.pem'), upstreamCert.keyFile]) {
      const err = start({ 'tls.certFile': server.certFile, 'tls.keyFile': keyFile });
      expect(err).toBeInstanceOf(TpError);
      expect(err!.code).toBe(ErrorCode.ConfigInvalid);
      expect(err!.message).toContain('tls.keyFile');
    }
    const err = start({ 'tls.upstream': true, 'tls.upstreamCaFile': join(dir, 'missing-ca.pem') });
    expect(err?.message).toContain('tls.upstreamCaFile');
  });
});
