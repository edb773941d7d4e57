import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDecoderRegistry, quoteSwap } from '../dex/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import { decodeTradeOpportunity, encodeTradeOpportunity, type TradeSignal } from '../messages/index.js';
import { RpcPoolLoader } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import type { SimPoolView, Simulator } from '../sim/index.js';
import { createMemoryKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import { PlannerPools } from '../trading/index.js';
import { priceOf } from './order-opportunity.js';
import { SignalStrategy, type SignalDecision, type SignalState } from './signal-strategy.js';

/** The signal strategy against a simulated pool: risk limits, sizes by the exact swap math, restarts. */

let sim: Simulator;
let rpc: RpcClient;
let kv: TestKeySpace;
let pool: SimPoolView;
let clock = 1_800_000_000_000;
const now = (): number => clock;

beforeAll(async () => {
  sim = manualSimulator(52);
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  kv = await createMemoryKeySpace();
  pool = sim.chain.pools().find((p) => p.dex === 'dexc_whirlpool' && p.transferFees === undefined)!;
}, 60_000);

afterAll(async () => {
  await kv?.drop();
  await rpc?.close();
  await sim?.close();
});

function pools(): PlannerPools {
  return new PlannerPools(new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() }), { now });
}

let seq = 0;
function signal(over: Partial<TradeSignal> = {}): TradeSignal {
  seq++;
  return { version: 1, id: `s-${seq}`, source: 'model', token: pool.pool.tokenA, direction: 'buy', confidence: 0.8, horizonMs: 300_000, createdAt: clock, ...over };
}

function params(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { token: pool.pool.tokenA, quoteCurrency: pool.pool.tokenB, pool: pool.address, amountPerSignal: '40000000', maxPosition: '1000000000000', minConfidence: 0.6, cooldownMs: 10_000, ...over };
}

describe('signal strategy', () => {
  it('buys amountPerSignal at the exact swap output, sells what that is worth, and keeps every decision with its reason', async () => {
    const p = pools();
    const decisions: SignalDecision[] = [];
    const strategy = new SignalStrategy('sig-1', params(), { pools: p, keys: kv.keys, now, onDecision: (d) => decisions.push(d) });
    const [buy] = await strategy.onSignal(signal(), clock);
    const loaded = p.loaded(pool.address)!;
    const q = quoteSwap(loaded.pool, { aToB: false, mode: 'ExactIn', amount: 40_000_000n }, loaded.context, loaded.transferFees);
    expect(q.ok).toBe(true);
    expect(buy).toMatchObject({ strategy: 'signal', strategyId: 'sig-1', side: 'buy', inputMint: pool.pool.tokenB, outputMint: pool.pool.tokenA, inputAmount: 40_000_000n, expectedOutput: q.ok ? q.amountOut : -1n, flashLoan: false, expectedProfit: 0n });
    expect(buy!.expiresAt - buy!.createdAt).toBe(60_000);
    expect(decodeTradeOpportunity(encodeTradeOpportunity(buy!))).toEqual(buy);

    // within the cooldown: skipped; then a sell sells tokens worth amountPerSignal, at most the position
    expect(await strategy.onSignal(signal({ direction: 'sell' }), clock)).toEqual([]);
    clock += 10_000;
    const [sell] = await strategy.onSignal(signal({ direction: 'sell', horizonMs: 20_000 }), clock);
    const price = priceOf(p.loaded(pool.address)!, pool.pool.tokenA)!;
    const worth = BigInt(Math.floor(40_000_000 / price));
    expect(sell).toMatchObject({ side: 'sell', inputMint: pool.pool.tokenA, inputAmount: worth < buy!.expectedOutput ? worth : buy!.expectedOutput });
    expect(sell!.expiresAt - sell!.createdAt).toBe(20_000); // cut to the signal's horizon
    expect(decisions.map((d) => `${d.action}:${d.reason}`)).toEqual(['buy:signal', 'skip:cooldown', 'sell:signal']);
    const state = (await kv.keys.getStrategyState<SignalState>('sig-1'))!;
    expect(BigInt(state.position)).toBe(buy!.expectedOutput - sell!.inputAmount);
  });

  it('skips by each risk limit, in order, and ignores signals about other tokens', async () => {
    const p = pools();
    const decisions: SignalDecision[] = [];
    const strategy = new SignalStrategy('sig-2', params({ sources: ['model'], maxPosition: '1' }), { pools: p, keys: kv.keys, now, onDecision: (d) => decisions.push(d) });
    const skipped = [
      signal({ source: 'other' }),
      signal({ createdAt: clock - 300_001 }),
      signal({ createdAt: clock + 60_000 }),
      signal({ confidence: 0.59 }),
      signal({ direction: 'sell' }),
      signal(), // a buy's expected tokens pass maxPosition 1
    ];
    for (const s of skipped) expect(await strategy.onSignal(s, clock)).toEqual([]);
    expect(await strategy.onSignal(signal({ token: pool.pool.tokenB }), clock)).toEqual([]);
    expect(await strategy.onSignal(signal({ quoteMint: pool.pool.tokenA }), clock)).toEqual([]);
    expect(decisions.map((d) => d.reason)).toEqual(['source_not_accepted', 'stale', 'from_future', 'low_confidence', 'no_position', 'max_position']);
  });

  it('publishes an order again after a failed publish, under the same id, and never after it was stored', async () => {
    const p = pools();
    let strategy = new SignalStrategy('sig-3', params(), { pools: p, keys: kv.keys, now });
    const s = signal();
    const [first] = await strategy.onSignal(s, clock);
    // restart before the stream stored it: the redelivered signal gives the same order
    strategy = new SignalStrategy('sig-3', params(), { pools: p, keys: kv.keys, now });
    const [again] = await strategy.onSignal(s, clock);
    expect(again).toEqual(first);
    await strategy.onPublished(again!);
    expect(await strategy.onSignal(s, clock)).toEqual([]);
    strategy = new SignalStrategy('sig-3', params(), { pools: p, keys: kv.keys, now });
    expect(await strategy.onSignal(s, clock)).toEqual([]);
  });

  it('refuses parameters naming the field', () => {
    const p = pools();
    const fieldOf = (over: Record<string, unknown>): unknown => {
      try {
        new SignalStrategy('x', params(over), { pools: p, keys: kv.keys, now });
      } catch (err) {
        return isTpError(err) && err.code === ErrorCode.ConfigInvalid ? (err.context as { setting: string }).setting : err;
      }
      return undefined;
    };
    expect(fieldOf({ minConfidence: 1.5 })).toBe('minConfidence');
    expect(fieldOf({ amountPerSignal: '0' })).toBe('amountPerSignal');
    expect(fieldOf({ amountPerSignal: 5 })).toBe('amountPerSignal');
    expect(fieldOf({ sources: 'model' })).toBe('sources');
    expect(fieldOf({ pool: 'nope' })).toBe('pool');
    expect(fieldOf({ cooldownMs: -1 })).toBe('cooldownMs');
  });
});
