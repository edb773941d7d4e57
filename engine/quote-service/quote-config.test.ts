import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseCommandLine } from '../config/command-line.js';
import { isTpError } from '../errors.js';
import { defaultQuoteConfig, loadQuoteConfig, quoteSchema } from './quote-config.js';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isTpError(err)) return `${err.code} ${err.message}`;
    throw err;
  }
  throw new Error('expected an error');
}

function tempFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tidepool-quote-')), 'quote.json');
  writeFileSync(path, text);
  return path;
}

describe('quote service configuration', () => {
  it('has the defaults of spec 02', () => {
    const { values, sources } = loadQuoteConfig({ env: {} });
    expect(values).toEqual({
      port: 8080,
      'grpc.port': 50052,
      'tls.certFile': '',
      'tls.keyFile': '',
      host: '127.0.0.1',
      refreshSeconds: 30,
      slippageBps: 50,
      rateLimitRps: 20,
      'rateLimit.maxBytes': 2 * 1024 * 1024,
      'stream.maxStreamsPerClient': 16,
      'stream.maxStreams': 64,
      'stream.maxPairsPerStream': 1000,
      'stream.maxQuotesPerSecondPerClient': 500,
      'stream.minInterval': 100,
      'stream.shedDelay': 20,
      'stream.shedUtilization': 0.85,
      'rpc.endpoints': [],
      'rpc.fallbackDeadline': 2000,
      'rpc.fallbackConcurrency': 8,
      'rpc.fallbackRps': 50,
      'rpc.fallbackBackoffMax': 10_000,
      'bus.enabled': true,
      'bus.servers': ['nats://127.0.0.1:4222'],
      'bus.token': '',
      'bus.user': '',
      'bus.password': '',
      'bus.credsFile': '',
      'bus.tls': false,
      'bus.tlsCaFile': '',
      'bus.tlsCertFile': '',
      'bus.tlsKeyFile': '',
      'bus.streamName': 'POOL_UPDATES',
      'bus.consumerName': 'quote-service',
      'bus.maxAge': 60_000,
      'cache.enabled': true,
      'cache.stalenessThreshold': 30_000,
      'cache.maxPoolCount': 1000,
      'cache.evictionInterval': 60_000,
      'hybridMode.enabled': true,
      'hybridMode.cacheFirstTimeout': 10,
      'hybridMode.validateInterval': 300_000,
      'swap.maxQuoteAgeSlots': 150,
      'swap.lookupTables': [],
      'routes.intermediateMints': ['So11111111111111111111111111111111111111112', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
      'externalFallback.enabled': true,
      'externalFallback.quoteUrl': 'http://127.0.0.1:8890/quote',
      'externalFallback.timeout': 2000,
      'metrics.port': 9090,
      'debug.heapProfile': true,
      'log.level': 'info',
      'http.headersTimeout': 10_000,
      'http.requestTimeout': 30_000,
      'http.keepAliveTimeout': 5_000,
      'http.maxConnections': 1_024,
      'health.window': 60_000,
      'health.maxErrorRate': 0.5,
      'health.minSamples': 10,
      'auth.mode': 'auto',
      'auth.jwtSecret': '',
      'auth.jwtPublicKeyFile': '',
      'auth.jwtAudience': '',
      'auth.jwtIssuer': '',
    });
    expect(Object.values(sources).every((s) => s === 'default')).toBe(true);
    expect(defaultQuoteConfig({ port: 0 })).toEqual({ ...values, port: 0 });
  });

  it('reads the intermediate tokens of two-hop routes and the external fallback from env and flags, and refuses a bad mint', () => {
    const usdc = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    const env = loadQuoteConfig({ env: { INTERMEDIATE_MINTS: usdc, EXTERNAL_FALLBACK: 'false', EXTERNAL_FALLBACK_URL: 'http://10.0.0.2:9000/swap/v1/quote', EXTERNAL_FALLBACK_TIMEOUT: '750ms' } });
    expect(env.values['routes.intermediateMints']).toEqual([usdc]);
    expect(env.values['externalFallback.enabled']).toBe(false);
    expect(env.values['externalFallback.quoteUrl']).toBe('http://10.0.0.2:9000/swap/v1/quote');
    expect(env.values['externalFallback.timeout']).toBe(750);
    expect(loadQuoteConfig({ env: { INTERMEDIATE_MINTS: 'none' } }).values['routes.intermediateMints']).toEqual([]);
    expect(loadQuoteConfig({ env: { INTERMEDIATE_MINTS: usdc }, flags: { 'intermediate-mints': 'none' } }).values['routes.intermediateMints']).toEqual([]);
    expect(() => loadQuoteConfig({ env: { INTERMEDIATE_MINTS: 'not-a-mint' } })).toThrow(/routes\.intermediateMints.*base58 mint address/s);
    expect(() => loadQuoteConfig({ env: { INTERMEDIATE_MINTS: `${usdc},${usdc}` } })).toThrow(/listed twice/);
  });

  it('reads every environment variable of spec 02', () => {
    const { values, sources } = loadQuoteConfig({
      env: {
        PORT: '18080',
        REFRESH_SECONDS: '15',
        SLIPPAGE_BPS: '100',
        RATE_LIMIT_RPS: '2.5',
        RPC_ENDPOINTS: 'http://127.0.0.1:8899, https://rpc.example.org',
        BUS_ENABLED: 'false',
        BUS_SERVERS: 'nats://a:4222,b:4222',
        BUS_STREAM_NAME: 'POOLS_TEST',
        BUS_CONSUMER_NAME: 'quote-eu-1',
        CACHE_ENABLED: 'false',
        CACHE_STALENESS_THRESHOLD: '45s',
        CACHE_MAX_POOL_COUNT: '50',
        HYBRID_MODE: 'off',
        CACHE_FIRST_TIMEOUT: '25ms',
        METRICS_PORT: '19090',
        GRPC_PORT: '15052',
        QUOTE_HOST: '0.0.0.0',
        RPC_FALLBACK_DEADLINE: '1.5s',
        HEAP_PROFILE: 'false',
        LOG_LEVEL: 'debug',
        // Bound to 0.0.0.0, auth is on (auth.mode auto) and needs a key.
        TIDEPOOL_JWT_SECRET: 'a-test-secret-that-is-32-bytes-long!!',
      },
    });
    expect(values).toMatchObject({
      port: 18080,
      refreshSeconds: 15,
      slippageBps: 100,
      rateLimitRps: 2.5,
      'rpc.endpoints': ['http://127.0.0.1:8899', 'https://rpc.example.org'],
      'bus.enabled': false,
      'bus.servers': ['nats://a:4222', 'b:4222'],
      'bus.streamName': 'POOLS_TEST',
      'bus.consumerName': 'quote-eu-1',
      'cache.enabled': false,
      'cache.stalenessThreshold': 45_000,
      'cache.maxPoolCount': 50,
      'hybridMode.enabled': false,
      'hybridMode.cacheFirstTimeout': 25,
      'metrics.port': 19090,
      'grpc.port': 15052,
      host: '0.0.0.0',
      'rpc.fallbackDeadline': 1500,
      'debug.heapProfile': false,
      'log.level': 'debug',
      'auth.mode': 'auto',
      'auth.jwtSecret': 'a-test-secret-that-is-32-bytes-long!!',
    });
    expect(sources.port).toBe('env');
    expect(sources['bus.maxAge']).toBe('default');
  });

  it('applies flag over environment over file over default', () => {
    const file = tempFile(JSON.stringify({ port: 1111, cache: { maxPoolCount: 10, evictionInterval: '2m' }, hybridMode: { cacheFirstTimeout: '5ms' } }));
    const parsed = parseCommandLine(['-port', '3333', '--hybrid-mode', 'false'], quoteSchema);
    const { values, sources } = loadQuoteConfig({ env: { PORT: '2222', CACHE_MAX_POOL_COUNT: '20' }, file, flags: parsed.flags });
    expect(values.port).toBe(3333);
    expect(sources.port).toBe('flag');
    expect(values['cache.maxPoolCount']).toBe(20);
    expect(sources['cache.maxPoolCount']).toBe('env');
    expect(values['cache.evictionInterval']).toBe(120_000);
    expect(values['hybridMode.cacheFirstTimeout']).toBe(5);
    expect(sources['hybridMode.cacheFirstTimeout']).toBe('file');
    expect(values['hybridMode.enabled']).toBe(false);
    expect(loadQuoteConfig({ env: {}, file }).values.port).toBe(1111);
  });

  it.each([
    [{ PORT: '70000' }, 'port'],
    [{ PORT: 'http' }, 'port'],
    [{ REFRESH_SECONDS: '0' }, 'refreshSeconds'],
    [{ SLIPPAGE_BPS: '10001' }, 'slippageBps'],
    [{ SLIPPAGE_BPS: '-1' }, 'slippageBps'],
    [{ RATE_LIMIT_RPS: '0' }, 'rateLimitRps'],
    [{ RATE_LIMIT_RPS: 'fast' }, 'rateLimitRps'],
    [{ RPC_ENDPOINTS: 'ws://127.0.0.1:8900' }, 'rpc.endpoints'],
    [{ RPC_ENDPOINTS: 'http://a:1,http://a:1' }, 'rpc.endpoints'],
    [{ RPC_FALLBACK_DEADLINE: '0' }, 'rpc.fallbackDeadline'],
    [{ BUS_ENABLED: 'maybe' }, 'bus.enabled'],
    [{ BUS_SERVERS: 'http://a:4222' }, 'bus.servers'],
    [{ BUS_STREAM_NAME: 'POOL.UPDATES' }, 'bus.streamName'],
    [{ BUS_CONSUMER_NAME: 'quote service' }, 'bus.consumerName'],
    [{ CACHE_ENABLED: 'nope' }, 'cache.enabled'],
    [{ CACHE_STALENESS_THRESHOLD: 'soon' }, 'cache.stalenessThreshold'],
    [{ CACHE_MAX_POOL_COUNT: '0' }, 'cache.maxPoolCount'],
    [{ HYBRID_MODE: '2' }, 'hybridMode.enabled'],
    [{ CACHE_FIRST_TIMEOUT: 'ten' }, 'hybridMode.cacheFirstTimeout'],
    [{ METRICS_PORT: '-1' }, 'metrics.port'],
    [{ LOG_LEVEL: 'verbose' }, 'log.level'],
    [{ CACHE_ENABLED: 'false' }, 'rpc.endpoints'],
    [{ PORT: '9000', METRICS_PORT: '9000' }, 'metrics.port'],
    [{ GRPC_PORT: '65536' }, 'grpc.port'],
    [{ GRPC_PORT: '-1' }, 'grpc.port'],
    [{ GRPC_PORT: '8080' }, 'grpc.port'],
    [{ GRPC_PORT: '9090' }, 'grpc.port'],
  ])('rejects %j naming %s', (env, name) => {
    const message = errorOf(() => loadQuoteConfig({ env }));
    expect(message).toContain('TP_ERR_CONFIG_INVALID');
    expect(message).toContain(name);
  });

  it.each([
    [{ cache: { evictionInterval: 'never' } }, 'cache.evictionInterval'],
    [{ hybridMode: { validateInterval: '10ms' } }, 'hybridMode.validateInterval'],
    [{ bus: { maxAge: 5 } }, 'bus.maxAge'],
    [{ cache: { maxPoolCount: 1.5 } }, 'cache.maxPoolCount'],
  ])('rejects the file value %j naming %s', (json, name) => {
    expect(errorOf(() => loadQuoteConfig({ env: {}, file: tempFile(JSON.stringify(json)) }))).toContain(name);
  });

  it('accepts port 0 for every port (tests)', () => {
    const { values } = loadQuoteConfig({ env: { PORT: '0', METRICS_PORT: '0', GRPC_PORT: '0' } });
    expect([values.port, values['metrics.port'], values['grpc.port']]).toEqual([0, 0, 0]);
  });

  it('takes the gRPC port from the --grpc-port flag over GRPC_PORT', () => {
    const parsed = parseCommandLine(['--grpc-port', '15053'], quoteSchema);
    const { values, sources } = loadQuoteConfig({ env: { GRPC_PORT: '15054' }, flags: parsed.flags });
    expect(values['grpc.port']).toBe(15053);
    expect(sources['grpc.port']).toBe('flag');
  });
});
