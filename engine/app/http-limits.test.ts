import { existsSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { aggregatorSchema } from '../aggregator/aggregator-config.js';
import { AggregatorHttpServer } from '../aggregator/http-server.js';
import { ServingStatusName } from '../aggregator/wire-types.js';
import { httpLimitsOf, loadConfig } from '../config/index.js';
import { externalSchema } from '../external/external-config.js';
import { ExternalHttpServer } from '../external/external-http-server.js';
import { idleKeepAliveUntilClosed, slowlorisUntilClosed } from '../obs/testing/socket-probes.js';
import { PARSE_WORKER, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * Issue 11, item 9: every node:http port of the engine (scanner health 8081, quote metrics 9090,
 * scanner metrics 9091, aggregator HTTP 8082, external metrics 9093) closes a slowloris socket at
 * http.headersTimeout and an idle keep-alive socket at http.keepAliveTimeout, both set by settings.
 * Node's defaults (60 s for the head, 5 s idle) outlast each probe's limit (5 s, 3 s); Node closes
 * an idle socket at keepAliveTimeout + 1 s (its own grace against client races), so 100 ms here
 * closes it after about 1.1 s.
 */
const built = existsSync(PARSE_WORKER);
const SETTINGS = { HTTP_HEADERS_TIMEOUT: '200ms', HTTP_REQUEST_TIMEOUT: '400ms', HTTP_KEEP_ALIVE_TIMEOUT: '100ms' };
const portOf = (url: string): number => Number(/:(\d+)(\/|$)/.exec(url.replace(/^http:\/\//, ''))![1]);

let e: EngineUnderSim | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await e?.close();
  e = undefined;
  for (const close of closers.splice(0)) await close();
});

describe.skipIf(!built)('the engine\'s node:http ports under the http.* settings', () => {
  it('close slowloris and idle keep-alive sockets on the scanner health, quote metrics and scanner metrics ports', async () => {
    e = await startEngineUnderSim({ engine: { 'http-headers-timeout': '200ms', 'http-request-timeout': '400ms', 'http-keep-alive-timeout': '100ms' } });
    const ports = { scanner: portOf(e.endpoints.scanner), quoteMetrics: portOf(e.endpoints.quoteMetrics), scannerMetrics: portOf(e.endpoints.scannerMetrics) };
    for (const [name, port] of Object.entries(ports)) {
      const slow = await slowlorisUntilClosed(port, { timeoutMs: 5_000 });
      expect(slow.received, name).toMatch(/^HTTP\/1\.1 408/);
      const idle = await idleKeepAliveUntilClosed(port, name === 'scanner' ? '/stats' : '/metrics', { timeoutMs: 3_000 });
      expect(idle.answered, name).toBe(true);
    }
  });
});

describe('the aggregator\'s and the external service\'s HTTP ports under the http.* settings', () => {
  it('close slowloris and idle keep-alive sockets', async () => {
    const aggregatorLimits = httpLimitsOf(loadConfig(aggregatorSchema, { env: SETTINGS }).values);
    const aggregator = new AggregatorHttpServer(
      { health: () => ({ status: ServingStatusName.Serving, body: {} }), stats: () => ({}), metrics: async () => ({ contentType: 'text/plain', body: '' }) },
      '127.0.0.1',
      aggregatorLimits,
    );
    closers.push(() => aggregator.close());
    const externalLimits = httpLimitsOf(loadConfig(externalSchema, { env: SETTINGS }).values);
    const external = new ExternalHttpServer({ metrics: async () => '', metricsContentType: 'text/plain', health: () => ({}) as never, httpLimits: externalLimits });
    closers.push(() => external.close());
    for (const port of [await aggregator.start(0), await external.start(0)]) {
      const slow = await slowlorisUntilClosed(port, { timeoutMs: 5_000 });
      expect(slow.received).toMatch(/^HTTP\/1\.1 408/);
      const idle = await idleKeepAliveUntilClosed(port, '/metrics', { timeoutMs: 3_000 });
      expect(idle.answered).toBe(true);
    }
  });
});
