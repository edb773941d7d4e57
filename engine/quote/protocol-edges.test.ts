import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { createFallbackLoader } from '../quote-service/rpc-loader.js';
import { manualSimulator, quoteHttpServer, storePool } from './testing.js';

/**
 * Issue 11 items 9 (the uWS port's protocol edges) and 10 (misleading answers), over real HTTP.
 */
const sim = manualSimulator();
const cache = new PoolCache({ stalenessThresholdMs: 3_600_000 });
let server: QuoteHttpServer;
let port = 0;
const Q = `/quote?input=${WSOL_MINT}&output=${USDC_MINT}`;

beforeAll(async () => {
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  server = quoteHttpServer({ cache, rateLimiter: false });
  port = await server.start(0);
});

afterAll(async () => {
  await server.close();
  await sim.close();
});

async function get(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: { error?: { code: string; message: string }; outputAmount?: string } }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as { error?: { code: string; message: string } } };
}

/** Sends raw bytes; resolves with what came back before the server answered (the status line). */
function raw(payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    let data = '';
    socket.on('data', (d) => {
      data += d.toString('latin1');
      if (data.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(data.slice(0, data.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
  });
}

describe('misleading answers (item 10)', () => {
  it('refuses a repeated query parameter, naming it', async () => {
    const r = await get(`${Q}&amount=1000&amount=5000000`);
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: ErrorCode.BadParameter, message: 'parameter amount is given more than once' });
    const unknownTwice = await get(`${Q}&amount=1000&x=1&x=2`);
    expect(unknownTwice.body.error?.message).toBe('parameter x is given more than once');
  });

  it('answers an amount too small to buy anything with TP_ERR_AMOUNT_TOO_SMALL, not 200 with output 0', async () => {
    const r = await get(`${Q}&amount=1`);
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: ErrorCode.AmountTooSmall, message: `amount 1 is too small: the best route gives 0 of ${USDC_MINT}` });
    const ok = await get(`${Q}&amount=1000000`);
    expect(ok.status).toBe(200);
    expect(BigInt(ok.body.outputAmount!)).toBeGreaterThan(0n);
  });

  it('with the RPC unreachable at start and nothing loaded: /quote 503 while /health says unavailable', async () => {
    const loader = createFallbackLoader(['http://127.0.0.1:1'], 500);
    const empty = quoteHttpServer({ cache: new PoolCache(), loader, rateLimiter: false });
    const emptyPort = await empty.start(0);
    try {
      const res = await fetch(`http://127.0.0.1:${emptyPort}${Q}&amount=1000000`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(ErrorCode.Unavailable);
      const health = await fetch(`http://127.0.0.1:${emptyPort}/health`);
      expect(health.status).toBe(503);
      expect(((await health.json()) as { status: string }).status).toBe('unavailable');
    } finally {
      await empty.close();
    }
  });
});

describe('protocol edges of the uWS port (item 9)', () => {
  it('answers another method on /quote with 405 and Allow: GET', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await get(`${Q}&amount=1000`, { method });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET');
      expect(r.body.error?.code).toBe(ErrorCode.MethodNotAllowed);
    }
    expect((await get('/health', { method: 'POST' })).status).toBe(405);
    expect((await get('/nowhere', { method: 'POST' })).status).toBe(404);
  });

  it('answers an over-long URL with 414 and over-large header fields with 431', async () => {
    expect(await raw(`GET ${Q}&amount=1000&pad=${'a'.repeat(9_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).toBe('HTTP/1.1 414 URI Too Long');
    expect(await raw(`GET ${Q}&amount=1000 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    // Under the limits: served.
    expect(await raw(`GET ${Q}&amount=1000000 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(8_000)}\r\n\r\n`)).toBe('HTTP/1.1 200 OK');
  });
});
