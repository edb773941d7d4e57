import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTpError, ErrorCode } from '../errors.js';
import { parseCommandLine } from './command-line.js';
import { describeSchema, loadConfig, redactedValues, setting } from './loader.js';
import { bool, duration, hostPort, int, list, oneOf, port, str, url } from './setting-types.js';

const schema = {
  'blockstream.port': setting({ description: 'stream port', parse: port(), default: 50051, env: 'BLOCKSTREAM_PORT', flag: 'blockstream-port' }),
  'blockstream.regions': setting({ description: 'regions', parse: list(str({ nonEmpty: true })), default: ['ny'], env: 'BLOCKSTREAM_REGIONS', flag: 'regions' }),
  'blockstream.enableHeartbeat': setting({ description: 'heartbeats', parse: bool(), default: false, env: 'BLOCKSTREAM_HEARTBEAT', flag: 'enable-heartbeat' }),
  'cache.firstTimeout': setting({ description: 'timeout', parse: duration(), default: 10, env: 'CACHE_FIRST_TIMEOUT', flag: 'cache-first-timeout' }),
  'log.level': setting({ description: 'level', parse: oneOf(['debug', 'info', 'warn'] as const), default: 'info' as const, env: 'LOG_LEVEL' }),
  'jwt.secret': setting({ description: 'secret', parse: str(), default: '', env: 'TIDEPOOL_JWT_SECRET', secret: true }),
};

function writeJson(value: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'tp-config-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

function configError(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isTpError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a configuration error');
}

describe('loadConfig', () => {
  it('uses defaults when nothing sets a value', () => {
    const { values, sources } = loadConfig(schema, { env: {} });
    expect(values['blockstream.port']).toBe(50051);
    expect(values['blockstream.regions']).toEqual(['ny']);
    expect(sources['blockstream.port']).toBe('default');
  });

  it('applies flag over environment over file over default', () => {
    const file = writeJson({ blockstream: { port: 1111, regions: ['tokyo'] }, 'cache.firstTimeout': '25ms' });
    const env = { BLOCKSTREAM_PORT: '2222', BLOCKSTREAM_REGIONS: 'ny, amsterdam' };
    const { values, sources } = loadConfig(schema, { env, file, flags: { 'blockstream-port': '3333' } });
    expect(values['blockstream.port']).toBe(3333);
    expect(sources['blockstream.port']).toBe('flag');
    expect(values['blockstream.regions']).toEqual(['ny', 'amsterdam']);
    expect(sources['blockstream.regions']).toBe('env');
    expect(values['cache.firstTimeout']).toBe(25);
    expect(sources['cache.firstTimeout']).toBe('file');

    const fromFile = loadConfig(schema, { env: {}, file });
    expect(fromFile.values['blockstream.port']).toBe(1111);
  });

  it('reads the config file named by TIDEPOOL_CONFIG', () => {
    const file = writeJson({ 'blockstream.port': 4444 });
    expect(loadConfig(schema, { env: { TIDEPOOL_CONFIG: file } }).values['blockstream.port']).toBe(4444);
  });

  it('reports every invalid setting at once, naming the setting and its source', () => {
    const err = configError(() =>
      loadConfig(schema, { env: { BLOCKSTREAM_PORT: 'abc', LOG_LEVEL: 'loud' }, flags: { 'cache-first-timeout': 'soon' } }),
    );
    expect(err.code).toBe(ErrorCode.ConfigInvalid);
    expect(err.message).toContain('blockstream.port from environment variable BLOCKSTREAM_PORT = "abc": expected an integer');
    expect(err.message).toContain('log.level from environment variable LOG_LEVEL = "loud": expected one of debug, info, warn');
    expect(err.message).toContain('cache.firstTimeout from flag --cache-first-timeout = "soon": expected a duration');
  });

  it('rejects a port out of range and masks secrets in errors', () => {
    expect(configError(() => loadConfig(schema, { env: { BLOCKSTREAM_PORT: '70000' } })).message).toContain('from 0 to 65535');
    const err = configError(() => loadConfig({ s: setting({ description: 's', parse: int(), default: 0, env: 'S', secret: true }) }, { env: { S: 'hunter2' } }));
    expect(err.message).toContain('(secret)');
    expect(err.message).not.toContain('hunter2');
  });

  it('rejects unknown keys, bad JSON and a missing file with the file named', () => {
    expect(configError(() => loadConfig(schema, { env: {}, file: writeJson({ blockstream: { prot: 1 } }) })).message).toContain('unknown settings: blockstream.prot');
    const bad = writeJson('{not json');
    const badErr = configError(() => loadConfig(schema, { env: {}, file: bad }));
    expect(badErr.code).toBe(ErrorCode.ConfigFile);
    expect(badErr.message).toContain(bad);
    expect(configError(() => loadConfig(schema, { env: {}, file: '/nonexistent/tidepool.json' })).code).toBe(ErrorCode.ConfigFile);
  });

  it('shows settings with secrets redacted', () => {
    const loaded = loadConfig(schema, { env: { TIDEPOOL_JWT_SECRET: 'hunter2' } });
    expect(redactedValues(schema, loaded)['jwt.secret']).toBe('[redacted]');
    expect(describeSchema(schema)).toContain('--blockstream-port, BLOCKSTREAM_PORT');
  });
});

describe('setting types', () => {
  it('parses durations in several units', () => {
    const d = duration();
    expect(d('10ms')).toBe(10);
    expect(d('30s')).toBe(30_000);
    expect(d('1m30s')).toBe(90_000);
    expect(d(250)).toBe(250);
    expect(d('500us')).toBeCloseTo(0.5);
    expect(() => d('ten')).toThrow(/duration/);
  });

  it('validates URLs, host:port and booleans', () => {
    expect(url(['nats:'])('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
    expect(() => url(['nats:'])('http://x')).toThrow(/nats URL/);
    expect(hostPort()('localhost:50052')).toBe('localhost:50052');
    expect(() => hostPort()('localhost')).toThrow(/host:port/);
    expect(bool()('off')).toBe(false);
    expect(() => bool()('maybe')).toThrow(/true or false/);
    expect(() => list(int(), { min: 3 })('1,2')).toThrow(/at least 3/);
  });
});

describe('parseCommandLine', () => {
  it('accepts Go-style single-dash flags, bare booleans and positionals', () => {
    const parsed = parseCommandLine(['-blockstream-port', '9999', '--enable-heartbeat', 'file.bin', '--regions=ny,tokyo'], schema);
    expect(parsed.flags).toEqual({ 'blockstream-port': '9999', 'enable-heartbeat': 'true', regions: 'ny,tokyo' });
    expect(parsed.positionals).toEqual(['file.bin']);
    const loaded = loadConfig(schema, { env: {}, flags: parsed.flags });
    expect(loaded.values['blockstream.enableHeartbeat']).toBe(true);
    expect(loaded.values['blockstream.regions']).toEqual(['ny', 'tokyo']);
  });

  it('takes an explicit boolean value after a boolean flag', () => {
    expect(parseCommandLine(['--enable-heartbeat', 'false'], schema).flags['enable-heartbeat']).toBe('false');
  });

  it('fails with a usage error on an unknown flag', () => {
    expect(configError(() => parseCommandLine(['--nope'], schema)).code).toBe(ErrorCode.Usage);
  });
});
