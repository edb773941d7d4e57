import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { JwtVerifier } from '../auth/index.js';
import { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { loadTidepoolProto } from '../proto.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CircuitBreaker } from '../common/index.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { QuoteStreamServer } from './quote-stream-server.js';
import { MAX_BATCH_QUOTES } from '../quote/quote-request.js';
import { pairId, type UpstreamQuote } from '../quote/quote-wire.js';
import { RateLimiter } from '../common/index.js';
import { FakeClock, manualSimulator, storePool } from '../quote/testing.js';

/**
 * GetQuote and GetQuotes over real gRPC (port 0), through the engine GET /quote uses: the same
 * amounts as GET /quote, statuses from the code table, per-item errors in a batch, JWT bearer.
 */

const sim = manualSimulator();
const UNKNOWN_MINT = 'So11111111111111111111111111111111111111113';
const SECRET = 'a-test-secret-that-is-32-bytes-long!!';
const { QuoteService } = loadTidepoolProto();

type Unary<Req, Res> = (req: Req, metadata: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: Res) => void) => void;
type Client = grpc.Client & { GetQuote: Unary<unknown, UpstreamQuote>; GetQuotes: Unary<unknown, { quotes: UpstreamQuote[] }> };

const clock = new FakeClock();
const cache = new PoolCache({ now: clock.now });
const engine = new QuoteEngine({ cache, breaker: new CircuitBreaker(), clock: () => 0 });
const http = new QuoteHttpServer({ engine, rateLimiter: new RateLimiter({ rps: 100_000 }), cache });
const server = new QuoteStreamServer({ engine });
const authServer = new QuoteStreamServer({ engine, auth: new JwtVerifier({ secret: SECRET }) });
let client: Client;
let authClient: Client;
let base = '';

beforeAll(async () => {
  let slot = 700n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  base = `http://127.0.0.1:${await http.start(0)}`;
  client = new QuoteService(`127.0.0.1:${await server.start(0)}`, grpc.credentials.createInsecure()) as unknown as Client;
  authClient = new QuoteService(`127.0.0.1:${await authServer.start(0)}`, grpc.credentials.createInsecure()) as unknown as Client;
});

afterAll(async () => {
  client.close();
  authClient.close();
  await Promise.all([server.close(), authServer.close(), http.close()]);
  await engine.close();
  await sim.close();
});

function unary<Res>(c: Client, method: 'GetQuote' | 'GetQuotes', req: unknown, metadata = new grpc.Metadata()): Promise<{ err: grpc.ServiceError | null; res: Res | undefined }> {
  return new Promise((resolve) => {
    (c[method] as Unary<unknown, Res>).call(c, req, metadata, (err, res) => resolve({ err, res }));
  });
}

async function restQuote(amount: string, mode: string): Promise<any> {
  const res = await fetch(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=${mode}&slippageBps=30`);
  return res.json();
}

describe('GetQuote', () => {
  it('answers ExactIn and ExactOut with the amounts GET /quote gives', async () => {
    for (const [mode, wire, amount] of [['ExactIn', 'SWAP_MODE_EXACT_IN', '2000000000'], ['ExactOut', 'SWAP_MODE_EXACT_OUT', '150000000']] as const) {
      const { err, res } = await unary<UpstreamQuote>(client, 'GetQuote', { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount, swapMode: wire, slippageBps: 30 });
      expect(err).toBeNull();
      const rest = await restQuote(amount, mode);
      expect(res!.swapMode).toBe(wire);
      expect(res!.inputAmount).toBe(rest.inputAmount);
      expect(res!.outputAmount).toBe(rest.outputAmount);
      expect(res!.minOutputAmount).toBe(rest.minOutputAmount);
      expect(res!.maxInputAmount).toBe(rest.maxInputAmount);
      expect(res!.slippageBps).toBe(30);
      expect(res!.route.map((h) => h.pool)).toEqual(rest.route.map((h: any) => h.pool));
      expect(res!.pairId).toBe(pairId(WSOL_MINT, USDC_MINT, BigInt(amount), mode === 'ExactOut'));
      expect(res!.origin).toBe('QUOTE_ORIGIN_CACHE');
      expect(res!.error).toBeNull();
    }
  });

  it('takes the route filter and the default slippage', async () => {
    const { err, res } = await unary<UpstreamQuote>(client, 'GetQuote', { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000', dexes: ['Whirlpool', 'dexa_amm'], onlyDirectRoutes: true });
    expect(err).toBeNull();
    expect(res!.slippageBps).toBe(engine.defaultSlippageBps);
  });

  it('refuses malformed requests with INVALID_ARGUMENT naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ outputMint: USDC_MINT, amount: '1' }, /input_mint/],
      [{ inputMint: WSOL_MINT, outputMint: 'nope', amount: '1' }, /output_mint/],
      [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '0' }, /amount/],
      [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1', slippageBps: 10_001 }, /slippage_bps/],
      [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1', dexes: ['Uniswap'] }, /dexes/],
      [{ inputMint: WSOL_MINT, outputMint: WSOL_MINT, amount: '1' }, /output_mint/],
    ];
    for (const [req, details] of cases) {
      const { err } = await unary(client, 'GetQuote', req);
      expect(err?.code, JSON.stringify(req)).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err?.details).toMatch(details);
      expect(err?.details).toMatch(ErrorCode.BadParameter);
    }
  });

  it('answers an unknown token with NOT_FOUND from the code table', async () => {
    const { err } = await unary(client, 'GetQuote', { inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: '1000' });
    expect(err?.code).toBe(grpc.status.NOT_FOUND);
  });
});

describe('GetQuotes', () => {
  it('answers each request in order, a bad one with its own error', async () => {
    const requests = [
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000' },
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 'x' },
      { inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: '1000' },
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '150000000', swapMode: 'SWAP_MODE_EXACT_OUT' },
    ];
    const { err, res } = await unary<{ quotes: UpstreamQuote[] }>(client, 'GetQuotes', { requests });
    expect(err).toBeNull();
    const q = res!.quotes;
    expect(q).toHaveLength(4);
    expect(q[0]!.error).toBeNull();
    expect(q[0]!.inputAmount).toBe('1000000000');
    expect(q[1]!.error).toMatchObject({ code: ErrorCode.BadParameter, grpcStatus: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/requests\[1\]\.amount/) });
    expect(q[2]!.error?.grpcStatus).toBe(grpc.status.NOT_FOUND);
    expect(q[3]!.error).toBeNull();
    expect(q[3]!.outputAmount).toBe('150000000');
  });

  it(`refuses no requests and more than ${MAX_BATCH_QUOTES}`, async () => {
    const one = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' };
    const full = await unary<{ quotes: UpstreamQuote[] }>(client, 'GetQuotes', { requests: Array.from({ length: MAX_BATCH_QUOTES }, () => one) });
    expect(full.res!.quotes).toHaveLength(MAX_BATCH_QUOTES);
    const over = await unary(client, 'GetQuotes', { requests: Array.from({ length: MAX_BATCH_QUOTES + 1 }, () => one) });
    expect(over.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(over.err?.details).toMatch(/limit is 100/);
    const none = await unary(client, 'GetQuotes', { requests: [] });
    expect(none.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('JWT bearer on the unary calls', () => {
  it('UNAUTHENTICATED without a token, an answer with one', async () => {
    const req = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' };
    const refused = await unary(authClient, 'GetQuote', req);
    expect(refused.err?.code).toBe(grpc.status.UNAUTHENTICATED);
    const refusedBatch = await unary(authClient, 'GetQuotes', { requests: [req] });
    expect(refusedBatch.err?.code).toBe(grpc.status.UNAUTHENTICATED);
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    const ok = await unary<UpstreamQuote>(authClient, 'GetQuote', req, metadata);
    expect(ok.err).toBeNull();
    expect(ok.res!.inputAmount).toBe('1000000');
  });
});
