import { existsSync } from 'node:fs';
import { request } from 'node:http';

import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PARSE_WORKER, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * Issue 11, item 7: POST /config/pools on the scanner port (8081) answers every bad request with
 * its status and leaves the monitored pools as they were: 413 for a body over 1 MiB (drained,
 * answered, then the connection closed: no reset), 400 for a deeply nested body (was a 500 stack
 * overflow) and for an empty list (was accepted, leaving the scanner monitoring nothing), 401
 * without a valid JWT bearer token when auth is on.
 */
const built = existsSync(PARSE_WORKER);
const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code: string; message: string }; pools?: number };
  /** The socket closed after the answer (Connection: close honoured). */
  closed: boolean;
}

/** POSTs `body` (sent in 64 KiB chunks, as a client uploading would) and reads the answer. */
function post(base: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(`${base}/config/pools`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const socket = res.socket;
        const finish = (closed: boolean): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Answer['body'], closed });
        if (socket === null || socket.destroyed) finish(true);
        else socket.once('close', () => finish(true));
      });
    });
    req.on('error', reject);
    req.shouldKeepAlive = false;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    for (let off = 0; off < bytes.length; off += 65_536) req.write(bytes.subarray(off, off + 65_536));
    req.end();
  });
}

describe.skipIf(!built)('POST /config/pools refuses bad requests with their status', () => {
  let e: EngineUnderSim;
  beforeAll(async () => {
    e = await startEngineUnderSim();
  });
  afterAll(async () => {
    await e?.close();
  });

  it('answers 413 to a body over 1 MiB, after reading it, and closes the connection', async () => {
    const before = e.engine.scanner.pools;
    const huge = JSON.stringify({ pools: Array.from({ length: 40_000 }, () => '11111111111111111111111111111111') });
    expect(huge.length).toBeGreaterThan(1 << 20);
    const answer = await post(e.endpoints.scanner, huge);
    expect(answer.status).toBe(413);
    expect(answer.body.error?.code).toBe('TP_ERR_PAYLOAD_TOO_LARGE');
    expect(answer.headers.connection).toBe('close');
    expect(answer.closed).toBe(true);
    expect(e.engine.scanner.pools).toEqual(before);
  });

  it('answers 400 to a deeply nested body instead of overflowing the stack', async () => {
    const before = e.engine.scanner.pools;
    const deep = `{"pools":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const answer = await post(e.endpoints.scanner, deep);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toContain('nests deeper than');
    // Shallow enough to parse, but an array where an address belongs.
    const nested = await post(e.endpoints.scanner, JSON.stringify({ pools: [[['x']]] }));
    expect(nested.status).toBe(400);
    expect(nested.body.error?.message).toContain('pools[0] is an array');
    expect(e.engine.scanner.pools).toEqual(before);
  });

  it('answers 400 to an empty pool list and keeps monitoring what it did', async () => {
    const before = e.engine.scanner.pools;
    expect(before.length).toBeGreaterThan(0);
    for (const body of ['{"pools":[]}', '[]']) {
      const answer = await post(e.endpoints.scanner, body);
      expect(answer.status, body).toBe(400);
      expect(answer.body.error?.code).toBe('TP_ERR_CONFIG_INVALID');
      expect(answer.body.error?.message).toContain('empty');
    }
    expect(e.engine.scanner.pools).toEqual(before);
  });
});

describe.skipIf(!built)('POST /config/pools behind JWT bearer auth', () => {
  let e: EngineUnderSim;
  beforeAll(async () => {
    e = await startEngineUnderSim({ engine: { auth: 'on', 'jwt-secret': SECRET } });
  });
  afterAll(async () => {
    await e?.close();
  });

  it('answers 401 without a valid token and replaces the pools with one', async () => {
    const before = e.engine.scanner.pools;
    const body = JSON.stringify({ pools: [before[0]] });
    const none = await post(e.endpoints.scanner, body);
    expect(none.status).toBe(401);
    expect(none.body.error?.code).toBe('TP_ERR_UNAUTHENTICATED');
    expect(none.body.error?.message).toContain('missing Authorization header');
    const wrongKey = await new SignJWT({ sub: 'ops' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode('another-secret-of-at-least-32-bytes!!'));
    const bad = await post(e.endpoints.scanner, body, { Authorization: `Bearer ${wrongKey}` });
    expect(bad.status).toBe(401);
    expect(bad.body.error?.message).toContain('signature');
    expect(bad.body.error?.message).not.toContain(wrongKey);
    expect(e.engine.scanner.pools).toEqual(before);

    const token = await new SignJWT({ sub: 'ops' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
    const ok = await post(e.endpoints.scanner, body, { Authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(e.engine.scanner.pools).toEqual([before[0]]);
    // Probes stay open.
    expect((await fetch(`${e.endpoints.scanner}/stats`)).status).toBe(200);
  });
});
