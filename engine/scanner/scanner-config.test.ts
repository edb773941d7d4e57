import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { DEFAULT_PROGRAM_IDS } from '../dex/program-ids.js';
import { isTpError } from '../errors.js';
import { blockStreamSettings, dexPrograms, loadScannerConfig, monitoredPools, readPoolsFile } from './scanner-config.js';

const POOL_A = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const POOL_B = 'Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isTpError(err)) return `${err.code} ${err.message}`;
    throw err;
  }
  throw new Error('expected an error');
}

function tempFile(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tidepool-scanner-')), name);
  writeFileSync(path, text);
  return path;
}

describe('scanner configuration', () => {
  it('has the defaults of spec 02', () => {
    const { values } = loadScannerConfig({ env: {} });
    expect(values).toMatchObject({
      'blockstream.host': '127.0.0.1',
      'blockstream.port': 50051,
      'blockstream.regions': ['ny'],
      'blockstream.enableHeartbeat': false,
      'blockstream.heartbeatIp': '',
      'pools.monitored': [],
      'bus.streamName': 'POOL_UPDATES',
      'bus.maxAge': 60_000,
      'performance.maxConcurrentProcessing': 20,
      'performance.batchSize': 10,
      'performance.queueSizeLimit': 100,
      'metrics.prometheusPort': 9091,
      'metrics.logLevel': 'info',
      'health.port': 8081,
    });
    expect(dexPrograms(values)).toEqual(DEFAULT_PROGRAM_IDS);
    expect(blockStreamSettings(values)).toEqual({ host: '127.0.0.1', port: 50051 });
  });

  it('reads every environment variable of spec 02', () => {
    const { values, sources } = loadScannerConfig({
      env: {
        BLOCKSTREAM_HOST: 'proxy.internal',
        BLOCKSTREAM_PORT: '9999',
        BLOCKSTREAM_REGIONS: 'ny,amsterdam',
        BLOCKSTREAM_HEARTBEAT: 'true',
        BLOCKSTREAM_HEARTBEAT_IP: '10.0.0.5',
        BUS_SERVERS: 'nats://a:4222, nats://b:4222',
        BUS_STREAM_NAME: 'POOLS_TEST',
        MONITORED_POOLS: `${POOL_A},${POOL_B}`,
        LOG_LEVEL: 'debug',
        METRICS_PORT: '19091',
      },
    });
    expect(values).toMatchObject({
      'blockstream.host': 'proxy.internal',
      'blockstream.port': 9999,
      'blockstream.regions': ['ny', 'amsterdam'],
      'blockstream.enableHeartbeat': true,
      'bus.servers': ['nats://a:4222', 'nats://b:4222'],
      'bus.streamName': 'POOLS_TEST',
      'pools.monitored': [POOL_A, POOL_B],
      'metrics.logLevel': 'debug',
      'metrics.prometheusPort': 19091,
    });
    expect(sources['blockstream.port']).toBe('env');
    expect(blockStreamSettings(values)).toEqual({
      host: 'proxy.internal',
      port: 9999,
      heartbeat: { ip: '10.0.0.5', port: 20_000, regions: ['ny', 'amsterdam'] },
    });
    expect(monitoredPools(values)).toEqual([POOL_A, POOL_B]);
  });

  it('reads nested settings from a config file', () => {
    const file = tempFile(
      'scanner.json',
      JSON.stringify({
        blockstream: { port: 10000 },
        pools: { dexProgram: { dexa_amm: POOL_A } },
        performance: { batchSize: 25 },
        bus: { maxAge: '2m' },
      }),
    );
    const { values } = loadScannerConfig({ env: {}, file });
    expect(values['blockstream.port']).toBe(10000);
    expect(values['performance.batchSize']).toBe(25);
    expect(values['bus.maxAge']).toBe(120_000);
    expect(dexPrograms(values).dexa_amm).toBe(POOL_A);
  });

  it.each([
    [{ BLOCKSTREAM_PORT: '0' }, 'blockstream.port'],
    [{ BLOCKSTREAM_PORT: '70000' }, 'blockstream.port'],
    [{ BLOCKSTREAM_HOST: ' ' }, 'blockstream.host'],
    [{ BLOCKSTREAM_REGIONS: 'ny,amsterdam,tokyo' }, 'blockstream.regions'],
    [{ BLOCKSTREAM_REGIONS: 'ny,ny' }, 'blockstream.regions'],
    [{ BLOCKSTREAM_REGIONS: 'New York' }, 'blockstream.regions'],
    [{ BLOCKSTREAM_HEARTBEAT: 'maybe' }, 'blockstream.enableHeartbeat'],
    [{ BLOCKSTREAM_HEARTBEAT_IP: 'scanner.local' }, 'blockstream.heartbeatIp'],
    [{ BLOCKSTREAM_HEARTBEAT: 'true' }, 'blockstream.heartbeatIp'],
    [{ MONITORED_POOLS: 'not-a-pubkey' }, 'pools.monitored'],
    [{ MONITORED_POOLS: `${POOL_A},${POOL_A}` }, 'pools.monitored'],
    [{ BUS_SERVERS: 'http://a:4222' }, 'bus.servers'],
    [{ BUS_STREAM_NAME: 'POOL.UPDATES' }, 'bus.streamName'],
    [{ LOG_LEVEL: 'verbose' }, 'metrics.logLevel'],
    [{ METRICS_PORT: '-1' }, 'metrics.prometheusPort'],
    [{ HEALTH_PORT: 'http' }, 'health.port'],
  ])('rejects %j naming %s', (env, name) => {
    const message = errorOf(() => loadScannerConfig({ env }));
    expect(message).toContain('TP_ERR_CONFIG_INVALID');
    expect(message).toContain(name);
  });

  it.each([
    [{ performance: { batchSize: 0 } }, 'performance.batchSize'],
    [{ performance: { batchSize: 101 } }, 'performance.batchSize'],
    [{ performance: { maxConcurrentProcessing: 1.5 } }, 'performance.maxConcurrentProcessing'],
    [{ performance: { queueSizeLimit: -1 } }, 'performance.queueSizeLimit'],
    [{ bus: { maxAge: 'forever' } }, 'bus.maxAge'],
    [{ pools: { dexProgram: { dexb_dlmm: 'xyz' } } }, 'pools.dexProgram.dexb_dlmm'],
    [{ pools: { dexProgram: { dexc_whirlpool: DEFAULT_PROGRAM_IDS.dexa_amm } } }, 'pools.dexProgram.dexc_whirlpool'],
    // Spec 02's simplified AMM layout is never read for the real Raydium AMM v4 program.
    [{ pools: { ammLayout: 'spec02-simplified' } }, 'pools.ammLayout'],
    [{ pools: { ammLayout: 'uniswap' } }, 'pools.ammLayout'],
  ])('rejects the file value %j naming %s', (json, name) => {
    const file = tempFile('scanner.json', JSON.stringify(json));
    const message = errorOf(() => loadScannerConfig({ env: {}, file }));
    expect(message).toContain(name);
  });

  it('reads AmmInfo by default and spec 02\'s layout only when set to, for another program id', () => {
    expect(loadScannerConfig({ env: {} }).values['pools.ammLayout']).toBe('raydium-amm-v4');
    const file = tempFile('scanner.json', JSON.stringify({ pools: { ammLayout: 'spec02-simplified', dexProgram: { dexa_amm: POOL_A } } }));
    expect(loadScannerConfig({ env: {}, file }).values['pools.ammLayout']).toBe('spec02-simplified');
  });

  it('loads the monitored pools from the file when MONITORED_POOLS is empty', () => {
    const list = tempFile('pools.json', JSON.stringify([POOL_A, POOL_B]));
    const { values } = loadScannerConfig({ env: { MONITORED_POOLS: '', MONITORED_POOLS_FILE: list } });
    expect(monitoredPools(values)).toEqual([POOL_A, POOL_B]);
    expect(readPoolsFile(tempFile('pools.json', JSON.stringify({ pools: [POOL_B] })))).toEqual([POOL_B]);
  });

  it('rejects a pools file that is missing or holds a bad address, naming the file', () => {
    expect(errorOf(() => readPoolsFile('/nonexistent/pools.json'))).toContain('pools.file /nonexistent/pools.json');
    const bad = tempFile('pools.json', JSON.stringify([POOL_A, 'nope']));
    expect(errorOf(() => readPoolsFile(bad))).toMatch(/pools\.file .*item 1/);
    expect(errorOf(() => readPoolsFile(tempFile('pools.json', '{"x":1}')))).toContain('expected an array');
  });
});
