import { Configuration, ResponseError, SwapApi, createJupiterApiClient } from '@jup-ag/api';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { JwtVerifier } from '../auth/index.js';
import { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { DEX_LABELS } from '../swap-api/index.js';
import { CircuitBreaker } from '../common/index.js';
import { MAX_BATCH_QUOTES } from '../quote/quote-request.js';
import type { QuoteHttpServer } from './quote-http-server.js';
import { swapApiResponseOf } from './swap-api-body.js';
import { isSwapApiError, parseSwapApiQuery } from './swap-api-quote.js';
import { ValidatedPubkeys } from '../quote/index.js';
import { RateLimiter } from '../common/index.js';
import { FakeClock, manualSimulator, quoteHttpServer, storePool } from '../quote/testing.js';

/**
 * The quote API's REST paths (/v1, /swap/v1/quote, /ready) over real HTTP (port 0) on a cache
 * filled with a manual simulator's pools, and the official Jupiter client against /swap/v1/quote.
 */

const sim = manualSimulator();
const chain = sim.chain;
const UNKNOWN_MINT = 'So11111111111111111111111111111111111111113';
const SECRET = 'a-test-secret-that-is-32-bytes-long!!';

const clock = new FakeClock();
const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
let server: QuoteHttpServer;
let base: string;
let authServer: QuoteHttpServer;
let authBase: string;
let emptyServer: QuoteHttpServer;
let emptyBase: string;

beforeAll(async () => {
  let slot = 500n;
  for (const view of chain.pools()) storePool(cache, view, slot++);
  const common = { rateLimiter: new RateLimiter({ rps: 100_000 }), clock: () => 0, busStatus: () => 'connected' } as const;
  server = quoteHttpServer({ ...common, cache, breaker: new CircuitBreaker() });
  base = `http://127.0.0.1:${await server.start(0)}`;
  authServer = quoteHttpServer({ ...common, cache, breaker: new CircuitBreaker(), auth: new JwtVerifier({ secret: SECRET }) });
  authBase = `http://127.0.0.1:${await authServer.start(0)}`;
  const empty = new PoolCache({ now: clock.now });
  emptyServer = quoteHttpServer({ ...common, cache: empty, notReady: () => 'pool cache not loaded: no fresh pool yet' });
  emptyBase = `http://127.0.0.1:${await emptyServer.start(0)}`;
});

afterAll(async () => {
  await Promise.all([server.close(), authServer.close(), emptyServer.close()]);
  await sim.close();
});

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text.length > 0 && text.startsWith('{') ? JSON.parse(text) : text, headers: res.headers };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}, at = base): Promise<Answer> =>
  call(at + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

function hs256(secret = SECRET): Promise<string> {
  return new SignJWT({ sub: 'tester' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(secret));
}

const SOL_USDC = { inputMint: WSOL_MINT, outputMint: USDC_MINT };

describe('POST /v1/quote', () => {
  it('answers ExactIn and ExactOut with the GET /quote JSON of the same request', async () => {
    for (const swapMode of ['ExactIn', 'ExactOut']) {
      const amount = swapMode === 'ExactIn' ? '2000000000' : '150000000';
      const v1 = await post('/v1/quote', { ...SOL_USDC, amount, swapMode, slippageBps: 100 });
      const get = await call(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=${swapMode}&slippageBps=100`);
      expect(v1.status).toBe(200);
      expect(get.status).toBe(200);
      expect(v1.body).toEqual(get.body);
      expect(v1.body.swapMode).toBe(swapMode);
      expect(v1.body.slippageBps).toBe(100);
      expect(typeof v1.body.inputAmount).toBe('string');
      if (swapMode === 'ExactOut') expect(v1.body.outputAmount).toBe(amount);
      else expect(v1.body.inputAmount).toBe(amount);
    }
  });

  it('takes the route filter fields (labels or DEX kinds) and refuses an unknown DEX naming the field', async () => {
    const ok = await post('/v1/quote', { ...SOL_USDC, amount: '1000000', dexes: ['Whirlpool', 'dexa_amm'], excludeDexes: 'raydium clmm', onlyDirectRoutes: true });
    expect(ok.status).toBe(200);
    const bad = await post('/v1/quote', { ...SOL_USDC, amount: '1000000', dexes: ['Uniswap'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(ErrorCode.BadParameter);
    expect(bad.body.error.message).toMatch(/dexes.*Uniswap/);
    const notBool = await post('/v1/quote', { ...SOL_USDC, amount: '1000000', onlyDirectRoutes: 'yes' });
    expect(notBool.status).toBe(400);
    expect(notBool.body.error.message).toMatch(/onlyDirectRoutes/);
  });

  it('refuses bad bodies with 400 naming the problem, and oversized ones with 413', async () => {
    const cases: [unknown, RegExp][] = [
      ['{"inputMint": ', /not valid JSON/],
      ['', /empty/],
      ['[1,2]', /JSON object/],
      [{ outputMint: USDC_MINT, amount: '1' }, /inputMint/],
      [{ ...SOL_USDC, inputMint: 'not-base58!' }, /inputMint/],
      [{ ...SOL_USDC, amount: 1000 }, /amount must be a decimal string/],
      [{ ...SOL_USDC, amount: '-5' }, /amount/],
      [{ ...SOL_USDC, amount: '18446744073709551616' }, /amount/],
      [{ ...SOL_USDC, amount: '0' }, /amount must be greater than zero/],
      [{ ...SOL_USDC, amount: '1', swapMode: 'exactin' }, /swapMode/],
      [{ ...SOL_USDC, amount: '1', slippageBps: 10_001 }, /slippageBps/],
      [{ ...SOL_USDC, amount: '1', slippageBps: 1.5 }, /slippageBps/],
      [{ ...SOL_USDC, amount: '1', maxStateAgeMs: -1 }, /maxStateAgeMs/],
      [{ inputMint: WSOL_MINT, outputMint: WSOL_MINT, amount: '1' }, /outputMint/],
    ];
    for (const [body, message] of cases) {
      const r = await post('/v1/quote', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe(ErrorCode.BadParameter);
      expect(r.body.error.message).toMatch(message);
    }
    const big = await post('/v1/quote', { ...SOL_USDC, amount: '1', pad: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe(ErrorCode.PayloadTooLarge);
    // The server is still fine.
    expect((await post('/v1/quote', { ...SOL_USDC, amount: '1000000' })).status).toBe(200);
  });

  it('answers 404 for a token no pool trades', async () => {
    const r = await post('/v1/quote', { inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: '1000' });
    expect(r.status).toBe(404);
  });
});

describe('POST /v1/quote/batch', () => {
  it('answers every item or gives it its own error; a bad item never fails the batch', async () => {
    const requests = [
      { ...SOL_USDC, amount: '1000000000' },
      { ...SOL_USDC, amount: 'abc' },
      { inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: '1000' },
      { ...SOL_USDC, amount: '150000000', swapMode: 'ExactOut' },
      42,
    ];
    const r = await post('/v1/quote/batch', { requests });
    expect(r.status).toBe(200);
    const results = r.body.results;
    expect(results).toHaveLength(5);
    expect(results[0].status).toBe(200);
    const single = await post('/v1/quote', requests[0]);
    expect(results[0].quote).toEqual(single.body);
    expect(results[1]).toEqual({ status: 400, error: { code: ErrorCode.BadParameter, message: expect.stringMatching(/amount/) } });
    expect(results[2].status).toBe(404);
    expect(results[3].status).toBe(200);
    expect(results[3].quote.outputAmount).toBe('150000000');
    expect(results[4].status).toBe(400);
  });

  it(`takes ${MAX_BATCH_QUOTES} requests and refuses ${MAX_BATCH_QUOTES + 1} naming the limit`, async () => {
    const one = { ...SOL_USDC, amount: '1000000' };
    const full = await post('/v1/quote/batch', { requests: Array.from({ length: MAX_BATCH_QUOTES }, () => one) });
    expect(full.status).toBe(200);
    expect(full.body.results).toHaveLength(MAX_BATCH_QUOTES);
    expect(full.body.results.every((x: any) => x.status === 200)).toBe(true);
    const over = await post('/v1/quote/batch', { requests: Array.from({ length: MAX_BATCH_QUOTES + 1 }, () => one) });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(new RegExp(`limit is ${MAX_BATCH_QUOTES}`));
  });

  it('refuses a body that is not a batch', async () => {
    for (const [body, message] of [[{}, /requests/], [{ requests: [] }, /at least one/], [{ requests: 'x' }, /array/], ['nope', /not valid JSON/]] as const) {
      const r = await post('/v1/quote/batch', body);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(message);
    }
    const big = await post('/v1/quote/batch', { requests: [], pad: 'x'.repeat(300_000) });
    expect(big.status).toBe(413);
  });
});

describe('GET /v1/pools', () => {
  it('pages through every cached pool by cursor, and by offset', async () => {
    const all = chain.pools().map((v) => v.address).sort();
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 100; page++) {
      const r = await call(`${base}/v1/pools?limit=3${cursor === '' ? '' : `&cursor=${cursor}`}`);
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(all.length);
      seen.push(...r.body.pools.map((p: any) => p.address));
      if (r.body.nextCursor === null) break;
      cursor = r.body.nextCursor;
    }
    expect(seen).toEqual(all);
    const byOffset = await call(`${base}/v1/pools?limit=2&offset=3`);
    expect(byOffset.body.pools.map((p: any) => p.address)).toEqual(all.slice(3, 5));
    const p = byOffset.body.pools[0];
    const view = chain.pools().find((v) => v.address === p.address)!;
    expect(p).toMatchObject({ dex: view.dex, label: DEX_LABELS[view.dex], tokenA: view.pool.tokenA, tokenB: view.pool.tokenB, fresh: true });
    expect(typeof p.slot).toBe('string');
    expect(typeof p.stateAgeMs).toBe('number');
    expect(typeof p.feeNumerator).toBe('string');
  });

  it('lists the pools of one mint, 404 for a mint no pool trades, 400 for bad paging', async () => {
    const r = await call(`${base}/v1/pools/${USDC_MINT}?limit=500`);
    expect(r.status).toBe(200);
    const expected = chain.pools().filter((v) => v.pool.tokenA === USDC_MINT || v.pool.tokenB === USDC_MINT);
    expect(r.body.total).toBe(expected.length);
    for (const pool of r.body.pools) expect([pool.tokenA, pool.tokenB]).toContain(USDC_MINT);
    expect((await call(`${base}/v1/pools/${UNKNOWN_MINT}`)).status).toBe(404);
    expect((await call(`${base}/v1/pools/%E0%A4%A`)).status).toBe(400);
    const badMint = await call(`${base}/v1/pools/xyz0`);
    expect(badMint.status).toBe(400);
    expect(badMint.body.error.message).toMatch(/mint/);
    for (const q of ['limit=0', 'limit=501', 'limit=x', 'offset=-1', 'offset=2&cursor=abc']) {
      const bad = await call(`${base}/v1/pools?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.message).toMatch(/limit|offset|cursor/);
    }
  });
});

describe('probes', () => {
  it('/v1/health and /v1/metrics answer as /health and /metrics', async () => {
    const h = await call(`${base}/v1/health`);
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('ok');
    const m = await call(`${base}/v1/metrics`);
    expect(m.status).toBe(200);
    expect(m.body).toMatch(/quote_service_/);
  });

  it('/ready is 200 with its inputs live, 503 with the reason otherwise; /health stays liveness', async () => {
    const ready = await call(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    const notReady = await call(`${emptyBase}/ready`);
    expect(notReady.status).toBe(503);
    expect(notReady.body.reason).toMatch(/pool cache not loaded/);
  });
});

describe('GET /swap/v1/quote (the public swap API)', () => {
  const jupiter = (at = base, headers: Record<string, string> = {}): SwapApi => new SwapApi(new Configuration({ basePath: `${at}/swap/v1`, headers }));

  it('answers the official client ExactIn and ExactOut, the same route as GET /quote', async () => {
    for (const swapMode of ['ExactIn', 'ExactOut'] as const) {
      const amount = swapMode === 'ExactIn' ? 2_000_000_000 : 150_000_000;
      const q = await jupiter().quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount, swapMode, slippageBps: 100 });
      const ours = (await call(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=${swapMode}&slippageBps=100`)).body;
      expect(q.inputMint).toBe(WSOL_MINT);
      expect(q.outputMint).toBe(USDC_MINT);
      expect(q.swapMode).toBe(swapMode);
      expect(q.slippageBps).toBe(100);
      expect(q.inAmount).toBe(ours.inputAmount);
      expect(q.outAmount).toBe(ours.outputAmount);
      expect(q.otherAmountThreshold).toBe(swapMode === 'ExactIn' ? ours.minOutputAmount : ours.maxInputAmount);
      expect(q.platformFee).toBeUndefined(); // null on the wire; the client maps it away
      expect(typeof q.priceImpactPct).toBe('string');
      expect(Number(q.priceImpactPct)).toBeCloseTo(ours.priceImpact, 12);
      expect(q.routePlan).toHaveLength(ours.route.length);
      const [step] = q.routePlan;
      expect(step!.percent).toBe(100);
      // @jup-ag/api 6.0.48's SwapInfo model keeps these six fields (it drops feeAmount / feeMint,
      // which the raw body carries: checked below).
      expect(step!.swapInfo).toEqual({
        ammKey: ours.route[0].pool,
        label: DEX_LABELS[ours.route[0].dex as keyof typeof DEX_LABELS],
        inputMint: WSOL_MINT,
        outputMint: USDC_MINT,
        inAmount: ours.route[0].inAmount,
        outAmount: ours.route[0].outAmount,
      });
      const raw = await call(`${base}/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=${amount}&swapMode=${swapMode}&slippageBps=100`);
      expect(raw.body.routePlan[0].swapInfo).toMatchObject({ feeAmount: ours.route[0].fee, feeMint: ours.route[0].feeMint });
      expect(q.contextSlot).toBe(Number(ours.contextSlot));
      expect(typeof q.timeTaken).toBe('number');
    }
  });

  it('works with createJupiterApiClient too, its base URL redirected by a middleware', async () => {
    // createJupiterApiClient (6.0.48) replaces any basePath with Jupiter's own URL; a `pre`
    // middleware (part of its configuration) points the request at this server instead.
    const api = createJupiterApiClient({
      basePath: `${base}/swap/v1`,
      middleware: [{ pre: async (ctx) => ({ url: ctx.url.replace(/^https:\/\/[^/]+\/swap\/v1/, `${base}/swap/v1`), init: ctx.init }) }],
    });
    const q = await api.quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 1_000_000 });
    const ours = (await call(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000`)).body;
    expect(q.outAmount).toBe(ours.outputAmount);
  });

  it('sends the raw body with platformFee null', async () => {
    const r = await call(`${base}/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&maxAccounts=20&platformFeeBps=3&foo=bar`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['inputMint', 'inAmount', 'outputMint', 'outAmount', 'otherAmountThreshold', 'swapMode', 'slippageBps', 'platformFee', 'priceImpactPct', 'routePlan', 'contextSlot', 'timeTaken']);
    expect(r.body.platformFee).toBeNull();
    expect(r.body.slippageBps).toBe(50);
  });

  it("sends exactly the JSON of the engine's answer, from the handler and after a bearer check", async () => {
    const query = `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1234567&swapMode=ExactOut&slippageBps=77&platformFeeBps=3`;
    // Its own subject: a token no other test has shown the verifier.
    const token = await new SignJWT({ sub: 'swap-api-bytes' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(SECRET));
    for (const [at, atServer, headers] of [
      [base, server, {}],
      // A token not seen before: answered once its signature is checked, outside the handler.
      [authBase, authServer, { authorization: `Bearer ${token}` }],
    ] as const) {
      const res = await fetch(`${at}/swap/v1/quote?${query}`, { headers });
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      const request = parseSwapApiQuery(query, atServer.engine.defaultSlippageBps, new ValidatedPubkeys());
      if (isSwapApiError(request)) throw new Error(request.body);
      const answer = atServer.engine.quote(request);
      if (answer instanceof Promise || !answer.ok) throw new Error('expected a cache answer');
      const timeTaken = (JSON.parse(text) as { timeTaken: number }).timeTaken;
      expect(text).toBe(JSON.stringify(swapApiResponseOf(answer, timeTaken)));
    }
  });

  it('takes dexes as the client sends them; a DEX no pool of the pair has is no route', async () => {
    const views = chain.poolsForPair(WSOL_MINT, USDC_MINT);
    const label = DEX_LABELS[views[0]!.dex];
    const q = await jupiter().quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 1_000_000, dexes: [label, 'Nonexistent'] });
    expect(q.routePlan.length).toBeGreaterThan(0);
  });

  it('answers no route in the public API error shape, which the client raises', async () => {
    let caught: unknown;
    try {
      await jupiter().quoteGet({ inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: 1000 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ResponseError);
    const response = (caught as ResponseError).response;
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toEqual({ error: expect.any(String), errorCode: expect.stringMatching(/^(COULD_NOT_FIND_ANY_ROUTE|TOKEN_NOT_TRADABLE)$/) });
    const zero = await call(`${base}/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=0`);
    expect(zero.body).toEqual({ error: 'Could not find any route', errorCode: 'COULD_NOT_FIND_ANY_ROUTE' });
  });

  it('refuses bad parameters with 400 INVALID_REQUEST naming the parameter', async () => {
    const cases: [string, RegExp][] = [
      [`outputMint=${USDC_MINT}&amount=1`, /inputMint/],
      [`inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=abc`, /amount/],
      [`inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1&swapMode=Both`, /ExactIn/],
      [`inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1&slippageBps=20000`, /slippageBps/],
      [`inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1&onlyDirectRoutes=yes`, /onlyDirectRoutes/],
      [`inputMint=abc&outputMint=${USDC_MINT}&amount=1`, /inputMint/],
    ];
    for (const [query, message] of cases) {
      const r = await call(`${base}/swap/v1/quote?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.errorCode).toBe('INVALID_REQUEST');
      expect(r.body.error).toMatch(message);
    }
    const same = await call(`${base}/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${WSOL_MINT}&amount=1`);
    expect(same.body.errorCode).toBe('CIRCULAR_ARBITRAGE_IS_DISABLED');
  });
});

describe('JWT bearer on the REST quote paths', () => {
  const quotePath = `/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000`;

  it('401 with WWW-Authenticate: Bearer without a token or with a bad one, on every quote path', async () => {
    const checks: Answer[] = [
      await call(authBase + quotePath),
      await post('/v1/quote', { ...SOL_USDC, amount: '1000000' }, {}, authBase),
      await post('/v1/quote/batch', { requests: [{ ...SOL_USDC, amount: '1000000' }] }, {}, authBase),
      await call(`${authBase}/v1/pools`),
      await call(`${authBase}/v1/pools/${USDC_MINT}`),
      await call(`${authBase}/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000`),
    ];
    for (const r of checks) {
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(checks[0]!.body.error.code).toBe(ErrorCode.Unauthenticated);
    expect(checks[5]!.body.errorCode).toBe(ErrorCode.Unauthenticated);
    const wrong = await call(authBase + quotePath, { headers: { authorization: `Bearer ${await hs256('another-secret-of-at-least-32-bytes!!')}` } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    expect(wrong.body.error.message).toMatch(/signature invalid/);
    const basic = await call(authBase + quotePath, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(401);
  });

  it('answers with a valid token, first seen (verified then) and again (cached)', async () => {
    for (const path of [quotePath, `/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000`, '/v1/pools?limit=1']) {
      const token = await hs256();
      const headers = { authorization: `Bearer ${token}` };
      expect((await call(authBase + path, { headers })).status, path).toBe(200);
      expect((await call(authBase + path, { headers })).status, path).toBe(200);
    }
    const token = await hs256();
    const v1 = await post('/v1/quote', { ...SOL_USDC, amount: '1000000' }, { authorization: `Bearer ${token}` }, authBase);
    expect(v1.status).toBe(200);
    const batch = await post('/v1/quote/batch', { requests: [{ ...SOL_USDC, amount: '1000000' }] }, { authorization: `Bearer ${await hs256()}` }, authBase);
    expect(batch.status).toBe(200);
  });

  it('leaves probes and metrics open', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/v1/health', '/v1/metrics']) {
      expect((await call(authBase + path)).status, path).toBe(200);
    }
  });
});
