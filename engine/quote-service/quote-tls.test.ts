/**
 * TLS on the quote service's HTTP and gRPC ports (tls.certFile / tls.keyFile), over real TLS
 * connections with a certificate openssl makes for the test: HTTPS GET /health and /quote, a gRPC
 * quote stream over TLS, plain clients refused, and the settings' refusals.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig, serverTlsOf, serverTlsSchema } from '../config/index.js';
import { makeSelfSignedCert, OPENSSL } from '../config/testing/self-signed-cert.js';
import { ErrorCode, TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { loadTidepoolProto } from '../proto.js';
import { defaultQuoteConfig } from './quote-config.js';
import { createQuoteCache, createQuoteService, type QuoteService } from './quote-service.js';

const dir = mkdtempSync(join(tmpdir(), 'tp-quote-tls-'));
const logger = createLogger({ name: 'quote-tls-test', level: 'silent' });
let cert = '';
let service: QuoteService | undefined;
let ports = { port: 0, grpcPort: 0, metricsPort: 0 };

function httpsGet(path: string, ca: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ports.port, path, method: 'GET', ...(ca === undefined ? {} : { ca }), servername: 'localhost' }, (res) => {
      let body = '';
      res.on('data', (c) => (body += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  if (!OPENSSL) return;
  const made = makeSelfSignedCert(dir);
  const { certFile, keyFile } = made;
  cert = made.cert;
  const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, 'debug.heapProfile': false, 'bus.enabled': false, 'tls.certFile': certFile, 'tls.keyFile': keyFile });
  service = createQuoteService(config, { cache: createQuoteCache(config), logger });
  ports = await service.start();
});

afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!OPENSSL)('the quote service with tls.certFile and tls.keyFile', () => {
  it('serves HTTPS on its HTTP port: /health and /quote over a TLS connection that trusts the certificate', async () => {
    // No pool is loaded: the service answers, over TLS, that it is not healthy yet.
    const health = await httpsGet('/health', cert);
    expect([200, 503]).toContain(health.status);
    expect(JSON.parse(health.body)).toHaveProperty('status');
    const quote = await httpsGet('/quote?input=So11111111111111111111111111111111111111112&output=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&amount=1000', cert);
    expect(quote.status).toBeGreaterThanOrEqual(200);
    expect(JSON.parse(quote.body)).toBeTypeOf('object');
  });

  it('refuses a client that does not trust the certificate, and a plain-HTTP client gets no answer', async () => {
    await expect(httpsGet('/health', undefined)).rejects.toThrow(/self[- ]signed|certificate/i);
    await expect(fetch(`http://127.0.0.1:${ports.port}/health`)).rejects.toThrow();
  });

  it('serves gRPC over TLS: a TLS client that trusts the certificate is answered by the service; plaintext and untrusting clients do not connect', async () => {
    const { QuoteService: Client } = loadTidepoolProto();
    type Unary = (req: unknown, cb: (err: grpc.ServiceError | null, res?: unknown) => void) => void;
    const call = (creds: grpc.ChannelCredentials) =>
      new Promise<{ code: number; details: string }>((resolve) => {
        const client = new Client(`localhost:${ports.grpcPort}`, creds) as unknown as grpc.Client & { GetQuote: Unary };
        client.GetQuote({ inputMint: 'So11111111111111111111111111111111111111112', outputMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', amount: '1000' }, (err) => {
          client.close();
          resolve({ code: err === null ? grpc.status.OK : err.code, details: err?.details ?? '' });
        });
      });
    // Over TLS the call reaches the service, which answers it (no pool is loaded yet: its own error).
    const secure = await call(grpc.credentials.createSsl(Buffer.from(cert)));
    expect(secure.details).toMatch(/^TP_ERR_/);
    const plain = await call(grpc.credentials.createInsecure());
    expect(plain.code).toBe(grpc.status.UNAVAILABLE);
    expect(plain.details).toContain('No connection established');
    const untrusted = await call(grpc.credentials.createSsl());
    expect(untrusted.code).toBe(grpc.status.UNAVAILABLE);
    expect(untrusted.details).toMatch(/self[- ]signed|certificate/i);
  });

  it('keeps the metrics port plain HTTP (it is scraped inside the deployment)', async () => {
    expect((await fetch(`http://127.0.0.1:${ports.metricsPort}/metrics`)).status).toBe(200);
  });
});

describe('tls settings', () => {
  const code = (values: Record<string, string>) => {
    try {
      serverTlsOf(loadConfig(serverTlsSchema, { env: values }).values);
      return 'ok';
    } catch (err) {
      return (err as TpError).code;
    }
  };

  it('are off by default and need both files', () => {
    expect(serverTlsOf(loadConfig(serverTlsSchema, { env: {} }).values)).toBeUndefined();
    expect(code({ TLS_CERT_FILE: '/c.pem' })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ TLS_KEY_FILE: '/k.pem' })).toBe(ErrorCode.ConfigInvalid);
  });

  it('refuse files that cannot be read or are not PEM, without printing their contents', () => {
    expect(code({ TLS_CERT_FILE: join(dir, 'nope.pem'), TLS_KEY_FILE: join(dir, 'nope.key') })).toBe(ErrorCode.ConfigInvalid);
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate: secret-bytes');
    try {
      serverTlsOf({ 'tls.certFile': junk, 'tls.keyFile': junk });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(TpError);
      expect((err as TpError).message).not.toContain('secret-bytes');
    }
  });
});
