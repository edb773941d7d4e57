import { describe, expect, it } from 'vitest';

import { loadAggregatorConfig } from '../aggregator/aggregator-config.js';
import { loadEngineConfig } from '../app/engine-config.js';
import { checkStartConfig, startSchema } from '../app/start-config.js';
import { loadConfig } from '../config/loader.js';
import { ErrorCode, TpError } from '../errors.js';
import { loadExternalConfig } from '../external/external-config.js';
import { loadQuoteConfig } from '../quote-service/quote-config.js';
import { authEnabled, isLoopbackHost } from './auth-config.js';

const SECRET = 'a-test-secret-that-is-32-bytes-long!!';

function refusal(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(TpError);
    expect((err as TpError).code).toBe(ErrorCode.ConfigInvalid);
    return (err as TpError).message;
  }
  throw new Error('loaded');
}

describe('auth settings', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', 'LOCALHOST', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('auto is off on loopback and on elsewhere; on and off force it', () => {
    expect(authEnabled('auto', '127.0.0.1')).toBe(false);
    expect(authEnabled('auto', '0.0.0.0')).toBe(true);
    expect(authEnabled('on', '127.0.0.1')).toBe(true);
    expect(authEnabled('off', '0.0.0.0')).toBe(false);
  });

  it.each([
    ['quote-service', loadQuoteConfig],
    ['engine', loadEngineConfig],
    ['aggregator', loadAggregatorConfig],
    ['external-quotes', loadExternalConfig],
  ])('%s: off by default, and refused when on without a secret or key file', (_name, load) => {
    expect(() => load({ env: {} })).not.toThrow();
    expect(() => load({ env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_SECRET: SECRET } })).not.toThrow();
    expect(() => load({ env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_PUBLIC_KEY_FILE: '/etc/tidepool/jwt.pem' } })).not.toThrow();
    expect(refusal(() => load({ env: { TIDEPOOL_AUTH: 'on' } }))).toMatch(/auth\.mode: auth\.mode is on, but neither auth\.jwtSecret \(TIDEPOOL_JWT_SECRET\) nor auth\.jwtPublicKeyFile/);
    expect(refusal(() => load({ env: {}, flags: { auth: 'on' } }))).toMatch(/auth\.mode/);
    expect(refusal(() => load({ env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_SECRET: 'short' } }))).toMatch(/auth\.jwtSecret: .*at least 32 bytes/);
    expect(refusal(() => load({ env: { TIDEPOOL_AUTH: 'maybe' } }))).toMatch(/auth\.mode/);
    expect(() => load({ env: { TIDEPOOL_AUTH: 'off' } })).not.toThrow();
  });

  it('never prints the secret in a refusal', () => {
    expect(refusal(() => loadQuoteConfig({ env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_SECRET: 'tiny-secret' } }))).not.toContain('tiny-secret');
  });

  it('tidepool start: one set of auth settings, checked against every bind host', () => {
    expect(Object.keys(startSchema).filter((k) => k.endsWith('auth.mode'))).toEqual(['auth.mode']);
    expect(startSchema['aggregator.upstreamToken'].env).toBe('TIDEPOOL_JWT_TOKEN');
    checkStartConfig(loadConfig(startSchema, { env: {} }).values);
    const external = refusal(() => checkStartConfig(loadConfig(startSchema, { env: { EXTERNAL_QUOTES_HOST: '0.0.0.0' } }).values));
    expect(external).toMatch(/auth\.mode is auto and external\.host 0\.0\.0\.0 is not loopback/);
    const aggregator = refusal(() => checkStartConfig(loadConfig(startSchema, { env: {}, flags: { 'aggregator-host': '0.0.0.0' } }).values));
    expect(aggregator).toMatch(/aggregator\.host 0\.0\.0\.0/);
    checkStartConfig(loadConfig(startSchema, { env: { EXTERNAL_QUOTES_HOST: '0.0.0.0', TIDEPOOL_JWT_SECRET: SECRET } }).values);
  });
});
