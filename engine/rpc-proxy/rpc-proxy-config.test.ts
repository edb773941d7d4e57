import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseCommandLine } from '../config/command-line.js';
import { isTpError } from '../errors.js';
import { loadRpcProxyConfig, pubsubUrlOf, rpcProxySchema } from './rpc-proxy-config.js';

function load(argv: string[], env: NodeJS.ProcessEnv = {}, file?: string) {
  const { flags } = parseCommandLine(argv, rpcProxySchema);
  return loadRpcProxyConfig({ flags, env, ...(file === undefined ? {} : { file }) }).values;
}

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isTpError(err, 'TP_ERR_CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('expected TP_ERR_CONFIG_INVALID');
}

describe('rpc proxy settings', () => {
  it('default as spec 03 and docs/architecture.md give them', () => {
    expect(load([])).toMatchObject({
      endpoints: ['http://127.0.0.1:8899'],
      ws_endpoints: [],
      max_connections_per_endpoint: 100,
      health_check_interval: 30_000,
      request_timeout: 10_000,
      retry_count: 2,
      max_slot_lag: 10,
      failure_threshold: 3,
      max_body_bytes: 51_200,
      host: '127.0.0.1',
      port: 8083,
      shutdown_timeout: 10_000,
    });
  });

  it('take the spec\'s names in a config file, under environment variables and flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-rpc-proxy-'));
    const file = join(dir, 'proxy.json');
    writeFileSync(
      file,
      JSON.stringify({ endpoints: ['https://a.example/key-1', 'https://b.example:8899'], max_connections_per_endpoint: 50, health_check_interval: '5s', request_timeout: 2500, retry_count: 1 }),
    );
    const v = load(['-retry-count', '4'], { RPC_PROXY_HEALTH_CHECK_INTERVAL: '250ms' }, file);
    expect(v).toMatchObject({ endpoints: ['https://a.example/key-1', 'https://b.example:8899'], max_connections_per_endpoint: 50, health_check_interval: 250, request_timeout: 2500, retry_count: 4 });
    expect(load([], { RPC_PROXY_ENDPOINTS: 'http://a:1, http://b:2' }).endpoints).toEqual(['http://a:1', 'http://b:2']);
  });

  it('name every bad setting and never print an endpoint URL', () => {
    const message = failure(() =>
      load(['--endpoints', 'http://a.example/SECRETKEY,ftp://b', '--max-connections-per-endpoint', '0', '--retry-count', 'many', '--health-check-interval', 'often']),
    );
    expect(message).toContain('endpoints from flag --endpoints');
    expect(message).toContain('item 1 is not a http or https URL');
    expect(message).toContain('max_connections_per_endpoint');
    expect(message).toContain('retry_count');
    expect(message).toContain('health_check_interval');
    expect(message).not.toContain('SECRETKEY');
    expect(failure(() => load(['--endpoints', 'http://a:1,http://a:1']))).toContain('item 1 is listed twice');
    expect(failure(() => load(['--endpoints', 'http://a:1,http://b:1', '--ws-endpoints', 'ws://a:2']))).toContain('ws_endpoints: 1 URLs for 2 endpoints');
    // Paid providers put the key in the user info or the query: both are taken (the user info is
    // sent as Basic auth, rpc-proxy-secrets.test.ts), and never echoed.
    expect(load(['--endpoints', 'http://user:pw@a:1/?api-key=K']).endpoints).toEqual(['http://user:pw@a:1/?api-key=K']);
    expect(failure(() => load(['--endpoints', 'http://user:pw@a:1/?api-key=K,nope']))).not.toMatch(/pw|api-key=K/);
  });

  it('derive the PubSub URL as Solana clients do', () => {
    expect(pubsubUrlOf('http://127.0.0.1:8899')).toBe('ws://127.0.0.1:8900/');
    expect(pubsubUrlOf('https://rpc.example/v2/KEY?x=1')).toBe('wss://rpc.example/v2/KEY?x=1');
  });
});
