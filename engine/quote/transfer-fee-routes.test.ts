/**
 * Token-2022 transfer fees on the quote engine's answers: the simulator's TOLL mint charges a
 * transfer fee (TransferFeeConfig), and its pools (TOLL/SOL Whirlpool and DLMM, TOLL/USDC AMM) are
 * stored with their mints' fee configs, as the loaders read them. Cache answers are the trader's
 * amounts (input fee deducted before the pool, output fee after), checked against Orca's own
 * quoter, whirlpools-core `swapQuoteByInputToken` / `swapQuoteByOutputToken` with `transferFeeA` /
 * `transferFeeB`; and the RPC fallback stores the fees it read, so the cache answers the same.
 */
import { swapQuoteByInputToken, swapQuoteByOutputToken, type TickArrayFacade, type TransferFee as OrcaTransferFee, type WhirlpoolFacade } from '@orca-so/whirlpools-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { Dex, SwapMode, directionFor, epochFee, quoteSwap, type ConcentratedPool, type TransferFeeConfig } from '../dex/index.js';
import { WSOL_MINT } from '../sim/known-accounts.js';
import type { SimPoolView } from '../sim/market-view.js';
import { QuoteEngine, type QuoteResult } from './quote-engine.js';
import type { QuoteRequest, RouteFilter } from './quote-request.js';
import { CountingLoader, FakeClock, manualSimulator, storePool } from './testing.js';

const sim = manualSimulator(7);
const chain = sim.chain;
let rpcUrl = '';
beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});
afterAll(async () => {
  await sim.close();
});

const TOLL = chain.tokens().find((t) => t.symbol === 'TOLL')!.mint;
const CORAL = chain.tokens().find((t) => t.symbol === 'CORAL')!.mint;
const WHIRLPOOL_ONLY: RouteFilter = { dexes: new Set([Dex.Whirlpool]), excludeDexes: undefined, onlyDirectRoutes: true };
const REWARD = { emissionsPerSecondX64: 0n, growthGlobalX64: 0n };

function request(inputMint: string, outputMint: string, amount: bigint, over: Partial<QuoteRequest> = {}): QuoteRequest {
  return { inputMint, outputMint, mode: SwapMode.ExactIn, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps: 50, ...over };
}

function sync(result: QuoteResult | Promise<QuoteResult>): QuoteResult {
  if (result instanceof Promise) throw new Error('expected an answer at once');
  return result;
}

function filledEngine(): { engine: QuoteEngine; cache: PoolCache } {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  let slot = 100n;
  for (const view of chain.pools()) storePool(cache, view, slot++);
  return { engine: new QuoteEngine({ cache, hybridMode: false, clock: () => 0 }), cache };
}

function orcaFee(config: TransferFeeConfig | undefined, epoch: bigint): OrcaTransferFee | undefined {
  if (config === undefined) return undefined;
  const fee = epochFee(config, epoch);
  return { feeBps: fee.transferFeeBasisPoints, maxFee: fee.maximumFee };
}

/** whirlpools-core's view of a simulator Whirlpool: the pool and every tick array it has. */
function orcaInputs(view: SimPoolView): { whirlpool: WhirlpoolFacade; arrays: TickArrayFacade[] } {
  const pool = view.pool as ConcentratedPool;
  const whirlpool: WhirlpoolFacade = {
    feeTierIndexSeed: new Uint8Array([pool.tickSpacing & 0xff, pool.tickSpacing >> 8]),
    tickSpacing: pool.tickSpacing,
    feeRate: pool.feeRate!,
    protocolFeeRate: 0,
    liquidity: pool.liquidity,
    sqrtPrice: pool.sqrtPrice,
    tickCurrentIndex: pool.tick,
    feeGrowthGlobalA: 0n,
    feeGrowthGlobalB: 0n,
    rewardLastUpdatedTimestamp: 0n,
    rewardInfos: [REWARD, REWARD, REWARD],
  };
  // Five contiguous arrays around the current tick (the SDK walks a contiguous sequence); an array
  // the pool does not have is all uninitialized ticks, as the program reads a missing one.
  const span = pool.tickSpacing * 88;
  const current = Math.floor(pool.tick / span) * span;
  const byStart = new Map((view.ctx.tickArrays ?? []).map((array) => [array.startTickIndex, array]));
  const noTick = { initialized: false, liquidityNet: 0n, liquidityGross: 0n };
  const arrays: TickArrayFacade[] = [-2, -1, 0, 1, 2].map((k) => {
    const start = current + k * span;
    const ticks = byStart.get(start)?.ticks ?? Array.from({ length: 88 }, () => noTick);
    return {
      startTickIndex: start,
      ticks: ticks.map((t) => ({
        initialized: t.initialized,
        liquidityNet: t.liquidityNet,
        liquidityGross: t.liquidityGross,
        feeGrowthOutsideA: 0n,
        feeGrowthOutsideB: 0n,
        rewardGrowthsOutside: [0n, 0n, 0n],
      })),
    };
  });
  return { whirlpool, arrays };
}

describe('Token-2022 transfer fees on cache quotes', () => {
  const whirlpool = chain.pools().find((p) => p.dex === Dex.Whirlpool && p.transferFees !== undefined)!;
  const fees = whirlpool.transferFees!;

  it('has a simulator Whirlpool of a fee-charging mint, its fees stored with it in the cache', () => {
    expect(whirlpool).toBeDefined();
    expect([whirlpool.pool.tokenA, whirlpool.pool.tokenB]).toContain(TOLL);
    const { cache } = filledEngine();
    expect(cache.transferFeesAt(cache.idOf(whirlpool.address))).toEqual(fees);
  });

  for (const [input, output] of [
    [WSOL_MINT, TOLL],
    [TOLL, WSOL_MINT],
  ] as const) {
    it(`matches whirlpools-core with transferFeeA / transferFeeB, ${input === TOLL ? 'TOLL in' : 'TOLL out'}, exact in and exact out`, () => {
      const { engine } = filledEngine();
      const { whirlpool: facade, arrays } = orcaInputs(whirlpool);
      const feeA = orcaFee(fees.tokenA, fees.epoch);
      const feeB = orcaFee(fees.tokenB, fees.epoch);
      const aToB = directionFor(whirlpool.pool, input, output);
      for (const amount of [1_000_000n, 250_000_000n]) {
        const exactIn = sync(engine.quote(request(input, output, amount, { routeFilter: WHIRLPOOL_ONLY })));
        if (!exactIn.ok) throw new Error(exactIn.message);
        const sdkIn = swapQuoteByInputToken(amount, aToB, 0, facade, undefined, arrays, 0n, feeA, feeB);
        expect(exactIn.quote.hops.map((h) => h.pool)).toEqual([whirlpool.address]);
        expect(exactIn.quote.inputAmount).toBe(amount);
        expect(exactIn.quote.outputAmount).toBe(sdkIn.tokenEstOut);
        expect(exactIn.quote.hops[0]!.fee).toBe(sdkIn.tradeFee);
        // The pool alone would pay more: the fees were deducted.
        const poolAlone = quoteSwap(whirlpool.pool, { aToB, mode: SwapMode.ExactIn, amount }, whirlpool.ctx);
        expect(poolAlone.ok && poolAlone.amountOut > exactIn.quote.outputAmount).toBe(true);

        const exactOut = sync(engine.quote(request(input, output, amount, { mode: SwapMode.ExactOut, routeFilter: WHIRLPOOL_ONLY })));
        if (!exactOut.ok) throw new Error(exactOut.message);
        const sdkOut = swapQuoteByOutputToken(amount, !aToB, 0, facade, undefined, arrays, 0n, feeA, feeB);
        expect(exactOut.quote.outputAmount).toBe(amount);
        expect(sdkOut.tokenOut).toBe(amount);
        expect(exactOut.quote.inputAmount).toBe(sdkOut.tokenEstIn);
        expect(exactOut.quote.hops[0]!.fee).toBe(sdkOut.tradeFee);
      }
    });
  }

  it('deducts the fee of a fee-charging first hop in a two-hop route: the second hop sells what the trader holds', () => {
    const { engine } = filledEngine();
    const amount = 400_000_000n;
    const answer = sync(engine.quote(request(TOLL, CORAL, amount)));
    if (!answer.ok) throw new Error(answer.message);
    const [first, second] = answer.quote.hops;
    expect(first!.inputMint).toBe(TOLL);
    const view = chain.pool(first!.pool)!;
    expect(view.transferFees).toBeDefined();
    const withFees = quoteSwap(view.pool, { aToB: directionFor(view.pool, TOLL, first!.outputMint), mode: SwapMode.ExactIn, amount }, view.ctx, view.transferFees);
    if (!withFees.ok) throw new Error(withFees.message);
    expect(first!.outAmount).toBe(withFees.amountOut);
    expect(withFees.transferFees!.input).toBeGreaterThan(0n);
    expect(second!.inAmount).toBe(first!.outAmount);
  });

  it('gives the same fee-deducted answer from RPC (fees read with the pool) and then from the cache it wrote back', async () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
    const engine = new QuoteEngine({ cache, hybridMode: true, loader: new CountingLoader(rpcUrl), clock: () => 0 });
    for (const view of chain.pools()) engine.directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    const req = request(WSOL_MINT, TOLL, 250_000_000n, { routeFilter: WHIRLPOOL_ONLY });
    const fromRpc = await engine.quote(req);
    if (!fromRpc.ok) throw new Error(fromRpc.message);
    expect(fromRpc.source).toBe('rpc');
    const rpcRoute = fromRpc.quote;
    const id = cache.idOf(whirlpool.address);
    expect(cache.transferFeesAt(id)?.tokenB ?? cache.transferFeesAt(id)?.tokenA).toBeDefined();
    const fromCache = sync(engine.quote(req));
    if (!fromCache.ok) throw new Error(fromCache.message);
    expect(fromCache.source).toBe('cache');
    expect(fromCache.quote.outputAmount).toBe(rpcRoute.outputAmount);
    const expected = quoteSwap(whirlpool.pool, { aToB: directionFor(whirlpool.pool, WSOL_MINT, TOLL), mode: SwapMode.ExactIn, amount: 250_000_000n }, whirlpool.ctx, whirlpool.transferFees);
    expect(expected.ok && expected.amountOut).toBe(rpcRoute.outputAmount);
  });
});
