import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, resolveLogLevel } from './logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes JSON lines with the level label and service name', () => {
    const { stream, lines } = capture();
    const log = createLogger({ name: 'scanner', level: 'info', destination: stream });
    log.info({ slot: '5' }, 'entry received');
    log.debug('not shown at info');
    const out = lines();
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ level: 'info', service: 'scanner', slot: '5', msg: 'entry received' });
  });

  it('redacts secrets wherever they appear', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', destination: stream });
    log.info({ wallet: { privateKey: 'abc' }, token: 't0k', headers: { authorization: 'Bearer x' } }, 'wallet');
    const line = JSON.stringify(lines()[0]);
    expect(line).not.toContain('abc');
    expect(line).not.toContain('t0k');
    expect(line).not.toContain('Bearer');
    expect(line).toContain('[redacted]');
  });

  it('takes the level from LOG_LEVEL and rejects unknown levels', () => {
    expect(resolveLogLevel('DEBUG')).toBe('debug');
    expect(resolveLogLevel(undefined)).toBe('info');
    expect(() => resolveLogLevel('loud')).toThrow(/LOG_LEVEL/);
  });
});

describe('createLogger masks secrets by content (engine/secret-mask.ts)', () => {
  it('in the message, the object, errors and child bindings', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', destination: stream }).child({ upstream: 'http://user:b1ndpass@h:1' });
    const err = new Error('fetch http://user:errpass@h:8899/?api-key=errkey failed');
    log.error({ err, endpoints: ['https://rpc.example.com/?api-key=objkey'] }, 'cannot read http://user:msgpass@h:8899');
    const line = JSON.stringify(lines()[0]);
    for (const secret of ['b1ndpass', 'errpass', 'errkey', 'objkey', 'msgpass']) expect(line, secret).not.toContain(secret);
    const out = lines()[0]!;
    expect(out.msg).toBe('cannot read http://user:***@h:8899');
    // The error keeps pino's shape and its stack.
    expect((out.err as { type: string; stack: string }).type).toBe('Error');
    expect((out.err as { type: string; stack: string }).stack).toContain('logger.test.ts');
  });
});

describe('createLogger redacts top-level secret fields by name', () => {
  it('apiKey, upstreamToken', () => {
    const { stream, lines } = capture();
    createLogger({ level: 'info', destination: stream }).info({ apiKey: 'k-123', upstreamToken: 'tok-456' }, 'x');
    const line = JSON.stringify(lines()[0]);
    expect(line).not.toContain('k-123');
    expect(line).not.toContain('tok-456');
  });
});
