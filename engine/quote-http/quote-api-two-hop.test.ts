import * as grpc from '@grpc/grpc-js';
import { Configuration, SwapApi } from '@jup-ag/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { loadTidepoolProto } from '../proto.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { DEX_LABELS } from '../swap-api/index.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import { QuoteHttpServer } from './quote-http-server.js';
import { QuoteStreamServer } from '../quote-grpc/quote-stream-server.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import { RateLimiter } from '../common/index.js';
import { FakeClock, manualSimulator, storePool } from '../quote/testing.js';

/**
 * Two-hop routes through every quote API transport: a manual simulator whose market has
 * ANCHOR/SOL, ANCHOR/USDC, SOL/CORAL and SOL/USDC pools but no ANCHOR/CORAL pool, so ANCHOR → CORAL
 * is only quotable through an intermediate token. The official Jupiter client, POST /v1/quote, the
 * batch and gRPC GetQuote all give the route GET /quote gives, hop by hop.
 */

const sim = manualSimulator(7);
const chain = sim.chain;
const mintOf = (symbol: string): string => chain.tokens().find((t) => t.symbol === symbol)!.mint;
const ANCHOR = mintOf('ANCHOR');
const CORAL = mintOf('CORAL');

const clock = new FakeClock();
const cache = new PoolCache({ now: clock.now });
const engine = new QuoteEngine({ cache, hybridMode: false, clock: () => 0 });
const http = new QuoteHttpServer({ engine, rateLimiter: new RateLimiter({ rps: 100_000 }), cache });
const grpcServer = new QuoteStreamServer({ engine });
let base = '';
let client: grpc.Client & { GetQuote: (req: unknown, cb: (err: grpc.ServiceError | null, res?: UpstreamQuote) => void) => void };

beforeAll(async () => {
  let slot = 100n;
  for (const view of chain.pools()) storePool(cache, view, slot++);
  base = `http://127.0.0.1:${await http.start(0)}`;
  const { QuoteService } = loadTidepoolProto();
  client = new QuoteService(`127.0.0.1:${await grpcServer.start(0)}`, grpc.credentials.createInsecure()) as unknown as typeof client;
});

afterAll(async () => {
  client.close();
  await Promise.all([grpcServer.close(), http.close()]);
  await engine.close();
  await sim.close();
});

async function ours(amount: bigint, mode: 'ExactIn' | 'ExactOut', extra = ''): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/quote?input=${ANCHOR}&output=${CORAL}&amount=${amount}&swapMode=${mode}${extra}`);
  return { status: res.status, body: await res.json() };
}

describe('a two-hop route through every transport', () => {
  it('has no direct pool, and GET /quote routes it in two hops through SOL or USDC', async () => {
    expect(chain.poolsForPair(ANCHOR, CORAL)).toHaveLength(0);
    const { status, body } = await ours(1_000_000_000n, 'ExactIn');
    expect(status).toBe(200);
    expect(body.route).toHaveLength(2);
    expect([WSOL_MINT, USDC_MINT]).toContain(body.route[0].outputMint);
  });

  it('the official Jupiter client gets the two-hop route, ExactIn and ExactOut, hop amounts chained', async () => {
    const api = new SwapApi(new Configuration({ basePath: `${base}/swap/v1` }));
    for (const [mode, amount] of [['ExactIn', 1_000_000_000n], ['ExactOut', 1_000_000n]] as const) {
      const expected = (await ours(amount, mode)).body;
      expect(expected.route).toHaveLength(2);
      const q = await api.quoteGet({ inputMint: ANCHOR, outputMint: CORAL, amount: Number(amount), swapMode: mode });
      expect(q.inAmount).toBe(expected.inputAmount);
      expect(q.outAmount).toBe(expected.outputAmount);
      expect(q.routePlan).toHaveLength(2);
      q.routePlan.forEach((step, i) => {
        const hop = expected.route[i];
        expect(step.percent).toBe(100);
        expect(step.swapInfo).toMatchObject({
          ammKey: hop.pool,
          label: DEX_LABELS[hop.dex as keyof typeof DEX_LABELS],
          inputMint: hop.inputMint,
          outputMint: hop.outputMint,
          inAmount: hop.inAmount,
          outAmount: hop.outAmount,
        });
      });
      expect(q.routePlan[0]!.swapInfo.outAmount).toBe(q.routePlan[1]!.swapInfo.inAmount);
      expect(q.routePlan[0]!.swapInfo.inputMint).toBe(ANCHOR);
      expect(q.routePlan[1]!.swapInfo.outputMint).toBe(CORAL);
    }
  });

  it('onlyDirectRoutes on the swap API path: no route, in its error shape', async () => {
    const res = await fetch(`${base}/swap/v1/quote?inputMint=${ANCHOR}&outputMint=${CORAL}&amount=1000000000&onlyDirectRoutes=true`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Could not find any route', errorCode: 'COULD_NOT_FIND_ANY_ROUTE' });
  });

  it('POST /v1/quote, the batch and gRPC GetQuote give the same two-hop route', async () => {
    const expected = (await ours(1_000_000_000n, 'ExactIn')).body;
    const v1: any = await (await fetch(`${base}/v1/quote`, { method: 'POST', body: JSON.stringify({ inputMint: ANCHOR, outputMint: CORAL, amount: '1000000000' }) })).json();
    expect(v1.route).toEqual(expected.route);
    const batch: any = await (
      await fetch(`${base}/v1/quote/batch`, { method: 'POST', body: JSON.stringify({ requests: [{ inputMint: ANCHOR, outputMint: CORAL, amount: '1000000000' }, { inputMint: ANCHOR, outputMint: CORAL, amount: '1000000000', onlyDirectRoutes: true }] }) })
    ).json();
    expect(batch.results[0].quote.route).toEqual(expected.route);
    expect(batch.results[1].status).toBeGreaterThanOrEqual(400);
    const g = await new Promise<UpstreamQuote>((resolve, reject) =>
      client.GetQuote({ inputMint: ANCHOR, outputMint: CORAL, amount: '1000000000' }, (err, res) => (err ? reject(err) : resolve(res!))),
    );
    expect(g.route.map((h) => h.pool)).toEqual(expected.route.map((h: any) => h.pool));
    expect(g.outputAmount).toBe(expected.outputAmount);
  });
});

describe('GET /quote route filter parameters', () => {
  it('parses dexes, excludeDexes and onlyDirectRoutes, 400 naming a bad one', async () => {
    const direct = await ours(1_000_000_000n, 'ExactIn', '&onlyDirectRoutes=true');
    expect(direct.status).toBeGreaterThanOrEqual(400);
    const r = await fetch(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000&dexes=Whirlpool`);
    const body: any = await r.json();
    expect(r.status).toBe(200);
    expect(body.dex).toBe('dexc_whirlpool');
    const excluded: any = await (await fetch(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000&excludeDexes=${body.dex}`)).json();
    expect(excluded.pool).not.toBe(body.pool);
    for (const [q, name] of [['dexes=Uniswap', 'dexes'], ['excludeDexes=x', 'excludeDexes'], ['onlyDirectRoutes=yes', 'onlyDirectRoutes']]) {
      const bad = await fetch(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000&${q}`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).error.message).toMatch(name!);
    }
  });
});
