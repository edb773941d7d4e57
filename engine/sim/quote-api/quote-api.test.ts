import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { quoteSwap } from '../../dex/quote.js';
import { SwapMode, type SwapQuote } from '../../dex/types.js';
import { createLogger } from '../../obs/logger.js';
import { FaultInjector } from '../faults.js';
import { SimHttpServer } from '../http/sim-http-server.js';
import type { SimPoolView } from '../market-view.js';
import { QUOTE_API_PATHS } from './constants.js';
import { mountQuoteApi } from './quote-api.js';
import { formatFraction, type QuoteResponse } from './quote-response.js';
import { MINT, POOL, ammPool, buildFixtureMarket, testKey, type FixtureMarket } from './testing/market-fixture.js';

const logger = createLogger({ level: 'silent' });
let market: FixtureMarket;
let faults: FaultInjector;
let server: SimHttpServer;
let base: string;

beforeEach(async () => {
  market = buildFixtureMarket();
  faults = new FaultInjector(11);
  server = new SimHttpServer({ port: 0, logger });
  mountQuoteApi(server, { market, faults, logger });
  await server.start();
  base = server.url;
});

afterEach(async () => {
  await server.close();
});

interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A plain fetch, as a third-party client would call the real API. */
async function get<T = any>(query: Record<string, string> | string, path = '/quote'): Promise<Answer<T>> {
  const search = typeof query === 'string' ? query : new URLSearchParams(query).toString();
  const res = await fetch(`${base}${path}?${search}`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as T };
}

async function quote(query: Record<string, string>): Promise<QuoteResponse> {
  const answer = await get<QuoteResponse>(query);
  if (answer.status !== 200) throw new Error(`expected 200, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

function pool(address: string): SimPoolView {
  const view = market.pool(address);
  if (view === undefined) throw new Error(`no pool ${address}`);
  return view;
}

/** The engine's own quote on a pool (the oracle the API must match exactly). */
function engineQuote(address: string, inputMint: string, mode: SwapMode, amount: bigint): SwapQuote | undefined {
  const view = pool(address);
  const result = quoteSwap(view.pool, { aToB: view.pool.tokenA === inputMint, mode, amount }, view.ctx);
  return result.ok ? result : undefined;
}

function bestIn(addresses: string[], inputMint: string, amount: bigint): { address: string; quote: SwapQuote } {
  let best: { address: string; quote: SwapQuote } | undefined;
  for (const address of addresses) {
    const q = engineQuote(address, inputMint, SwapMode.ExactIn, amount);
    if (q !== undefined && (best === undefined || q.amountOut > best.quote.amountOut)) best = { address, quote: q };
  }
  if (best === undefined) throw new Error('no pool quotes');
  return best;
}

function bestOut(addresses: string[], inputMint: string, amount: bigint): { address: string; quote: SwapQuote } {
  let best: { address: string; quote: SwapQuote } | undefined;
  for (const address of addresses) {
    const q = engineQuote(address, inputMint, SwapMode.ExactOut, amount);
    if (q !== undefined && (best === undefined || q.amountIn < best.quote.amountIn)) best = { address, quote: q };
  }
  if (best === undefined) throw new Error('no pool quotes');
  return best;
}

const SOL_USDC_POOLS = [POOL.solUsdcAmm, POOL.solUsdcWhirlpool];
const ONE_SOL = 1_000_000_000n;
const ONE_X = 1_000_000n;

function expectChained(body: QuoteResponse): void {
  const plan = body.routePlan;
  expect(plan[0]!.swapInfo.inputMint).toBe(body.inputMint);
  expect(plan[plan.length - 1]!.swapInfo.outputMint).toBe(body.outputMint);
  for (let i = 1; i < plan.length; i++) {
    expect(plan[i]!.swapInfo.inputMint).toBe(plan[i - 1]!.swapInfo.outputMint);
    expect(plan[i]!.swapInfo.inAmount).toBe(plan[i - 1]!.swapInfo.outAmount);
  }
}

describe('GET /quote: direct routes', () => {
  it("answers with the best pool's exact engine output, in the real API's shape", async () => {
    const best = bestIn(SOL_USDC_POOLS, MINT.SOL, ONE_SOL);
    const body = await quote({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: ONE_SOL.toString() });

    expect(Object.keys(body)).toEqual([
      'inputMint',
      'inAmount',
      'outputMint',
      'outAmount',
      'otherAmountThreshold',
      'swapMode',
      'slippageBps',
      'platformFee',
      'priceImpactPct',
      'routePlan',
      'contextSlot',
      'timeTaken',
    ]);
    expect(body).toMatchObject({
      inputMint: MINT.SOL,
      inAmount: '1000000000',
      outputMint: MINT.USDC,
      outAmount: best.quote.amountOut.toString(),
      swapMode: 'ExactIn',
      slippageBps: 50,
      platformFee: null,
      contextSlot: Number(market.currentSlot),
    });
    expect(body.routePlan).toEqual([
      {
        swapInfo: {
          ammKey: best.address,
          label: pool(best.address).label,
          inputMint: MINT.SOL,
          outputMint: MINT.USDC,
          inAmount: '1000000000',
          outAmount: best.quote.amountOut.toString(),
          feeAmount: best.quote.fee.toString(),
          feeMint: MINT.SOL,
        },
        percent: 100,
        bps: 10000,
      },
    ]);
    expect(body.priceImpactPct).toBe(formatFraction(best.quote.priceImpact));
    expect(body.priceImpactPct).toMatch(/^\d+(\.\d+)?$/);
    expect(typeof body.timeTaken).toBe('number');
    expect(body.timeTaken).toBeGreaterThanOrEqual(0);
  });

  it('prefers the cheaper Whirlpool for a small swap', async () => {
    const body = await quote({ inputMint: MINT.USDC, outputMint: MINT.SOL, amount: '100000000' });
    expect(bestIn(SOL_USDC_POOLS, MINT.USDC, 100_000_000n).address).toBe(POOL.solUsdcWhirlpool);
    expect(body.routePlan[0]!.swapInfo.ammKey).toBe(POOL.solUsdcWhirlpool);
  });

  it('drops a pool that refuses: a swap past the Whirlpool tick arrays goes to the AMM', async () => {
    const amount = 7_000n * ONE_SOL;
    expect(engineQuote(POOL.solUsdcWhirlpool, MINT.SOL, SwapMode.ExactIn, amount)).toBeUndefined();
    const amm = engineQuote(POOL.solUsdcAmm, MINT.SOL, SwapMode.ExactIn, amount)!;
    const body = await quote({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: amount.toString() });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.solUsdcAmm]);
    expect(body.outAmount).toBe(amm.amountOut.toString());
  });

  it('quotes a DLMM pair exactly', async () => {
    const q = engineQuote(POOL.yUsdcDlmm, MINT.Y, SwapMode.ExactIn, 50_000_000n)!;
    const body = await quote({ inputMint: MINT.Y, outputMint: MINT.USDC, amount: '50000000' });
    expect(body.routePlan[0]!.swapInfo).toMatchObject({ ammKey: POOL.yUsdcDlmm, label: 'Meteora DLMM', outAmount: q.amountOut.toString() });
    expect(body.outAmount).toBe(q.amountOut.toString());
  });
});

describe('GET /quote: multi-hop routes', () => {
  it('routes X to SOL through USDC when that beats the direct pool, with hop amounts chained exactly', async () => {
    const direct = engineQuote(POOL.xSolAmm, MINT.X, SwapMode.ExactIn, ONE_X)!;
    const hop1 = engineQuote(POOL.xUsdcAmm, MINT.X, SwapMode.ExactIn, ONE_X)!;
    const hop2 = bestIn(SOL_USDC_POOLS, MINT.USDC, hop1.amountOut);
    expect(hop2.quote.amountOut).toBeGreaterThan(direct.amountOut);

    const body = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString() });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.xUsdcAmm, hop2.address]);
    expect(body.routePlan.map((s) => s.swapInfo.outputMint)).toEqual([MINT.USDC, MINT.SOL]);
    expect(body.routePlan[0]!.swapInfo.outAmount).toBe(hop1.amountOut.toString());
    expect(body.routePlan[1]!.swapInfo.inAmount).toBe(body.routePlan[0]!.swapInfo.outAmount);
    expect(body.outAmount).toBe(hop2.quote.amountOut.toString());
    expect(body.routePlan.every((s) => s.percent === 100 && s.bps === 10000)).toBe(true);
    expectChained(body);
    // Price impact of the route: 1 - (1 - hop 1) * (1 - hop 2).
    expect(body.priceImpactPct).toBe(formatFraction(1 - (1 - hop1.priceImpact) * (1 - hop2.quote.priceImpact)));
  });

  it('keeps the direct pool when it pays more than any multi-hop route', async () => {
    // X -> USDC: the deep X/USDC pool (X at 2 USDC) beats X -> SOL -> USDC (X at 1.95 USDC there).
    const direct = engineQuote(POOL.xUsdcAmm, MINT.X, SwapMode.ExactIn, 10_000_000n)!;
    const viaSol = engineQuote(POOL.xSolAmm, MINT.X, SwapMode.ExactIn, 10_000_000n)!;
    expect(bestIn(SOL_USDC_POOLS, MINT.SOL, viaSol.amountOut).quote.amountOut).toBeLessThan(direct.amountOut);
    const body = await quote({ inputMint: MINT.X, outputMint: MINT.USDC, amount: '10000000' });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.xUsdcAmm]);
    expect(body.outAmount).toBe(direct.amountOut.toString());
  });

  it('finds 3-hop routes through both restricted intermediates (Z -> SOL -> USDC -> Y)', async () => {
    const amount = 10_000_000n;
    const h1 = engineQuote(POOL.zSolAmm, MINT.Z, SwapMode.ExactIn, amount)!;
    const h2 = bestIn(SOL_USDC_POOLS, MINT.SOL, h1.amountOut);
    const h3 = engineQuote(POOL.yUsdcDlmm, MINT.USDC, SwapMode.ExactIn, h2.quote.amountOut)!;

    const body = await quote({ inputMint: MINT.Z, outputMint: MINT.Y, amount: amount.toString() });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.zSolAmm, h2.address, POOL.yUsdcDlmm]);
    expect(body.routePlan.map((s) => s.swapInfo.outputMint)).toEqual([MINT.SOL, MINT.USDC, MINT.Y]);
    expectChained(body);
    expect(body.outAmount).toBe(h3.amountOut.toString());
  });

  it('onlyDirectRoutes=true keeps the single-hop route even when a 2-hop one pays more', async () => {
    const direct = engineQuote(POOL.xSolAmm, MINT.X, SwapMode.ExactIn, ONE_X)!;
    const body = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), onlyDirectRoutes: 'true' });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.xSolAmm]);
    expect(body.outAmount).toBe(direct.amountOut.toString());

    const none = await get({ inputMint: MINT.Z, outputMint: MINT.Y, amount: '1000000', onlyDirectRoutes: 'true' });
    expect(none.status).toBe(400);
    expect(none.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
  });

  it('restrictIntermediateTokens (default true) allows only wSOL and USDC in the middle', async () => {
    const restricted = await get({ inputMint: MINT.P, outputMint: MINT.Q, amount: '1000000' });
    expect(restricted.status).toBe(400);
    expect(restricted.body).toEqual({ error: 'Could not find any route', errorCode: 'COULD_NOT_FIND_ANY_ROUTE' });

    const h1 = engineQuote(POOL.pWAmm, MINT.P, SwapMode.ExactIn, 1_000_000n)!;
    const h2 = engineQuote(POOL.wQAmm, MINT.W, SwapMode.ExactIn, h1.amountOut)!;
    const open = await quote({ inputMint: MINT.P, outputMint: MINT.Q, amount: '1000000', restrictIntermediateTokens: 'false' });
    expect(open.routePlan.map((s) => s.swapInfo.outputMint)).toEqual([MINT.W, MINT.Q]);
    expect(open.outAmount).toBe(h2.amountOut.toString());
    expectChained(open);
  });

  it('maxAccounts bounds the route roughly: a tight budget leaves only the direct pool', async () => {
    const twoHop = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), maxAccounts: '40' });
    expect(twoHop.routePlan).toHaveLength(2);
    const direct = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), maxAccounts: '30' });
    expect(direct.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.xSolAmm]);
    const none = await get({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), maxAccounts: '10' });
    expect(none.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
  });
});

describe('GET /quote: ExactOut', () => {
  it('asks the least input for exactly the wanted output', async () => {
    const want = 100_000_000n; // 100 USDC
    const best = bestOut(SOL_USDC_POOLS, MINT.SOL, want);
    const body = await quote({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: want.toString(), swapMode: 'ExactOut' });
    expect(body).toMatchObject({
      swapMode: 'ExactOut',
      outAmount: want.toString(),
      inAmount: best.quote.amountIn.toString(),
      otherAmountThreshold: ((best.quote.amountIn * 10_050n) / 10_000n).toString(),
    });
    expect(body.routePlan).toHaveLength(1);
    expect(body.routePlan[0]!.swapInfo).toMatchObject({ ammKey: best.address, outAmount: want.toString() });
  });

  it('chains a 2-hop ExactOut route backwards exactly', async () => {
    const want = 10_000_000n; // 0.01 SOL
    const h2 = bestOut(SOL_USDC_POOLS, MINT.USDC, want);
    const h1 = engineQuote(POOL.xUsdcAmm, MINT.X, SwapMode.ExactOut, h2.quote.amountIn)!;
    const direct = engineQuote(POOL.xSolAmm, MINT.X, SwapMode.ExactOut, want)!;
    expect(h1.amountIn).toBeLessThan(direct.amountIn);

    const body = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: want.toString(), swapMode: 'ExactOut' });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.xUsdcAmm, h2.address]);
    expect(body.inAmount).toBe(h1.amountIn.toString());
    expect(body.outAmount).toBe(want.toString());
    expect(body.routePlan[1]!.swapInfo.outAmount).toBe(want.toString());
    expectChained(body);
  });

  it('answers no route when every pool refuses the output', async () => {
    const answer = await get({ inputMint: MINT.Y, outputMint: MINT.USDC, amount: '1000000000000000', swapMode: 'ExactOut' });
    expect(answer.status).toBe(400);
    expect(answer.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
  });
});

describe('GET /quote: slippage and platform fee', () => {
  it('otherAmountThreshold is outAmount less slippage, rounded down (ExactIn)', async () => {
    const plain = await quote({ inputMint: MINT.X, outputMint: MINT.USDC, amount: '123456789' });
    const out = BigInt(plain.outAmount);
    expect(plain.otherAmountThreshold).toBe(((out * 9_950n) / 10_000n).toString());

    const custom = await quote({ inputMint: MINT.X, outputMint: MINT.USDC, amount: '123456789', slippageBps: '123' });
    expect(custom.slippageBps).toBe(123);
    expect(custom.otherAmountThreshold).toBe(((out * 9_877n) / 10_000n).toString());

    const none = await quote({ inputMint: MINT.X, outputMint: MINT.USDC, amount: '123456789', slippageBps: '0' });
    expect(none.otherAmountThreshold).toBe(none.outAmount);
  });

  it('cuts the platform fee from the output (ExactIn) and reports it', async () => {
    const body = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), platformFeeBps: '20', slippageBps: '100' });
    const routeOut = BigInt(body.routePlan[body.routePlan.length - 1]!.swapInfo.outAmount);
    const fee = (routeOut * 20n) / 10_000n;
    expect(body.platformFee).toEqual({ amount: fee.toString(), feeBps: 20 });
    expect(body.outAmount).toBe((routeOut - fee).toString());
    expect(body.otherAmountThreshold).toBe((((routeOut - fee) * 9_900n) / 10_000n).toString());
  });

  it('charges the platform fee on the input for ExactOut', async () => {
    const body = await quote({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: '100000000',
      swapMode: 'ExactOut',
      platformFeeBps: '30',
    });
    const routeIn = BigInt(body.routePlan[0]!.swapInfo.inAmount);
    const fee = (routeIn * 30n) / 10_000n;
    expect(body.platformFee).toEqual({ amount: fee.toString(), feeBps: 30 });
    expect(body.inAmount).toBe((routeIn + fee).toString());
    expect(body.outAmount).toBe('100000000');
    expect(body.otherAmountThreshold).toBe((((routeIn + fee) * 10_050n) / 10_000n).toString());
  });
});

describe('GET /quote: DEX filters', () => {
  const solToUsdc = { inputMint: MINT.SOL, outputMint: MINT.USDC, amount: ONE_SOL.toString() };

  it('dexes keeps only the named labels, without regard to case', async () => {
    const amm = engineQuote(POOL.solUsdcAmm, MINT.SOL, SwapMode.ExactIn, ONE_SOL)!;
    const only = await quote({ ...solToUsdc, dexes: 'raydium' });
    expect(only.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.solUsdcAmm]);
    expect(only.outAmount).toBe(amm.amountOut.toString());
    const whirlpool = await quote({ ...solToUsdc, dexes: 'Whirlpool' });
    expect(whirlpool.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.solUsdcWhirlpool]);
  });

  it('dexes takes comma-separated labels with "+" for spaces, as the real API does', async () => {
    const none = await get(`inputMint=${MINT.SOL}&outputMint=${MINT.USDC}&amount=${ONE_SOL}&dexes=Meteora+DLMM`);
    expect(none.status).toBe(400);
    expect(none.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
    const both = await get(`inputMint=${MINT.Y}&outputMint=${MINT.USDC}&amount=1000000&dexes=Raydium,Meteora+DLMM`);
    expect(both.status).toBe(200);
    expect(both.body.routePlan[0].swapInfo.ammKey).toBe(POOL.yUsdcDlmm);
  });

  it('excludeDexes removes the named labels', async () => {
    const body = await quote({ ...solToUsdc, excludeDexes: 'Whirlpool' });
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([POOL.solUsdcAmm]);
    // X -> SOL without Raydium has no pool left on any path.
    const none = await get({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), excludeDexes: 'Raydium' });
    expect(none.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
  });

  it('applies the filters to every hop', async () => {
    const body = await quote({ inputMint: MINT.X, outputMint: MINT.SOL, amount: ONE_X.toString(), excludeDexes: 'Whirlpool' });
    expect(body.routePlan.every((s) => s.swapInfo.label !== 'Whirlpool')).toBe(true);
  });
});

describe('GET /quote: accepted parameters and paths', () => {
  it('accepts asLegacyTransaction and instructionVersion', async () => {
    const body = await quote({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: '1000',
      asLegacyTransaction: 'true',
      instructionVersion: 'V2',
      someFutureParameter: 'ignored',
    });
    expect(body.routePlan).toHaveLength(1);
  });

  it('answers the same on /quote, /swap/v1/quote and /v6/quote', async () => {
    const query = { inputMint: MINT.SOL, outputMint: MINT.USDC, amount: '1000000' };
    const outs = new Set<string>();
    for (const path of QUOTE_API_PATHS) {
      const answer = await get<QuoteResponse>(query, path);
      expect(answer.status).toBe(200);
      outs.add(answer.body.outAmount);
    }
    expect(outs.size).toBe(1);
  });

  it('reports the market slot as contextSlot', async () => {
    market.currentSlot = 987_654_321n;
    const body = await quote({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: '1000000' });
    expect(body.contextSlot).toBe(987_654_321);
  });

  it('quotes the current pool states and pool set as the market changes', async () => {
    const query = { inputMint: MINT.P, outputMint: MINT.Q, amount: '1000000' };
    expect((await get(query)).status).toBe(400);
    const direct = ammPool(testKey(199), MINT.P, MINT.Q, 50_000_000_000n, 50_000_000_000n);
    market.setPools([...market.pools(), direct]);
    const body = await quote(query);
    expect(body.routePlan.map((s) => s.swapInfo.ammKey)).toEqual([testKey(199)]);

    // Same pools, new state of one of them: no rebuild needed, the new state is quoted.
    const deeper = ammPool(testKey(199), MINT.P, MINT.Q, 500_000_000_000n, 500_000_000_000n);
    market.setPools(market.pools().map((p) => (p.address === deeper.address ? deeper : p)));
    const after = await quote(query);
    const expected = quoteSwap(deeper.pool, { aToB: deeper.pool.tokenA === MINT.P, mode: SwapMode.ExactIn, amount: 1_000_000n });
    expect(expected.ok && after.outAmount === expected.amountOut.toString()).toBe(true);
    expect(BigInt(after.outAmount)).toBeGreaterThan(BigInt(body.outAmount));
  });

  it('refuses other methods with 405', async () => {
    const res = await fetch(`${base}/quote?inputMint=${MINT.SOL}`, { method: 'POST' });
    expect(res.status).toBe(405);
  });
});

describe('GET /quote: validation', () => {
  const valid = { inputMint: MINT.SOL, outputMint: MINT.USDC, amount: '1000000' };
  const without = (name: keyof typeof valid): Record<string, string> => {
    const q: Record<string, string> = { ...valid };
    delete q[name];
    return q;
  };

  it.each([
    ['a missing inputMint', without('inputMint'), 'Failed to deserialize query string: missing field `inputMint`'],
    ['a missing outputMint', without('outputMint'), 'Failed to deserialize query string: missing field `outputMint`'],
    ['a missing amount', without('amount'), 'Failed to deserialize query string: missing field `amount`'],
    ['bad base58 in inputMint', { ...valid, inputMint: '0OIl111111111111111111111111111111111111111' }, 'Query parameter inputMint cannot be parsed: Invalid'],
    ['a short outputMint', { ...valid, outputMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt' }, 'Query parameter outputMint cannot be parsed: WrongSize'],
    ['a too long inputMint', { ...valid, inputMint: `${MINT.SOL}11` }, 'Query parameter inputMint cannot be parsed: WrongSize'],
    ['a non-numeric amount', { ...valid, amount: 'abc' }, 'Query parameter amount cannot be parsed: invalid digit found in string'],
    ['a negative amount', { ...valid, amount: '-5' }, 'Query parameter amount cannot be parsed: invalid digit found in string'],
    ['a fractional amount', { ...valid, amount: '1.5' }, 'Query parameter amount cannot be parsed: invalid digit found in string'],
    ['an empty amount', { ...valid, amount: '' }, 'Query parameter amount cannot be parsed: cannot parse integer from empty string'],
    ['an amount above u64', { ...valid, amount: '18446744073709551616' }, 'Query parameter amount cannot be parsed: number too large to fit in target type'],
    ['slippageBps above 10000', { ...valid, slippageBps: '10001' }, 'slippageBps must be at most 10000, got 10001'],
    ['slippageBps above u16', { ...valid, slippageBps: '70000' }, 'Query parameter slippageBps cannot be parsed: number too large to fit in target type'],
    ['a negative slippageBps', { ...valid, slippageBps: '-1' }, 'Query parameter slippageBps cannot be parsed: invalid digit found in string'],
    ['an unknown swapMode', { ...valid, swapMode: 'ExactSomething' }, 'Query parameter swapMode cannot be parsed: unknown variant `ExactSomething`, expected `ExactIn` or `ExactOut`'],
    ['a lower-case swapMode', { ...valid, swapMode: 'exactin' }, 'Query parameter swapMode cannot be parsed: unknown variant `exactin`, expected `ExactIn` or `ExactOut`'],
    ['a non-boolean onlyDirectRoutes', { ...valid, onlyDirectRoutes: 'yes' }, 'Query parameter onlyDirectRoutes cannot be parsed: provided string was not `true` or `false`'],
    ['a non-boolean restrictIntermediateTokens', { ...valid, restrictIntermediateTokens: '1' }, 'Query parameter restrictIntermediateTokens cannot be parsed: provided string was not `true` or `false`'],
    ['platformFeeBps above 10000', { ...valid, platformFeeBps: '10001' }, 'platformFeeBps must be at most 10000, got 10001'],
    ['a non-numeric maxAccounts', { ...valid, maxAccounts: 'many' }, 'Query parameter maxAccounts cannot be parsed: invalid digit found in string'],
    ['an unknown instructionVersion', { ...valid, instructionVersion: 'V3' }, 'Query parameter instructionVersion cannot be parsed: unknown variant `V3`, expected `V1` or `V2`'],
  ])('answers 400 INVALID_REQUEST for %s', async (_what, query, message) => {
    const answer = await get(query);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body).toEqual({ error: message, errorCode: 'INVALID_REQUEST' });
  });

  it('answers 400 CIRCULAR_ARBITRAGE_IS_DISABLED when input and output mints are equal', async () => {
    const answer = await get({ ...valid, outputMint: MINT.SOL });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'Input and output mints are not allowed to be equal', errorCode: 'CIRCULAR_ARBITRAGE_IS_DISABLED' });
  });

  it('answers 400 TOKEN_NOT_TRADABLE for a well-formed mint the market does not trade', async () => {
    const unknown = testKey(999);
    const asInput = await get({ ...valid, inputMint: unknown });
    expect(asInput.status).toBe(400);
    expect(asInput.body).toEqual({ error: `The token ${unknown} is not tradable`, errorCode: 'TOKEN_NOT_TRADABLE' });
    const asOutput = await get({ ...valid, outputMint: unknown });
    expect(asOutput.body.errorCode).toBe('TOKEN_NOT_TRADABLE');
  });

  it('answers 400 COULD_NOT_FIND_ANY_ROUTE for a listed token without pools and for a zero amount', async () => {
    const lone = await get({ ...valid, outputMint: MINT.LONE });
    expect(lone.status).toBe(400);
    expect(lone.body).toEqual({ error: 'Could not find any route', errorCode: 'COULD_NOT_FIND_ANY_ROUTE' });
    const zero = await get({ ...valid, amount: '0' });
    expect(zero.status).toBe(400);
    expect(zero.body.errorCode).toBe('COULD_NOT_FIND_ANY_ROUTE');
  });

  it('accepts the largest u64 amount and the bounds of slippageBps', async () => {
    expect((await get({ ...valid, amount: '18446744073709551615' })).body.errorCode).not.toBe('INVALID_REQUEST');
    expect((await get({ ...valid, slippageBps: '10000' })).status).toBe(200);
    expect((await get({ ...valid, slippageBps: '0' })).status).toBe(200);
  });

  it('checks parameters in order: a bad mint wins over a bad amount', async () => {
    const answer = await get({ inputMint: 'bad!', outputMint: MINT.USDC, amount: 'x' });
    expect(answer.body.error).toBe('Query parameter inputMint cannot be parsed: Invalid');
  });
});

describe('GET /quote: faults', () => {
  const query = { inputMint: MINT.SOL, outputMint: MINT.USDC, amount: '1000000' };

  it('delays the answer by quoteApi.latencyMs', async () => {
    faults.quoteApi.latencyMs = 120;
    const started = performance.now();
    const answer = await get(query);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    expect(answer.status).toBe(200);
  });

  it('answers 429 with Retry-After and a rate-limit body when failStatus is 429', async () => {
    Object.assign(faults.quoteApi, { failRate: 1, failStatus: 429 });
    const answer = await get(query);
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body).toEqual({ error: 'Rate limit exceeded', errorCode: 'RATE_LIMITED' });
  });

  it('answers an injected 5xx with a JSON error body', async () => {
    Object.assign(faults.quoteApi, { failRate: 1, failStatus: 503 });
    const unavailable = await get(query);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('1');
    expect(unavailable.body).toEqual({ error: 'Service Unavailable (injected)', errorCode: 'SERVICE_UNAVAILABLE' });

    faults.quoteApi.failStatus = 500;
    const internal = await get(query);
    expect(internal.status).toBe(500);
    expect(internal.body.errorCode).toBe('INTERNAL_SERVER_ERROR');
  });

  it('fails about failRate of the requests, repeatably for a seed, and none once cleared', async () => {
    Object.assign(faults.quoteApi, { failRate: 0.5, failStatus: 502 });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(query)).status);
    const failed = statuses.filter((s) => s === 502).length;
    expect(failed).toBeGreaterThan(8);
    expect(failed).toBeLessThan(32);
    expect(statuses.filter((s) => s !== 502).every((s) => s === 200)).toBe(true);

    faults.clear();
    for (let i = 0; i < 5; i++) expect((await get(query)).status).toBe(200);
  });
});

