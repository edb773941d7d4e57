import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDecoderRegistry } from '../dex/index.js';
import { RpcPoolLoader } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { openPriceGap, type SimPoolView, type Simulator } from '../sim/index.js';
import { openMigratedDatabase, type SqlClient } from '../state/index.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { createMemoryKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import type { ExecutionResult, MarketEvent } from '../messages/index.js';
import { DcaStrategy, type DcaState } from './dca-strategy.js';
import { GridStrategy } from './grid-strategy.js';
import { priceOf } from './order-opportunity.js';
import { PlannerPools } from '../trading/planner-pools.js';
import { StrategyStore } from './strategy-store.js';
import { decodeTradeOpportunity, encodeTradeOpportunity, type TradeOpportunity } from '../messages/trade-opportunity.js';

let sim: Simulator;
let rpc: RpcClient;
let database: TestDatabase;
let db: SqlClient;
let kv: TestKeySpace;
let pool: SimPoolView;
let clock = 1_800_000_000_000;
const now = (): number => clock;

beforeAll(async () => {
  sim = manualSimulator(51);
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  database = await createServerDatabase();
  db = (await openMigratedDatabase({ url: database.url! })).db;
  kv = await createMemoryKeySpace();
  pool = sim.chain.pools().find((p) => p.dex === 'dexc_whirlpool' && p.transferFees === undefined)!;
}, 60_000);

afterAll(async () => {
  await kv?.drop();
  await db?.close();
  await database?.drop();
  await rpc?.close();
  await sim?.close();
});

function pools(): PlannerPools {
  return new PlannerPools(new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() }), { now });
}

/** Moves the pool's price by `bps` (signed) with a real swap, lands it, and reads it into `p`. */
async function move(p: PlannerPools, bps: number): Promise<void> {
  openPriceGap(sim.chain, { pool: pool.address, gapBps: Math.abs(bps), direction: bps > 0 ? 'up' : 'down' });
  sim.chain.advanceSlot();
  await p.refresh([pool.address]);
}

let seq = 0;
function event(): MarketEvent {
  seq++;
  return { version: 1, id: `ev-${seq}`, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: clock, slot: sim.chain.slot().toString(), data: {} };
}

/** The ExecutionResult an executor publishes for `op`, with the wallet's actual fill. */
function executed(op: TradeOpportunity, status: ExecutionResult['status'], filledInput: bigint, filledOutput: bigint): ExecutionResult {
  return {
    version: 1, tradeId: op.id, opportunityId: op.id, strategy: op.strategy, strategyId: op.strategyId, executorId: 'test', path: 'direct', status,
    profitMint: op.profitMint, expectedProfit: 0n, filledInput, filledOutput, fees: 5_000n, tip: 0n, latency: { receivedAt: clock, executionMs: 1 }, completedAt: clock,
  };
}

const sides = (ops: TradeOpportunity[]): string[] => ops.map((o) => `${o.side}:L${String(o.details?.['level'])}`).sort();

describe('grid strategy on a scripted price path', () => {
  it('triggers exactly by spec 03 rule, resumes after a restart without double triggering, and expires orders', async () => {
    const p = pools();
    await p.refresh([pool.address]);
    const token = pool.pool.tokenA;
    const p0 = priceOf(p.loaded(pool.address)!, token)!;
    const params = { pool: pool.address, token, lowerPrice: p0 * 0.985, upperPrice: p0 * 1.025, levels: 5, amountPerLevel: '1000000', orderTtlMs: 60_000 };
    const row = await new StrategyStore(db).insert('grid', params);
    let grid = new GridStrategy(row.id, params, { pools: p, keys: kv.keys, db, now });
    // Levels (buy/sell): L0 .985/.995, L1 .995/1.005, L2 1.005/1.015, L3 1.015/1.025 of p0.
    const first = await grid.onMarketEvent(event(), clock);
    expect(sides(first)).toEqual(['buy:L2', 'buy:L3', 'sell:L0']); // L1: p0 is above its buy and below its sell
    for (const op of first) expect(decodeTradeOpportunity(encodeTradeOpportunity(op))).toEqual(op);
    expect(await grid.onMarketEvent(event(), clock)).toEqual([]); // the same price again: all filled sides stay quiet

    await move(p, -100); // ≈ 0.99 p0: L1 buys; L2, L3 already buy-filled; L0 not at its sell
    expect(sides(await grid.onMarketEvent(event(), clock))).toEqual(['buy:L1']);

    // restart in the middle: a new instance on the same state
    grid = new GridStrategy(row.id, params, { pools: p, keys: kv.keys, db, now });
    expect(await grid.onMarketEvent(event(), clock)).toEqual([]);

    await move(p, 320); // ≈ 1.0217 p0: L1 and L2 sell (buy-filled, at or above their sell); L3's sell 1.025 not reached
    expect(sides(await grid.onMarketEvent(event(), clock))).toEqual(['sell:L1', 'sell:L2']);
    const statuses = await db.query<{ status: string; n: string }>('SELECT status, count(*)::text AS n FROM grid_orders WHERE strategy_id = $1 GROUP BY status', [row.id]);
    expect(statuses).toEqual([{ status: 'pending', n: '6' }]);

    // expiry: after orderTtlMs the open orders expire and their sides may trigger again
    clock += 60_001;
    expect(sides(await grid.onMarketEvent(event(), clock))).toEqual(['sell:L0', 'sell:L1', 'sell:L2']);
    const after = await db.query<{ status: string; n: string }>('SELECT status, count(*)::text AS n FROM grid_orders WHERE strategy_id = $1 GROUP BY status ORDER BY status', [row.id]);
    expect(after).toEqual([{ status: 'expired', n: '6' }, { status: 'pending', n: '3' }]);
    expect(await grid.cancelOpen()).toBe(3);
  });

  it('reconciles executions: fills by the actual amounts, re-arms the other side, cancels on failure', async () => {
    const p = pools();
    await p.refresh([pool.address]);
    const token = pool.pool.tokenA;
    const p0 = priceOf(p.loaded(pool.address)!, token)!;
    const params = { pool: pool.address, token, lowerPrice: p0 * 0.985, upperPrice: p0 * 1.025, levels: 5, amountPerLevel: '1000000', orderTtlMs: 60_000 };
    const row = await new StrategyStore(db).insert('grid', params);
    const grid = new GridStrategy(row.id, params, { pools: p, keys: kv.keys, db, now });
    const first = await grid.onMarketEvent(event(), clock);
    const byLevel = (ops: TradeOpportunity[], label: string): TradeOpportunity => ops.find((o) => `${o.side}:L${String(o.details?.['level'])}` === label)!;
    const status = async (id: string): Promise<{ status: string; filled: string }> =>
      (await db.query<{ status: string; filled: string }>('SELECT status, filled::text FROM grid_orders WHERE id = $1', [id]))[0]!;
    const buy3 = byLevel(first, 'buy:L3');
    const buy2 = byLevel(first, 'buy:L2');
    const sell0 = byLevel(first, 'sell:L0');

    // L3's buy fills in two parts: the wallet's actual token receipts, not the requested amount
    expect(await grid.onExecution(executed(buy3, 'confirmed', buy3.inputAmount, 400_000n))).toBe('partial');
    expect(await status(buy3.id)).toEqual({ status: 'partial', filled: '400000' });
    expect(await grid.onExecution(executed(buy3, 'confirmed', buy3.inputAmount, 600_000n))).toBe('filled');
    expect(await status(buy3.id)).toEqual({ status: 'filled', filled: '1000000' });
    expect(await grid.onExecution(executed(buy3, 'confirmed', buy3.inputAmount, 1n))).toBeUndefined(); // final: nothing moves it

    // L2's buy fails on chain without a fill: cancelled, and its buy side is armed again
    expect(await grid.onExecution(executed(buy2, 'failed', 0n, 0n))).toBe('cancelled');
    expect(await status(buy2.id)).toEqual({ status: 'cancelled', filled: '0' });
    // L0's sell fills: L0's buy (one level below) is armed again, and so is L2's buy
    expect(await grid.onExecution(executed(sell0, 'paper', 1_000_000n, sell0.expectedOutput))).toBe('filled');
    expect(sides(await grid.onMarketEvent(event(), clock))).toEqual(['buy:L2']); // L0's buy waits for its price; L3 filled its buy, sell not reached

    // the re-armed L2 buy is never executed: after orderTtlMs it expires, and a late fill cannot move it
    const rebuy2 = (await db.query<{ id: string }>("SELECT id FROM grid_orders WHERE strategy_id = $1 AND status = 'pending' AND price_level = $2", [row.id, Number(buy2.details?.['price'])]))[0]!.id;
    clock += 60_001;
    await grid.onMarketEvent(event(), clock);
    expect((await status(rebuy2)).status).toBe('expired');
    expect(await grid.onExecution({ ...executed(buy2, 'confirmed', buy2.inputAmount, 1_000_000n), opportunityId: rebuy2 })).toBeUndefined();
    const flags = (await kv.keys.getStrategyState<{ levels: { buyFilled: boolean; sellFilled: boolean }[] }>(row.id))!.levels;
    expect(flags[3]).toMatchObject({ buyFilled: true, sellFilled: false }); // bought: the sell one level above is armed
  });

  it('a grid edited to more levels starts its flags afresh, with order ids never used before', async () => {
    const p = pools();
    await p.refresh([pool.address]);
    const token = pool.pool.tokenA;
    const p0 = priceOf(p.loaded(pool.address)!, token)!;
    const params = { pool: pool.address, token, lowerPrice: p0 * 0.985, upperPrice: p0 * 1.025, levels: 3, amountPerLevel: '1000000' };
    const row = await new StrategyStore(db).insert('grid', params);
    const before = await new GridStrategy(row.id, params, { pools: p, keys: kv.keys, db, now }).onMarketEvent(event(), clock);
    expect(before.length).toBeGreaterThan(0);
    const edited = { ...params, levels: 6 };
    const after = await new GridStrategy(row.id, edited, { pools: p, keys: kv.keys, db, now }).onMarketEvent(event(), clock);
    expect(after.length).toBeGreaterThan(0);
    const levels = new Set(after.map((o) => Number(o.details?.['level'])));
    expect(Math.max(...levels)).toBeGreaterThan(1); // levels the 3-point grid did not have
    for (const op of after) expect(before.map((b) => b.id)).not.toContain(op.id);
    const rows = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM grid_orders WHERE strategy_id = $1', [row.id]);
    expect(Number(rows[0]!.n)).toBe(before.length + after.length);
  });

  it('refuses parameters without a pool or with upper below lower', () => {
    const p = pools();
    expect(() => new GridStrategy('x', { token: pool.pool.tokenA, lowerPrice: 1, upperPrice: 2, levels: 3, amountPerLevel: '1' }, { pools: p, keys: kv.keys, db, now })).toThrow(/pool/);
    expect(() => new GridStrategy('x', { pool: pool.address, token: pool.pool.tokenA, lowerPrice: 2, upperPrice: 1, levels: 3, amountPerLevel: '1' }, { pools: p, keys: kv.keys, db, now })).toThrow(/upperPrice/);
  });
});

describe('DCA strategy on a scripted price path', () => {
  it('buys once per interval unless a bound says no, records why, exits at the stop loss, and survives a restart', async () => {
    const p = pools();
    await p.refresh([pool.address]);
    const token = pool.pool.tokenA;
    const quote = pool.pool.tokenB;
    const p0 = priceOf(p.loaded(pool.address)!, token)!;
    const amountPerOrder = 50_000_000n;
    const expectedTokens = BigInt(Math.floor(Number(amountPerOrder) / p0));
    const params = {
      token, quoteCurrency: quote, pool: pool.address, intervalMinutes: 1, amountPerOrder: amountPerOrder.toString(),
      maxPrice: p0 * 1.01, minPrice: p0 * 0.9, stopLoss: p0 * 0.98, maxPosition: ((expectedTokens * 5n) / 2n).toString(),
    };
    const id = (await new StrategyStore(db).insert('dca', params)).id;
    let dca = new DcaStrategy(id, params, { pools: p, keys: kv.keys, now });
    const buy1 = await dca.onMarketEvent(event(), clock);
    expect(buy1.map((o) => o.side)).toEqual(['buy']);
    expect(buy1[0]!.inputAmount).toBe(amountPerOrder);
    expect(await dca.onMarketEvent(event(), clock)).toEqual([]); // same interval: one order per interval
    clock += 60_000;
    const buy2 = await dca.onMarketEvent(event(), clock);
    expect(buy2.map((o) => o.side)).toEqual(['buy']);
    // the executions fill a little less than quoted: the position is what the wallet received
    const got1 = buy1[0]!.expectedOutput - 7n;
    const got2 = buy2[0]!.expectedOutput - 11n;
    expect(await dca.onExecution(executed(buy1[0]!, 'confirmed', amountPerOrder, got1))).toBe(true);
    // restart in the middle of interval 1: nothing more in it
    dca = new DcaStrategy(id, params, { pools: p, keys: kv.keys, now });
    expect(await dca.onExecution(executed(buy2[0]!, 'confirmed', amountPerOrder - 3n, got2))).toBe(true);
    expect(await dca.onExecution(executed(buy2[0]!, 'confirmed', amountPerOrder, got2))).toBe(false); // once only
    expect(await dca.onMarketEvent(event(), clock)).toEqual([]);
    clock += 60_000;
    expect(await dca.onMarketEvent(event(), clock)).toEqual([]); // a third buy would pass maxPosition
    await move(p, 150); // above maxPrice
    clock += 60_000;
    expect(await dca.onMarketEvent(event(), clock)).toEqual([]);
    await move(p, -400); // ≈ 0.975 p0: at or below the stop loss, above minPrice
    const exit = await dca.onMarketEvent(event(), clock);
    expect(exit.map((o) => [o.side, o.details?.['reason']])).toEqual([['sell', 'stop_loss']]);
    const state = (await kv.keys.getStrategyState<DcaState>(id))!;
    expect(state.decisions.map((d) => `${d.interval}:${d.action}:${d.reason}`)).toEqual(['0:buy:interval', '1:buy:interval', '2:skip:max_position', '3:skip:above_max_price', '3:sell:stop_loss']);
    expect(exit[0]!.inputAmount).toBe(got1 + got2); // the whole actual position
    const sold = state.decisions[state.decisions.length - 1]!;
    expect(sold.averageFillPrice).toBeCloseTo(Number(2n * amountPerOrder - 3n) / Number(got1 + got2), 9);
    expect(await dca.onMarketEvent(event(), clock)).toEqual([]); // the exit is pending: no second one
    expect(await dca.onExecution(executed(exit[0]!, 'confirmed', got1 + got2, exit[0]!.expectedOutput))).toBe(true);
    expect((await kv.keys.getStrategyState<DcaState>(id))!).toMatchObject({ position: '0', cost: '0', pending: {} });
  });
});
