import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { WSOL_MINT } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { tradeIdOf } from '../executor/index.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import type { ExecutionResult, TradeOpportunity } from '../messages/index.js';
import { createLogger } from '../obs/logger.js';
import { StrategyAdmin, orderOpportunity, readStrategyPnl } from '../planner/index.js';
import { openPriceGap, type SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import type { SqlClient } from '../state/index.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { confirmedOn, executionResultsByTrade, importWorkers, publishOpportunity, realExecutorConfig, resultOfTrade } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';

/**
 * Realized P&L of real trades counts what landed (issue 27, migration 007): the real executor on
 * the simulator (direct and bundle paths), the local NATS, Redis and PostgreSQL. Between the swap's
 * build and its landing the pool is moved (another trader's swap, in the trade's favour so it still
 * lands), so the trade fills another output than its transaction was built for; its row keeps both,
 * and the strategy's P&L is the landed one.
 */

const logger = createLogger({ name: 'landed-pnl-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let rpcProxy: FlakyJsonRpcProxy;
let engineProxy: FlakyJsonRpcProxy;
let bus: FixtureBus;
let app: ExecutorApp;
let admin: StrategyAdmin;
let results: Map<string, ExecutionResult>;
/** Scripted answers of the database's next writes of a trade (true: fail). */
const transactionScript: boolean[] = [];

function scriptedTransactions(db: SqlClient): SqlClient {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'query') {
        // The trade's writes (one statement each): the pending insert, `submitted`, the outcome.
        return (sql: string, params?: unknown[]) => {
          const write = sql.includes('INSERT INTO trades ') || sql.includes('UPDATE trades SET status');
          if (write && transactionScript.length > 0 && transactionScript.shift()!) return Promise.reject(new TpError(ErrorCode.DbUnavailable, 'database down (test)'));
          return target.query(sql, params as never);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

beforeAll(async () => {
  const started = await fx.runningSimulator(40);
  sim = started.sim;
  rpcProxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.rpc), 'the JSON-RPC proxy');
  engineProxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.http), 'the block engine proxy');
  const rpc = await rpcProxy.start();
  const blockEngine = await engineProxy.start();
  bus = await fx.bus('LP');
  await fx.database();
  await fx.keySpace();
  const loaded = realExecutorConfig(fx, { 'rpc-endpoints': rpc, 'executor-id': 'landed-executor', 'block-engine-url': blockEngine, 'busy-retry': '50' });
  app = fx.closing(await createExecutorApp(loaded, { logger, retryDelayMs: 50, pollMs: 40, wrapDb: (state) => scriptedTransactions(state.db) }), 'the executor');
  await importWorkers(app.state.db, [sim.chain.genesis.actors.traders[2]!, sim.chain.genesis.actors.traders[3]!]);
  results = executionResultsByTrade(fx, bus.prefix);
  admin = new StrategyAdmin(app.state.db);
  await app.start();
}, 60_000);

afterAll(() => fx.close());

/** The AMM pool of wrapped SOL the orders trade on, and its other mint. */
function wsolPool(): { view: SimPoolView; token: string } {
  const view = sim.chain.pools().find((p) => p.transferFees === undefined && p.dex === 'dexa_amm' && (p.pool.tokenA === WSOL_MINT || p.pool.tokenB === WSOL_MINT))!;
  return { view, token: view.pool.tokenA === WSOL_MINT ? view.pool.tokenB : view.pool.tokenA };
}

/** An order of `strategyId` selling `amount` of `inputMint` on the pool, on its current state. */
function order(strategyId: string, inputMint: string, amount: bigint, over: Partial<TradeOpportunity> = {}): TradeOpportunity {
  const { view } = wsolPool();
  const loaded = { address: view.address, dex: view.dex, pool: view.pool, context: view.ctx, slot: sim.chain.slot('confirmed'), data: sim.chain.getAccount(view.address)!.data };
  const op = orderOpportunity({ id: randomUUID(), strategy: 'dca', strategyId, side: inputMint === WSOL_MINT ? 'buy' : 'sell', loaded, inputMint, amount, slippageBps: 50, ttlMs: 30_000, now: Date.now(), stateAgeMs: 0, details: {} });
  if (typeof op === 'string') throw new Error(op);
  return { ...op, ...over };
}

/** Before the next send of `method` through `proxy`: moves the pool 30 bps in favour of selling `inputMint`, landed first. */
function movePoolBeforeNext(proxy: FlakyJsonRpcProxy, method: string, inputMint: string): void {
  const { view } = wsolPool();
  // selling token A pays more B when A's price went up
  const direction = view.pool.tokenA === inputMint ? 'up' : 'down';
  proxy.beforeNext(method, async () => {
    await confirmedOn(sim.chain, openPriceGap(sim.chain, { pool: view.address, gapBps: 30, direction }).signature);
  });
}

async function dcaStrategy(): Promise<string> {
  const { view, token } = wsolPool();
  return (await admin.add('dca', { pool: view.address, token, quoteCurrency: WSOL_MINT, intervalMinutes: 60, amountPerOrder: '100000000', maxPosition: '100000000000000' })).id;
}

interface TradeAmounts {
  landed_input_amount: string | null;
  landed_output_amount: string | null;
  built_input: string;
  built_output: string;
}

async function amountsOf(op: TradeOpportunity): Promise<TradeAmounts> {
  const [row] = await app.state.db.query<TradeAmounts>(
    `SELECT t.landed_input_amount::text, t.landed_output_amount::text, r.input_amount::text AS built_input, r.output_amount::text AS built_output
       FROM trades t JOIN trade_routes r ON r.trade_id = t.id WHERE t.id = $1`,
    [tradeIdOf(op.id)],
  );
  return row!;
}

describe('realized P&L of real trades: what landed', () => {
  it('direct: the pool moved between build and land; the row keeps both, the P&L counts the landed output', async () => {
    const strategyId = await dcaStrategy();
    const op = order(strategyId, WSOL_MINT, 100_000_000n);
    movePoolBeforeNext(rpcProxy, 'sendTransaction', WSOL_MINT);
    await publishOpportunity(bus, op);
    const result = await resultOfTrade(results, op);
    expect(result).toMatchObject({ status: 'confirmed', path: 'direct' });
    const row = await amountsOf(op);
    expect(row).toMatchObject({ landed_input_amount: String(result.filledInput), landed_output_amount: String(result.filledOutput) });
    expect(result.filledOutput).toBeGreaterThan(BigInt(row.built_output));
    const pnl = (await admin.show(strategyId)).pnl;
    expect(pnl).toMatchObject({ mint: WSOL_MINT, fills: 1, position: result.filledOutput, costBasis: result.filledInput });
    expect(pnl).toEqual((await readStrategyPnl(app.state.db, [await admin.resolve(strategyId)])).get(strategyId));
  });

  it('bundle: a sell into wrapped SOL worth the bundle path; its realized P&L is from the landed proceeds', async () => {
    const strategyId = await dcaStrategy();
    const { token } = wsolPool();
    // Buy tokens (direct), then sell half of them through a bundle (a profit above 0.1 SOL selects it).
    const buy = order(strategyId, WSOL_MINT, 1_000_000_000n);
    await publishOpportunity(bus, buy);
    const bought = await resultOfTrade(results, buy);
    expect(bought.status).toBe('confirmed');
    const sell = order(strategyId, token, bought.filledOutput! / 2n, { expectedProfit: 200_000_000n });
    expect(sell.profitMint).toBe(WSOL_MINT);
    movePoolBeforeNext(engineProxy, 'sendBundle', token);
    await publishOpportunity(bus, sell);
    const sold = await resultOfTrade(results, sell);
    expect(sold).toMatchObject({ status: 'confirmed', path: 'bundle' });
    const row = await amountsOf(sell);
    expect(row).toMatchObject({ landed_input_amount: String(sold.filledInput), landed_output_amount: String(sold.filledOutput) });
    expect(sold.filledOutput).toBeGreaterThan(BigInt(row.built_output));
    // Half the tokens sold at average cost: the landed proceeds less half the landed cost.
    const closedCost = (bought.filledInput! * sold.filledInput!) / bought.filledOutput!;
    expect((await admin.show(strategyId)).pnl).toMatchObject({ fills: 2, realizedPnl: sold.filledOutput! - closedCost, position: bought.filledOutput! - sold.filledInput! });
  });

  it('reconciled from the chain after the outcome could not be written: the landed amounts are recorded there too', async () => {
    const strategyId = await dcaStrategy();
    const op = order(strategyId, WSOL_MINT, 100_000_000n);
    movePoolBeforeNext(rpcProxy, 'sendTransaction', WSOL_MINT);
    // the pending insert passes; `submitted` and the five attempts at the outcome fail; then it is back
    transactionScript.push(false, true, true, true, true, true, true);
    await publishOpportunity(bus, op);
    const result = await resultOfTrade(results, op);
    expect(transactionScript).toEqual([]);
    expect(result.status).toBe('confirmed');
    const row = await amountsOf(op);
    expect(row).toMatchObject({ landed_input_amount: String(result.filledInput), landed_output_amount: String(result.filledOutput) });
    expect(result.filledOutput).toBeGreaterThan(BigInt(row.built_output));
    expect((await admin.show(strategyId)).pnl).toMatchObject({ fills: 1, position: result.filledOutput, costBasis: result.filledInput });
  });
});
