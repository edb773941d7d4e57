/**
 * The simulator's /quote over the real chain's TOLL pools: every hop that moves TOLL pays its
 * Token-2022 transfer fee, exactly as quoteSwap with the pool's transfer fees says, and a route's
 * hops chain on what the trader actually holds between them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SwapMode, quoteSwap, type SwapQuote } from '../../dex/index.js';
import { createLogger } from '../../obs/logger.js';
import type { SimChain } from '../chain.js';
import { FaultInjector } from '../faults.js';
import { SimHttpServer } from '../http/sim-http-server.js';
import { SOL_TOKEN, TOLL_SYMBOL, USDC_TOKEN } from '../market.js';
import { testChain } from '../testing/chain-fixtures.js';
import { mountQuoteApi } from './quote-api.js';
import type { QuoteResponse } from './quote-response.js';

const logger = createLogger({ level: 'silent' });
let chain: SimChain;
let server: SimHttpServer;
let toll: string;

beforeAll(async () => {
  chain = testChain();
  chain.advanceSlot();
  server = new SimHttpServer({ port: 0, logger });
  mountQuoteApi(server, { market: chain, faults: new FaultInjector(3), logger });
  await server.start();
  toll = chain.tokens().find((t) => t.symbol === TOLL_SYMBOL)!.mint;
});

afterAll(async () => {
  await server.close();
});

async function quote(query: Record<string, string>): Promise<QuoteResponse> {
  const res = await fetch(`${server.url}/quote?${new URLSearchParams(query).toString()}`);
  const body = (await res.json()) as QuoteResponse;
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

function hopQuote(address: string, inputMint: string, mode: SwapMode, amount: bigint, withFees = true): SwapQuote {
  const view = chain.pool(address)!;
  const result = quoteSwap(view.pool, { aToB: view.pool.tokenA === inputMint, mode, amount }, view.ctx, withFees ? view.transferFees : undefined);
  if (!result.ok) throw new Error(result.message);
  return result;
}

describe('/quote on the Token-2022 pools', () => {
  it('deducts the transfer fee of TOLL sold, ExactIn and ExactOut, on the direct pool', async () => {
    const amount = 20_000_000_000n; // 20,000 TOLL
    const exactIn = await quote({ inputMint: toll, outputMint: USDC_TOKEN.mint, amount: amount.toString(), onlyDirectRoutes: 'true' });
    const step = exactIn.routePlan[0]!.swapInfo;
    const expected = hopQuote(step.ammKey, toll, SwapMode.ExactIn, amount);
    expect(exactIn.outAmount).toBe(expected.amountOut.toString());
    expect(expected.transferFees!.input).toBe(200_000_000n);
    // Without the fee the pool would have paid more.
    expect(hopQuote(step.ammKey, toll, SwapMode.ExactIn, amount, false).amountOut).toBeGreaterThan(expected.amountOut);

    const exactOut = await quote({ inputMint: USDC_TOKEN.mint, outputMint: toll, amount: amount.toString(), swapMode: 'ExactOut', onlyDirectRoutes: 'true' });
    const out = hopQuote(exactOut.routePlan[0]!.swapInfo.ammKey, USDC_TOKEN.mint, SwapMode.ExactOut, amount);
    expect(exactOut.outAmount).toBe(amount.toString());
    expect(exactOut.inAmount).toBe(out.amountIn.toString());
    // The pool sends the fee on top of what arrives.
    expect(out.transferFees!.poolAmountOut).toBe(amount + out.transferFees!.output);
  });

  it('chains a two-hop route on what arrives between the hops', async () => {
    const amount = 5_000_000_000n;
    const body = await quote({ inputMint: toll, outputMint: SOL_TOKEN.mint, amount: amount.toString(), excludeDexes: 'Whirlpool' });
    expect(body.routePlan).toHaveLength(2);
    const [first, second] = body.routePlan.map((s) => s.swapInfo) as [QuoteResponse['routePlan'][number]['swapInfo'], QuoteResponse['routePlan'][number]['swapInfo']];
    expect([first.inputMint, first.outputMint, second.outputMint]).toEqual([toll, USDC_TOKEN.mint, SOL_TOKEN.mint]);
    const h1 = hopQuote(first.ammKey, toll, SwapMode.ExactIn, amount);
    expect(first.outAmount).toBe(h1.amountOut.toString());
    expect(second.inAmount).toBe(first.outAmount);
    const h2 = hopQuote(second.ammKey, USDC_TOKEN.mint, SwapMode.ExactIn, h1.amountOut);
    expect(body.outAmount).toBe(h2.amountOut.toString());
  });
});
