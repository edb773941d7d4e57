/**
 * Realized P&L per strategy (strategy-pnl.ts): the average-cost rule on hand-computed fills, then
 * on PostgreSQL (the server and PGlite) with the trades written by the executor's own TradeStore (trades.strategy_id,
 * migration 006), read through StrategyAdmin as `tidepool strategies` and the planner's API do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TradeStore, tradeIdOf, type NewTrade } from '../executor/trade-store.js';
import type { RouteHop } from '../messages/index.js';
import { migrateUp } from '../state/db/migrations.js';
import type { SqlClient } from '../state/index.js';
import { TEST_BACKENDS, type TestDatabase } from '../state/db/testing.js';
import { StrategyAdmin } from './strategy-admin.js';
import { pnlOfFills, readStrategyPnl, type StrategyFill } from './strategy-pnl.js';

const WSOL = 'So11111111111111111111111111111111111111112';
const TOKEN = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const OTHER = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCecMSqaa9N';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

function fill(side: 'buy' | 'sell', tokens: bigint, lamports: bigint, over: Partial<StrategyFill> = {}): StrategyFill {
  const [inputMint, inputAmount, outputMint, outputAmount] = side === 'buy' ? [WSOL, lamports, TOKEN, tokens] : [TOKEN, tokens, WSOL, lamports];
  return { status: 'paper', inputMint, inputAmount, outputMint, outputAmount, actualProfit: null, profitMint: WSOL, fees: 5_000n, tip: 0n, path: 'direct', ...over };
}

describe('pnlOfFills: average cost', () => {
  it('a buy then a sell of the same tokens realizes what the sell brought minus what the buy cost', () => {
    const pnl = pnlOfFills(TOKEN, [fill('buy', 2_000_000n, 1_000_000n), fill('sell', 2_000_000n, 1_030_517n)]);
    expect(pnl).toEqual({ mint: WSOL, realizedPnl: 30_517n, position: 0n, costBasis: 0n, fills: 2, skipped: 0, fees: 10_000n, tips: 0n });
  });

  it('a partial sell is charged the average cost, rounded down; selling past the position opens a short', () => {
    // Two buys: 4,000,000 tokens for 2,100,001 lamports. Selling 3,000,000 of them for 1,700,000:
    // their cost ⌊2,100,001 × 3/4⌋ = 1,575,000, realized 125,000; 1,000,000 tokens left, cost 525,001.
    const fills = [fill('buy', 2_000_000n, 1_000_000n), fill('buy', 2_000_000n, 1_100_001n), fill('sell', 3_000_000n, 1_700_000n)];
    expect(pnlOfFills(TOKEN, fills)).toMatchObject({ realizedPnl: 125_000n, position: 1_000_000n, costBasis: 525_001n, fills: 3 });
    // Selling 1,500,000 for 900,000: 1,000,000 of them close the long (proceeds ⌊900,000 × 2/3⌋ =
    // 600,000, realized 600,000 − 525,001 = 74,999), 500,000 open a short that got 300,000.
    fills.push(fill('sell', 1_500_000n, 900_000n));
    expect(pnlOfFills(TOKEN, fills)).toMatchObject({ realizedPnl: 199_999n, position: -500_000n, costBasis: -300_000n });
    // Buying the 500,000 back for 280,000 realizes 300,000 − 280,000 = 20,000 more.
    fills.push(fill('buy', 500_000n, 280_000n));
    expect(pnlOfFills(TOKEN, fills)).toMatchObject({ realizedPnl: 219_999n, position: 0n, costBasis: 0n, fills: 5 });
  });

  it('counts the fees of failed trades, leaves their amounts out, and skips a fill in another quote mint', () => {
    const pnl = pnlOfFills(TOKEN, [
      fill('buy', 1_000n, 500n, { path: 'bundle', tip: 6_000n }),
      fill('buy', 1_000n, 500n, { status: 'failed', fees: 7_000n }),
      fill('sell', 1_000n, 600n, { outputMint: OTHER }),
      fill('sell', 1_000n, 650n),
    ]);
    expect(pnl).toMatchObject({ realizedPnl: 150n, position: 0n, fills: 2, skipped: 1, fees: 22_000n, tips: 6_000n });
  });

  it('arbitrage sums the actual profit of its fills', () => {
    const arb = (status: string, actualProfit: bigint): StrategyFill => ({ ...fill('buy', 0n, 0n), status, actualProfit, path: 'bundle', tip: 5_000n });
    expect(pnlOfFills(null, [arb('confirmed', 12_345n), arb('paper', -2_000n), arb('failed', 0n)])).toMatchObject({ mint: WSOL, realizedPnl: 10_345n, position: 0n, fills: 2, tips: 10_000n });
  });
});

describe.each(TEST_BACKENDS)('strategy P&L from the trades table ($name)', ({ create }) => {
  let database: TestDatabase;
  let db: SqlClient;
  let trades: TradeStore;
  let admin: StrategyAdmin;
  let seq = 0;

  beforeAll(async () => {
    database = await create();
    db = database.db;
    await migrateUp(db);
    trades = new TradeStore(db);
    admin = new StrategyAdmin(db);
  }, 60_000);

  afterAll(async () => {
    await database?.drop();
  });

  function hop(inputMint: string, inputAmount: bigint, outputMint: string, outputAmount: bigint, step = 0): RouteHop {
    return { step, pool: POOL, dex: 'dexa_amm', inputMint, outputMint, inputAmount, outputAmount, fee: 0n, feeMint: inputMint, priceImpact: 0, slot: 5n };
  }

  function newTrade(strategyId: string, strategy: NewTrade['strategy'], route: RouteHop[]): NewTrade {
    seq++;
    const opportunityId = `22222222-0000-4000-8000-${String(seq).padStart(12, '0')}`;
    return { id: tradeIdOf(opportunityId), opportunityId, executorId: 'pnl-test', strategy, strategyId, walletId: null, path: 'direct', profitMint: WSOL, expectedProfit: 0n, tip: 0n, route };
  }

  /** A paper order of `strategyId`: quote → token (buy) or token → quote (sell). */
  async function order(strategyId: string, strategy: 'grid' | 'dca', side: 'buy' | 'sell', tokens: bigint, lamports: bigint, fees = 5_000n): Promise<void> {
    const route = side === 'buy' ? [hop(WSOL, lamports, TOKEN, tokens)] : [hop(TOKEN, tokens, WSOL, lamports)];
    await trades.insertPaper({ ...newTrade(strategyId, strategy, route), actualProfit: 0n, fees, slot: 9n });
  }

  it('a grid after a buy fill then a sell fill: realized P&L is the sell\'s lamports minus the buy\'s, exactly', async () => {
    const grid = await admin.add('grid', { pool: POOL, token: TOKEN, lowerPrice: 0.4, upperPrice: 0.6, levels: 3, amountPerLevel: '2000000' });
    // A trade of the same type from another grid must not count.
    const other = await admin.add('grid', { pool: POOL, token: TOKEN, lowerPrice: 0.4, upperPrice: 0.6, levels: 3, amountPerLevel: '2000000' });
    await order(other.id, 'grid', 'sell', 2_000_000n, 9_999_999n);
    expect((await admin.show(grid.id)).pnl).toMatchObject({ realizedPnl: 0n, fills: 0, position: 0n });

    // Level 0 buys 2,000,001 tokens for 1,000,000 lamports, then sells 2,000,000 of them for
    // 1,050,000: their cost ⌊1,000,000 × 2,000,000 / 2,000,001⌋ = 999,999, so 50,001 realized;
    // 1 token left, held at a cost of 1 lamport.
    await order(grid.id, 'grid', 'buy', 2_000_001n, 1_000_000n);
    expect((await admin.show(grid.id)).pnl).toMatchObject({ mint: WSOL, realizedPnl: 0n, position: 2_000_001n, costBasis: 1_000_000n, fills: 1 });
    await order(grid.id, 'grid', 'sell', 2_000_000n, 1_050_000n);
    const shown = await admin.show(grid.id.slice(0, 8));
    expect(shown.pnl).toEqual({ mint: WSOL, realizedPnl: 50_001n, position: 1n, costBasis: 1n, fills: 2, skipped: 0, fees: 10_000n, tips: 0n });
    const listed = (await admin.list()).find((s) => s.id === grid.id)!;
    expect(listed.pnl.realizedPnl).toBe(50_001n);
    const stored = await db.query<{ strategy: string; strategy_id: string }>('SELECT strategy, strategy_id FROM trades WHERE strategy_id = $1', [grid.id]);
    expect(stored).toEqual([{ strategy: 'grid', strategy_id: grid.id }, { strategy: 'grid', strategy_id: grid.id }]);
  });

  it('a DCA run: three buys at rising prices, then the exit sells the whole position', async () => {
    const dca = await admin.add('dca', { pool: POOL, token: TOKEN, quoteCurrency: WSOL, intervalMinutes: 60, amountPerOrder: '1000000', maxPosition: '100000000' });
    await order(dca.id, 'dca', 'buy', 10_000_000n, 1_000_000n);
    await order(dca.id, 'dca', 'buy', 9_000_000n, 1_000_000n);
    await order(dca.id, 'dca', 'buy', 8_000_000n, 1_000_000n);
    expect((await admin.show(dca.id)).pnl).toMatchObject({ position: 27_000_000n, costBasis: 3_000_000n, realizedPnl: 0n });
    // The take-profit exit sells all 27,000,000 tokens for 3,240,000 lamports: 240,000 realized.
    await order(dca.id, 'dca', 'sell', 27_000_000n, 3_240_000n);
    expect((await admin.show(dca.id)).pnl).toMatchObject({ mint: WSOL, position: 0n, costBasis: 0n, realizedPnl: 240_000n, fills: 4, fees: 20_000n });
  });

  it('an arbitrage strategy: the sum of its trades\' actual profit; a failed trade adds its fee only', async () => {
    const arb = await admin.add('arbitrage', {});
    const cycle = [hop(WSOL, 1_000_000n, TOKEN, 150n), hop(TOKEN, 150n, WSOL, 1_020_000n, 1)];
    await trades.insertPaper({ ...newTrade(arb.id, 'arbitrage', cycle), path: 'bundle', tip: 5_000n, actualProfit: 9_000n, fees: 10_000n, slot: 9n });
    const real = newTrade(arb.id, 'arbitrage', cycle);
    await trades.insertPending({ ...real, signature: `${'2'.repeat(87)}A`, transaction: 'AQID', lastValidBlockHeight: 1n });
    await trades.markOutcome(real.id, { status: 'confirmed', actualProfit: 6_001n, slot: 10n, fees: 10_000n });
    const failed = newTrade(arb.id, 'arbitrage', cycle);
    await trades.insertPending({ ...failed, signature: `${'3'.repeat(87)}A`, transaction: 'AQID', lastValidBlockHeight: 1n });
    await trades.markOutcome(failed.id, { status: 'failed', actualProfit: -10_000n, fees: 10_000n, error: 'slippage' });
    expect((await admin.show(arb.id)).pnl).toEqual({ mint: WSOL, realizedPnl: 15_001n, position: 0n, costBasis: 0n, fills: 2, skipped: 0, fees: 30_000n, tips: 5_000n });
  });

  it('a real trade counts what landed (migration 007), not what its transaction was built for', async () => {
    const dca = await admin.add('dca', { pool: POOL, token: TOKEN, quoteCurrency: WSOL, intervalMinutes: 60, amountPerOrder: '1000000', maxPosition: '100000000' });
    // Built to buy 10,000,000 tokens for 1,000,000 lamports; 10,250,000 landed (the pool moved in its favour).
    const buy = newTrade(dca.id, 'dca', [hop(WSOL, 1_000_000n, TOKEN, 10_000_000n)]);
    await trades.insertPending({ ...buy, signature: `${'4'.repeat(87)}A`, transaction: 'AQID', lastValidBlockHeight: 1n });
    await trades.markOutcome(buy.id, { status: 'confirmed', actualProfit: 10_250_000n, slot: 11n, fees: 5_000n, landed: { input: 1_000_000n, output: 10_250_000n } });
    const [row] = await db.query<{ landed_input_amount: string; landed_output_amount: string }>('SELECT landed_input_amount::text, landed_output_amount::text FROM trades WHERE id = $1', [buy.id]);
    expect(row).toEqual({ landed_input_amount: '1000000', landed_output_amount: '10250000' });
    // Selling 5,125,000 of them for 600,000: their cost ⌊1,000,000 × 5,125,000 / 10,250,000⌋ = 500,000.
    await order(dca.id, 'dca', 'sell', 5_125_000n, 600_000n);
    expect((await admin.show(dca.id)).pnl).toMatchObject({ mint: WSOL, position: 5_125_000n, costBasis: 500_000n, realizedPnl: 100_000n, fills: 2 });
  });

  it('incremental: a second read after one new trade folds that row only and gives what a full recompute gives', async () => {
    const dca = await admin.add('dca', { pool: POOL, token: TOKEN, quoteCurrency: WSOL, intervalMinutes: 60, amountPerOrder: '1000000', maxPosition: '100000000' });
    const reader = new StrategyAdmin(db);
    const full = async (): Promise<unknown> => (await readStrategyPnl(db, [dca])).get(dca.id);
    await order(dca.id, 'dca', 'buy', 10_000_000n, 1_000_000n);
    await order(dca.id, 'dca', 'buy', 9_000_000n, 1_000_000n);
    const first = (await reader.show(dca.id)).pnl;
    expect(reader.pnlStats).toMatchObject({ fullReads: 1 });
    await order(dca.id, 'dca', 'sell', 7_000_000n, 900_000n);
    const second = (await reader.show(dca.id)).pnl;
    expect(reader.pnlStats).toMatchObject({ fullReads: 1, lastFolded: 1 });
    expect(second).not.toEqual(first);
    expect(second).toEqual(await full());
    // Nothing new: nothing folded, the same figures.
    expect((await reader.show(dca.id)).pnl).toEqual(second);
    expect(reader.pnlStats).toMatchObject({ fullReads: 1, lastFolded: 0 });

    // A real trade written before a paper one but settled after it: the book is read in full again.
    const late = newTrade(dca.id, 'dca', [hop(TOKEN, 4_000_000n, WSOL, 520_000n)]);
    await trades.insertPending({ ...late, signature: `${'5'.repeat(87)}A`, transaction: 'AQID', lastValidBlockHeight: 1n });
    await order(dca.id, 'dca', 'buy', 2_000_000n, 300_000n);
    expect((await reader.show(dca.id)).pnl).toEqual(await full());
    expect(reader.pnlStats).toMatchObject({ fullReads: 1, lastFolded: 1 });
    // Its slot (8) is below the paper order's (9): the two rows sort the same way when their
    // created_at tie (pglite's clock can give both one millisecond), ordered by slot.
    await trades.markOutcome(late.id, { status: 'confirmed', actualProfit: 0n, slot: 8n, fees: 5_000n, landed: { input: 4_000_000n, output: 515_000n } });
    const settled = (await reader.show(dca.id)).pnl;
    expect(reader.pnlStats).toMatchObject({ fullReads: 2 });
    expect(settled).toEqual(await full());
    expect(settled.fills).toBe(5);
    // The list reads every strategy through the same books: the same figures.
    expect((await reader.list()).find((s) => s.id === dca.id)!.pnl).toEqual(settled);
  });
});
