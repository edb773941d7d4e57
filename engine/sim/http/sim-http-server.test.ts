import { request as httpRequest } from 'node:http';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { isTpError } from '../../errors.js';
import { createLogger } from '../../obs/logger.js';
import { HttpError, HttpErrorCode, readJson, sendJson } from './http-io.js';
import { Router } from './router.js';
import { isLoopbackHost, SimHttpServer } from './sim-http-server.js';

const logger = createLogger({ level: 'silent' });
let server: SimHttpServer;

beforeEach(async () => {
  server = new SimHttpServer({ port: 0, logger, shutdownTimeoutMs: 200 });
  await server.start();
});

afterEach(async () => {
  await server.close();
});

describe('SimHttpServer', () => {
  it('serves a route plugged in with one call, even after start', async () => {
    server.route('GET', '/quote', (_req, res, ctx) => sendJson(res, 200, { inputMint: ctx.url.searchParams.get('inputMint') }));
    const res = await fetch(`${server.url}/quote?inputMint=So11111111111111111111111111111111111111112`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ inputMint: 'So11111111111111111111111111111111111111112' });
  });

  it('passes path parameters to the handler', async () => {
    server.route('GET', '/things/:id/parts/:part', (_req, res, ctx) => sendJson(res, 200, ctx.params));
    const res = await fetch(`${server.url}/things/a%20b/parts/7`);
    expect(await res.json()).toEqual({ id: 'a b', part: '7' });
  });

  it('answers 404 with a JSON error for an unknown path', async () => {
    const res = await fetch(`${server.url}/nowhere`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'TP_ERR_NOT_FOUND', message: 'no route for /nowhere' } });
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    server.route('GET', '/x', (_req, res) => sendJson(res, 200, {}));
    server.route('DELETE', '/x', (_req, res) => sendJson(res, 200, {}));
    const res = await fetch(`${server.url}/x`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, GET');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_METHOD_NOT_ALLOWED');
  });

  it('answers an HttpError thrown by a handler with its status and code', async () => {
    server.route('GET', '/limited', () => {
      throw new HttpError(429, HttpErrorCode.InvalidParameter, 'slow down', { 'retry-after': '1' });
    });
    const res = await fetch(`${server.url}/limited`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: { code: 'TP_ERR_BAD_PARAMETER', message: 'slow down' } });
  });

  it('answers 500 without details when a handler fails unexpectedly', async () => {
    server.route('GET', '/broken', async () => {
      throw new Error('secret internals');
    });
    const res = await fetch(`${server.url}/broken`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'TP_ERR_INTERNAL', message: 'internal error' } });
  });

  it('refuses a body above the limit with 413', async () => {
    server.route('POST', '/echo', async (req, res) => sendJson(res, 200, await readJson(req, 1024)));
    const res = await fetch(`${server.url}/echo`, { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(5000) }) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_PAYLOAD_TOO_LARGE');
  });

  it('closes while a keep-alive connection is idle', async () => {
    server.route('GET', '/ping', (_req, res) => sendJson(res, 200, { ok: true }));
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.url}/ping`, { agent: undefined, headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses to bind anything but loopback', () => {
    let err: unknown;
    try {
      new SimHttpServer({ host: '0.0.0.0', logger });
    } catch (e) {
      err = e;
    }
    expect(isTpError(err, 'TP_ERR_CONFIG_INVALID')).toBe(true);
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    expect(isLoopbackHost('::')).toBe(false);
  });
});

describe('Router', () => {
  it('prefers a literal segment over a parameter', () => {
    const router = new Router();
    const literal = () => {};
    const param = () => {};
    router.route('POST', '/a/:x', param);
    router.route('POST', '/a/b', literal);
    const m = router.match('POST', '/a/b');
    expect(m.kind === 'found' && m.handler).toBe(literal);
    const p = router.match('post', '/a/c');
    expect(p.kind === 'found' && p.params).toEqual({ x: 'c' });
  });

  it('refuses the same method and pattern twice', () => {
    const router = new Router().route('GET', '/a/:x', () => {});
    expect(() => router.route('GET', '/a/:y', () => {})).toThrow(/conflicts/);
  });

  it('ignores trailing slashes and reports no match for other lengths', () => {
    const router = new Router().route('GET', '/admin/faults', () => {});
    expect(router.match('GET', '/admin/faults/').kind).toBe('found');
    expect(router.match('GET', '/admin').kind).toBe('none');
  });
});
