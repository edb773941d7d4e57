import { describe, expect, it } from 'vitest';

import { parseCommandLine } from '../config/command-line.js';
import { upstreamTargetsOf } from '../config/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import { aggregatorSchema, defaultAggregatorConfig, loadAggregatorConfig } from './aggregator-config.js';

describe('aggregator settings', () => {
  it('defaults are spec 01 (and ours where it names none)', () => {
    expect(defaultAggregatorConfig()).toMatchObject({
      httpPort: 8080,
      grpcPort: 50051,
      localQuoteAddr: 'localhost:50052',
      externalQuoteAddr: 'localhost:50053',
      busUrl: 'nats://localhost:4222',
      localTimeout: 10,
      externalTimeout: 100,
      enableConfidenceScoring: true,
      defaultProviderUptime: 0.95,
      busEnabled: true,
      oracleUrl: 'http://127.0.0.1:8890/price/v3',
      shutdownTimeout: 5000,
      upstreamUpdateInterval: 1000,
    });
  });

  it('reads the Go-style flags of spec 01, over its environment variables', () => {
    const argv = ['-http-port', '9000', '-grpc-port', '9001', '-local-quote-addr', 'a:1', '-external-quote-addr', 'b:2', '-bus-url', 'nats://bus:4222', '-local-timeout', '15ms', '-external-timeout', '1s', '-enable-confidence-scoring=false'];
    const { flags } = parseCommandLine(argv, aggregatorSchema);
    const env = { LOCAL_QUOTE_SERVICE_ADDR: 'env:1', EXTERNAL_QUOTE_SERVICE_ADDR: 'env:2', BUS_URL: 'nats://env:4222', DEFAULT_PROVIDER_UPTIME: '0.9' };
    const v = loadAggregatorConfig({ flags, env }).values;
    expect(v).toMatchObject({ httpPort: 9000, grpcPort: 9001, localQuoteAddr: 'a:1', externalQuoteAddr: 'b:2', busUrl: 'nats://bus:4222', localTimeout: 15, externalTimeout: 1000, enableConfidenceScoring: false, defaultProviderUptime: 0.9 });
    const fromEnv = loadAggregatorConfig({ env }).values;
    expect(fromEnv).toMatchObject({ localQuoteAddr: 'env:1', externalQuoteAddr: 'env:2', busUrl: 'nats://env:4222' });
  });

  it('rejects bad values and settings that clash, naming them', () => {
    const bad = (env: Record<string, string>) => {
      try {
        loadAggregatorConfig({ env });
      } catch (err) {
        expect(isTpError(err, ErrorCode.ConfigInvalid)).toBe(true);
        return (err as Error).message;
      }
      throw new Error('expected a configuration error');
    };
    expect(bad({ LOCAL_QUOTE_SERVICE_ADDR: 'nohost' })).toContain('localQuoteAddr from environment variable LOCAL_QUOTE_SERVICE_ADDR');
    expect(bad({ DEFAULT_PROVIDER_UPTIME: '1.5' })).toContain('defaultProviderUptime');
    expect(bad({ BUS_URL: 'http://x' })).toContain('busUrl');
    expect(bad({ AGGREGATOR_HTTP_PORT: '7000', AGGREGATOR_GRPC_PORT: '7000' })).toContain('httpPort: 7000 is also the gRPC port');
    expect(bad({ LOCAL_QUOTE_SERVICE_ADDR: 'x:1', EXTERNAL_QUOTE_SERVICE_ADDR: 'x:1' })).toContain('externalQuoteAddr');
    // The same host:port under two schemes is still one upstream.
    expect(bad({ LOCAL_QUOTE_SERVICE_ADDR: 'https://x:1', EXTERNAL_QUOTE_SERVICE_ADDR: 'grpc://x:1' })).toContain('externalQuoteAddr');
  });

  it('takes a scheme per upstream address: https:// and grpcs:// TLS, http:// and grpc:// plaintext', () => {
    const v = loadAggregatorConfig({ env: { LOCAL_QUOTE_SERVICE_ADDR: 'grpcs://quotes.internal:50052', EXTERNAL_QUOTE_SERVICE_ADDR: 'http://10.0.0.7:50053/' } }).values;
    expect(v).toMatchObject({ localQuoteAddr: 'grpcs://quotes.internal:50052', externalQuoteAddr: 'http://10.0.0.7:50053/' });
    expect(upstreamTargetsOf(v, { local: v.localQuoteAddr, external: v.externalQuoteAddr })).toEqual({
      local: { hostPort: 'quotes.internal:50052', tls: {} },
      external: { hostPort: '10.0.0.7:50053', tls: undefined },
    });
    // Without a scheme, tls.upstream decides; a scheme wins over it either way.
    const byDefault = { 'tls.upstream': true };
    expect(upstreamTargetsOf(byDefault, { a: 'h:1', b: 'grpc://h:2', c: '[::1]:3' })).toEqual({
      a: { hostPort: 'h:1', tls: {} },
      b: { hostPort: 'h:2', tls: undefined },
      c: { hostPort: '[::1]:3', tls: {} },
    });
  });

  it('refuses other schemes, and a CA file that no upstream would use', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadAggregatorConfig({ env });
        return undefined;
      } catch (err) {
        expect(isTpError(err, ErrorCode.ConfigInvalid)).toBe(true);
        return (err as Error).message;
      }
    };
    expect(message({ LOCAL_QUOTE_SERVICE_ADDR: 'tls://x:1' })).toMatch(/localQuoteAddr.*scheme tls:\/\/ is not one of https, grpcs/);
    expect(message({ EXTERNAL_QUOTE_SERVICE_ADDR: 'https://x' })).toContain('externalQuoteAddr');
    expect(message({ UPSTREAM_TLS_CA_FILE: '/etc/ca.pem', LOCAL_QUOTE_SERVICE_ADDR: 'http://x:1' })).toContain('tls.upstreamCaFile (UPSTREAM_TLS_CA_FILE) is set but no upstream uses TLS');
    // With one TLS upstream the CA file is used, so it must be readable.
    expect(message({ UPSTREAM_TLS_CA_FILE: '/nonexistent/ca.pem', LOCAL_QUOTE_SERVICE_ADDR: 'https://x:1' })).toContain('tls.upstreamCaFile: cannot read /nonexistent/ca.pem');
  });
});
