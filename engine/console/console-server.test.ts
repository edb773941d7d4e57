import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { createLogger } from '../obs/logger.js';
import { startConsole, type ConsoleApp } from './console-app.js';
import type { ConsoleMessage } from './console-hub.js';
import { WS_BEARER_PROTOCOL } from './console-server.js';
import type { PoolRow, PoolRowSource } from './pool-rows.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-bytes!';
const logger = createLogger({ name: 'console-test', level: 'silent' });

const ROW: PoolRow = { address: 'Pool1111111111111111111111111111111111111111', dex: 'dexa_amm', tokenA: 'A', tokenB: 'B', reserveA: '18446744073709551615', reserveB: '1', liquidity: null, slot: '7', ageMs: 0, fresh: true };
const fixedPools: PoolRowSource = { rows: async () => [{ ...ROW }], close: async () => {} };

async function token(secret = SECRET, expiresIn = '5m'): Promise<string> {
  return new SignJWT({ sub: 'operator' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(expiresIn).sign(new TextEncoder().encode(secret));
}

/** Opens a WebSocket; resolves with its first message, or rejects with the HTTP status it was refused with. */
function firstMessage(url: string, protocols?: string[]): Promise<ConsoleMessage> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.once('message', (data) => {
      resolve(JSON.parse(String(data)) as ConsoleMessage);
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('the console server', () => {
  let quote: Server;
  let quoteUrl: string;
  let planner: Server;
  let open: ConsoleApp;
  let guarded: ConsoleApp;

  beforeAll(async () => {
    // A stand-in quote upstream: echoes the query, with the status asked for.
    quote = createServer((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams;
      res.writeHead(Number(q.get('status') ?? 200), { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: Object.fromEntries(q) }));
    });
    await new Promise<void>((r) => quote.listen(0, '127.0.0.1', r));
    quoteUrl = `http://127.0.0.1:${(quote.address() as AddressInfo).port}`;
    // A stand-in planner: echoes what it was asked (method, path, Authorization, body), 207 to tell its answer apart.
    planner = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(207, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, path: req.url, authorization: req.headers.authorization ?? null, body }));
      });
    });
    await new Promise<void>((r) => planner.listen(0, '127.0.0.1', r));
    const plannerUrl = `http://127.0.0.1:${(planner.address() as AddressInfo).port}`;
    const base = { host: '127.0.0.1', port: 0, services: [], quoteUrl, pools: fixedPools, latency: {}, logger };
    open = await startConsole({ ...base, intervals: { pingMs: 50 }, auth: { 'auth.mode': 'auto', 'auth.jwtSecret': '', 'auth.jwtPublicKeyFile': '', 'auth.jwtAudience': '', 'auth.jwtIssuer': '' } });
    guarded = await startConsole({ ...base, plannerUrl, auth: { 'auth.mode': 'on', 'auth.jwtSecret': SECRET, 'auth.jwtPublicKeyFile': '', 'auth.jwtAudience': '', 'auth.jwtIssuer': '' } });
  });

  afterAll(async () => {
    await open?.close();
    await guarded?.close();
    await new Promise((r) => quote.close(r));
    await new Promise((r) => planner.close(r));
  });

  it('serves the page, its modules and uPlot from the package', async () => {
    const page = await fetch(`${open.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<script type="module" src="/app.js">');
    for (const path of ['/app.js', '/panels.js', '/strategies.js', '/format.js', '/style.css', '/vendor/uplot/uPlot.esm.js', '/vendor/uplot/uPlot.min.css']) {
      const res = await fetch(`${open.url}${path}`);
      expect(res.status, path).toBe(200);
      expect((await res.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
    }
    const uplot = await (await fetch(`${open.url}/vendor/uplot/uPlot.esm.js`)).text();
    expect(uplot).toContain('export { uPlot as default }');
  });

  it('answers unknown paths 404 and other methods 405, in the error shape', async () => {
    const missing = await fetch(`${open.url}/../../package.json`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_NOT_FOUND');
    const post = await fetch(`${open.url}/api/state`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('passes a quote through with its query, status and body', async () => {
    const ok = await fetch(`${open.url}/api/quote?input=A&output=B&amount=5&swapMode=ExactOut`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ echoed: { input: 'A', output: 'B', amount: '5', swapMode: 'ExactOut' } });
    const refused = await fetch(`${open.url}/api/quote?status=404`);
    expect(refused.status).toBe(404);
  });

  it('sends a snapshot first over the WebSocket, u64 values as strings', async () => {
    const m = await firstMessage(`${open.url.replace('http', 'ws')}/ws`);
    expect(m.type).toBe('snapshot');
    if (m.type === 'snapshot') expect(m.state.pools).toEqual([ROW]);
  });

  it('cuts a WebSocket that stops answering pings, and keeps one that answers', async () => {
    const url = `${open.url.replace('http', 'ws')}/ws`;
    const opened = (ws: WebSocket): Promise<void> => new Promise((r) => ws.once('open', () => r()));
    const silent = new WebSocket(url, { autoPong: false });
    const healthy = new WebSocket(url);
    await Promise.all([opened(silent), opened(healthy)]);
    const code = await new Promise<number>((r) => silent.once('close', (c) => r(c)));
    expect(code).toBe(1006); // terminated, no close frame
    // The answering one outlived several ping intervals.
    let pings = 0;
    healthy.on('ping', () => pings++);
    await new Promise<void>((r) => {
      const check = (): void => void (pings >= 3 ? r() : undefined);
      healthy.on('ping', check);
    });
    expect(healthy.readyState).toBe(WebSocket.OPEN);
    healthy.close();
  });

  it('with auth on, refuses /api and the WebSocket without a valid token, 401 TP_ERR_UNAUTHENTICATED', async () => {
    const none = await fetch(`${guarded.url}/api/state`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ error: { code: 'TP_ERR_UNAUTHENTICATED', message: 'a bearer token is required' } });
    const forged = await fetch(`${guarded.url}/api/quote?input=A`, { headers: { authorization: `Bearer ${await token('another-secret-of-at-least-thirty-two-bytes')}` } });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { message: string } }).error.message).toBe('token signature invalid');
    await expect(firstMessage(`${guarded.url.replace('http', 'ws')}/ws`)).rejects.toThrow('refused 401');
    await expect(firstMessage(`${guarded.url.replace('http', 'ws')}/ws`, [WS_BEARER_PROTOCOL, 'not.a.jwt'])).rejects.toThrow('refused 401');
    // The page itself holds no data and stays open, so it can ask for the token.
    expect((await fetch(`${guarded.url}/`)).status).toBe(200);
    expect((await fetch(`${guarded.url}/health`)).status).toBe(200);
  });

  it('with auth on, serves a valid token over HTTP and the WebSocket', async () => {
    const jwt = await token();
    const state = await fetch(`${guarded.url}/api/state`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(state.status).toBe(200);
    expect(((await state.json()) as { pools: PoolRow[] }).pools).toEqual([ROW]);
    const m = await firstMessage(`${guarded.url.replace('http', 'ws')}/ws`, [WS_BEARER_PROTOCOL, jwt]);
    expect(m.type).toBe('snapshot');
  });

  it("passes the strategies view to the planner with the caller's token; 503 without a planner", async () => {
    const jwt = await token();
    const id = '6b1d0f3e-8c3a-4d1e-9f00-0123456789ab';
    const list = await fetch(`${guarded.url}/api/strategies`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(list.status).toBe(207);
    expect(await list.json()).toEqual({ method: 'GET', path: '/strategies', authorization: `Bearer ${jwt}`, body: '' });
    const patch = await fetch(`${guarded.url}/api/strategies/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${jwt}` }, body: '{"enabled":false}' });
    expect(await patch.json()).toEqual({ method: 'PATCH', path: `/strategies/${id}`, authorization: `Bearer ${jwt}`, body: '{"enabled":false}' });
    // the console's own auth first; a body over 4 KiB and other methods or paths refused
    expect((await fetch(`${guarded.url}/api/strategies`)).status).toBe(401);
    const big = await fetch(`${guarded.url}/api/strategies/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${jwt}` }, body: 'x'.repeat(5_000) });
    expect(big.status).toBe(413);
    expect((await fetch(`${guarded.url}/api/strategies/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${jwt}` } })).status).toBe(405);
    expect((await fetch(`${guarded.url}/api/strategies/not-an-id`, { method: 'PATCH', headers: { authorization: `Bearer ${jwt}` }, body: '{}' })).status).toBe(405);
    const none = await fetch(`${open.url}/api/strategies`);
    expect(none.status).toBe(503);
    expect(((await none.json()) as { error: { message: string } }).error.message).toContain('CONSOLE_PLANNER_URL');
  });
});
