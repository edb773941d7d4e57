import { describe, expect, it } from 'vitest';

import { ErrorCode, TpError, isTpError } from '../errors.js';
import { checkSharedState, deploymentHealth, deploymentSafetySchema, isLoopbackUrl, refuseLoopbackDefaults } from './deployment-safety.js';
import { loadConfig, setting } from './loader.js';
import { bool, uniqueList, url } from './setting-types.js';

function thrown(fn: () => unknown): TpError<typeof ErrorCode.ConfigInvalid> {
  try {
    fn();
  } catch (err) {
    if (isTpError(err, ErrorCode.ConfigInvalid)) return err;
    throw err;
  }
  throw new Error('did not throw');
}

const shared = { 'redis.url': 'redis://10.0.0.5:6379', 'database.url': 'postgres://db.internal/tidepool', 'deployment.singleInstance': false };

describe('checkSharedState', () => {
  it('refuses a service that moves money without Redis, naming REDIS_URL', () => {
    const err = thrown(() => checkSharedState('the executor (real mode)', { ...shared, 'redis.url': '' }));
    expect(err.code).toBe(ErrorCode.ConfigInvalid);
    expect(err.message).toContain('REDIS_URL (redis.url');
    expect(err.message).not.toContain('DATABASE_URL');
    expect(err.message).toContain('TIDEPOOL_SINGLE_INSTANCE=true');
    expect(err.context).toEqual({ setting: 'REDIS_URL (redis.url)', service: 'the executor (real mode)', missing: ['REDIS_URL (redis.url)'] });
  });

  it('refuses it without PostgreSQL, naming DATABASE_URL, and names both when both are missing', () => {
    expect(thrown(() => checkSharedState('wallet service', { ...shared, 'database.url': '' })).message).toMatch(/^wallet service moves money.*DATABASE_URL \(database\.url/);
    const both = thrown(() => checkSharedState('wallet service', { ...shared, 'redis.url': '', 'database.url': '' }));
    expect('missing' in both.context && both.context.missing).toEqual(['REDIS_URL (redis.url)', 'DATABASE_URL (database.url)']);
  });

  it('never prints the URLs it is given', () => {
    const err = thrown(() => checkSharedState('executor', { ...shared, 'redis.url': '', 'database.url': 'postgres://user:s3cret@db/x' }));
    expect(err.message).not.toContain('s3cret');
  });

  it('lets one process run alone with deployment.singleInstance, and says so for /health', () => {
    const safety = checkSharedState('executor', { 'redis.url': '', 'database.url': '', 'deployment.singleInstance': true });
    expect(safety).toEqual({ singleInstance: true, missing: ['REDIS_URL (redis.url)', 'DATABASE_URL (database.url)'] });
    expect(deploymentHealth(safety).deployment).toMatchObject({ mode: 'single-instance', missing: safety.missing });
    expect(deploymentHealth(safety).deployment.warning).toContain('running alone');
  });

  it('with both set, is a shared deployment whatever the flag says', () => {
    for (const flag of [false, true]) {
      const safety = checkSharedState('executor', { ...shared, 'deployment.singleInstance': flag });
      expect(deploymentHealth(safety)).toEqual({ deployment: { mode: 'shared' } });
    }
  });

  it('reads the flag from TIDEPOOL_SINGLE_INSTANCE and --single-instance', () => {
    expect(loadConfig(deploymentSafetySchema, { env: { TIDEPOOL_SINGLE_INSTANCE: 'true' } }).values['deployment.singleInstance']).toBe(true);
    expect(loadConfig(deploymentSafetySchema, { env: {}, flags: { 'single-instance': true } }).values['deployment.singleInstance']).toBe(true);
    expect(loadConfig(deploymentSafetySchema, { env: {} }).values['deployment.singleInstance']).toBe(false);
  });
});

const schema = {
  'rpc.endpoints': setting({ description: 'rpc', parse: uniqueList(url()), default: ['http://127.0.0.1:8899'], env: 'RPC_ENDPOINTS', flag: 'rpc-endpoints' }),
  'executor.blockEngineUrl': setting({ description: 'be', parse: url(), default: 'http://127.0.0.1:8890', env: 'BLOCK_ENGINE_URL', flag: 'block-engine-url' }),
  'externalFallback.quoteUrl': setting({ description: 'q', parse: url(), default: 'http://127.0.0.1:8890/swap/v1/quote', env: 'EXTERNAL_FALLBACK_URL' }),
  'externalFallback.enabled': setting({ description: 'e', parse: bool(), default: true, env: 'EXTERNAL_FALLBACK' }),
};
const ENDPOINTS = ['executor.blockEngineUrl', 'externalFallback.quoteUrl'] as const;

describe('refuseLoopbackDefaults', () => {
  it('refuses a remote RPC with the block engine and the external quote URL at their loopback defaults, naming both', () => {
    const loaded = loadConfig(schema, { env: { RPC_ENDPOINTS: 'https://user:key123@mainnet.example-rpc.com/?api-key=abc' } });
    const err = thrown(() => refuseLoopbackDefaults(schema, loaded, ['rpc.endpoints'], ENDPOINTS));
    expect(err.code).toBe(ErrorCode.ConfigInvalid);
    expect(err.message).toContain('RPC_ENDPOINTS (rpc.endpoints)');
    expect(err.message).toContain("BLOCK_ENGINE_URL (executor.blockEngineUrl) is the simulator's loopback default http://127.0.0.1:8890");
    expect(err.message).toContain('EXTERNAL_FALLBACK_URL (externalFallback.quoteUrl)');
    // The RPC URL carries the provider's key: never printed.
    expect(err.message).not.toMatch(/key123|api-key|example-rpc/);
    expect(err.context).toEqual({ setting: ENDPOINTS.join(', '), remoteRpc: ['rpc.endpoints'], settings: [...ENDPOINTS] });
  });

  it('refuses only the settings still at their default', () => {
    const loaded = loadConfig(schema, { env: { RPC_ENDPOINTS: 'https://rpc.example.com', BLOCK_ENGINE_URL: 'https://mainnet.block-engine.jito.wtf' } });
    const err = thrown(() => refuseLoopbackDefaults(schema, loaded, ['rpc.endpoints'], ENDPOINTS));
    expect('settings' in err.context && err.context.settings).toEqual(['externalFallback.quoteUrl']);
  });

  it('passes a loopback RPC (the simulator), endpoints set on purpose (even to loopback), and settings not checked', () => {
    const local = loadConfig(schema, { env: {} });
    expect(() => refuseLoopbackDefaults(schema, local, ['rpc.endpoints'], ENDPOINTS)).not.toThrow();
    const deliberate = loadConfig(schema, { env: { RPC_ENDPOINTS: 'https://rpc.example.com', BLOCK_ENGINE_URL: 'http://127.0.0.1:8890', EXTERNAL_FALLBACK_URL: 'http://localhost:8080/quote' } });
    expect(() => refuseLoopbackDefaults(schema, deliberate, ['rpc.endpoints'], ENDPOINTS)).not.toThrow();
    const remote = loadConfig(schema, { env: { RPC_ENDPOINTS: 'https://rpc.example.com' } });
    expect(() => refuseLoopbackDefaults(schema, remote, ['rpc.endpoints'], [])).not.toThrow();
  });

  it('counts any remote endpoint among several as remote', () => {
    const loaded = loadConfig(schema, { env: { RPC_ENDPOINTS: 'http://127.0.0.1:8899,https://rpc.example.com' } });
    expect(() => refuseLoopbackDefaults(schema, loaded, ['rpc.endpoints'], ['executor.blockEngineUrl'])).toThrow(TpError);
  });

  it('knows loopback hosts', () => {
    for (const u of ['http://127.0.0.1:8899', 'http://127.4.5.6', 'http://localhost:1', 'http://[::1]:8890', 'http://api.localhost']) expect(isLoopbackUrl(u), u).toBe(true);
    for (const u of ['https://rpc.example.com', 'http://10.0.0.1', 'http://128.0.0.1', 'not a url']) expect(isLoopbackUrl(u), u).toBe(false);
  });
});
