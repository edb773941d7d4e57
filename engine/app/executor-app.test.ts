import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { hasPromtool, runPromtool } from '../obs/promtool.js';
import { EXECUTOR_METRIC_NAMES, tradeIdOf } from '../executor/index.js';
import { WSOL_MINT } from '../chain/index.js';
import { type ExecutionResult, type TradeOpportunity } from '../messages/index.js';
import { type SqlClient } from '../state/index.js';
import { type WalletRecord } from '../wallets/index.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import type { Trader } from '../sim/actors.js';
import type { Simulator } from '../sim/simulator.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { arbitrageOpportunity, executionOrdersStored, executionResultsByTrade, holdingsOf, importWorkers, orderOpportunityOn, plantGap, publishOpportunity, resultOfTrade, realExecutorConfig } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * `tidepool executor` end to end: a running simulator (real swaps, a block engine), the local NATS,
 * Redis and PostgreSQL; opportunities published on the bus as the planner publishes them.
 */

const logger = createLogger({ name: 'executor-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let proxy: FlakyJsonRpcProxy;
let bus: FixtureBus;
let nc: NatsConnection;
let prefix: string;
let app: ExecutorApp;
let http: string;
let workers: WalletRecord[];
let traders: Trader[];
let results: Map<string, ExecutionResult>;
/** The database wrapper's switch: while true, every transaction and every write of a trade (one statement each) fail. */
let transactionsFail = false;
let failedTransactions = 0;
/** Scripted answers of the next writes of a trade (true: fail), before the switch above is read. */
const transactionScript: boolean[] = [];

function failingTransactions(db: SqlClient): SqlClient {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction' && transactionsFail) {
        return () => {
          failedTransactions++;
          return Promise.reject(new TpError(ErrorCode.DbUnavailable, 'database down (test)'));
        };
      }
      if (prop === 'query') {
        // The trade's writes (one statement each): the pending insert, `submitted`, the outcome.
        return (sql: string, params?: unknown[]) => {
          const write = sql.includes('INSERT INTO trades ') || sql.includes('UPDATE trades SET status');
          if (!write || !(transactionScript.length > 0 ? transactionScript.shift()! : transactionsFail)) return target.query(sql, params as never);
          failedTransactions++;
          return Promise.reject(new TpError(ErrorCode.DbUnavailable, 'database down (test)'));
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
  proxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.rpc), 'the JSON-RPC proxy');
  const rpc = await proxy.start();
  bus = await fx.bus('EX');
  ({ nc, prefix } = bus);
  await fx.database();
  await fx.keySpace();
  const loaded = realExecutorConfig(fx, {
    'rpc-endpoints': rpc,
    'executor-id': 'test-executor',
    'metrics-interval': '200',
    'block-engine-url': started.endpoints.http,
    'busy-retry': '50',
    'max-concurrent-trades': '4',
    // the arbitrage below borrows its input (the planner's default funding): the simulator's reserves and tables
    'flash-loan-reserves': sim.chain.genesis.lending.reserves.map((r) => r.reserve).join(','),
    'lookup-tables': sim.chain.lookupTableAddresses().join(','),
  });
  app = fx.closing(await createExecutorApp(loaded, { logger, retryDelayMs: 50, pollMs: 40, wrapDb: (state) => failingTransactions(state.db) }), 'the executor');
  traders = [sim.chain.genesis.actors.traders[2]!, sim.chain.genesis.actors.traders[3]!];
  workers = await importWorkers(app.state.db, traders);
  results = executionResultsByTrade(fx, prefix);
  ({ http } = await app.start());
}, 60_000);

afterAll(() => fx.close());

const publish = (op: TradeOpportunity, msgID = op.id): Promise<void> => publishOpportunity(bus, op, msgID);
const resultOf = (op: TradeOpportunity, ms?: number): Promise<ExecutionResult> => resultOfTrade(results, op, ms);

async function tradeRows(op: TradeOpportunity): Promise<{ status: string; actual_profit: bigint | null; signature: string | null; wallet_id: string; error_message: string | null }[]> {
  return app.state.db.query('SELECT status, actual_profit, signature, wallet_id, error_message FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
}

async function nothingPending(): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await eventually(async () => {
    const c = await jsm.consumers.info(`${prefix}TRADE_OPPORTUNITIES`, 'executor_test-executor');
    return c.num_ack_pending === 0 && c.num_pending === 0 ? c : undefined;
  }, 15_000, 'every opportunity acknowledged');
}

function traderOfWallet(address: string): Trader {
  return traders.find((t) => t.keypair.address === address)!;
}

/** The profit mint's balance change on `before` → now: wSOL token change plus lamports (fees and tip). */
function walletProfit(trader: Trader, before: ReturnType<typeof holdingsOf>, mint: string): bigint {
  const after = holdingsOf(sim.chain, trader);
  const token = after.tokens.get(mint)! - before.tokens.get(mint)!;
  return mint === WSOL_MINT ? token + (after.lamports - before.lamports) : token;
}

describe('tidepool executor', () => {
  it('a planted price gap → arbitrage → bundle landed → trade confirmed, actual profit = the wallet\'s balance change on chain', async () => {
    await plantGap(sim.chain, 120);
    const op = arbitrageOpportunity(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    await publish(op);
    const result = await resultOf(op);
    expect(result).toMatchObject({ status: 'confirmed', path: 'bundle', strategy: 'arbitrage', opportunityId: op.id, tip: op.costs.tip });
    expect(result.signature).toBeDefined();
    expect(result.bundleId).toBeDefined();
    const trader = traderOfWallet(result.walletAddress!);
    const onChain = walletProfit(trader, before[traders.indexOf(trader)]!, WSOL_MINT);
    expect(result.actualProfit).toBe(onChain);
    expect(onChain).toBeGreaterThan(0n);
    const [row] = await tradeRows(op);
    expect(row).toMatchObject({ status: 'confirmed', actual_profit: onChain, signature: result.signature });
    const routes = await app.state.db.query<{ step: number; pool: string }>('SELECT step, pool FROM trade_routes WHERE trade_id = $1 ORDER BY step', [tradeIdOf(op.id)]);
    expect(routes.map((r) => r.pool)).toEqual(op.route.map((h) => h.pool));
    await nothingPending();
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toMatch(/executor_transactions_submitted_total\{path="bundle",strategy="arbitrage",executor="test-executor"\} 1/);
    expect(metrics).toMatch(/executor_transactions_landed_total\{path="bundle",strategy="arbitrage",executor="test-executor"\} 1/);
    expect(metrics).toMatch(/executor_submit_latency_seconds_count\{executor="test-executor",path="bundle",strategy="arbitrage"\} 1/);
    const stats = (await (await fetch(`${http}/stats`)).json()) as { traded: number; recent: { tradeId: string }[] };
    expect(stats.recent.map((r) => r.tradeId)).toContain(tradeIdOf(op.id));
    const rows = await eventually(async () => {
      const r = await app.state.db.query<{ tx_submitted: number; success_rate: number | null }>('SELECT tx_submitted, success_rate FROM executor_metrics WHERE executor_id = $1 ORDER BY "timestamp"', ['test-executor']);
      return r.some((x) => x.success_rate !== null) && r.some((x) => x.tx_submitted > 0) ? r : undefined;
    }, 10_000, 'executor_metrics rows');
    expect(rows.reduce((n, x) => n + x.tx_submitted, 0)).toBe(1);
    expect(rows.filter((x) => x.success_rate !== null).map((x) => x.success_rate)).toEqual([1]);
  });

  it('an order takes the direct path; its actual profit is the profit mint\'s change', async () => {
    const op = orderOpportunityOn(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    await publish(op);
    const result = await resultOf(op);
    expect(result).toMatchObject({ status: 'confirmed', path: 'direct', strategy: 'dca', tip: 0n });
    expect(result.bundleId).toBeUndefined();
    const trader = traderOfWallet(result.walletAddress!);
    expect(result.actualProfit).toBe(walletProfit(trader, before[traders.indexOf(trader)]!, op.profitMint));
    expect(result.actualProfit).toBeGreaterThanOrEqual(op.minimumOutput);
    expect((await tradeRows(op))[0]!.status).toBe('confirmed');
  });

  it('a bundle the block engine rejects: trade failed with the reason, nothing paid', async () => {
    await plantGap(sim.chain, 120);
    const op = arbitrageOpportunity(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    sim.faults.rejectBundles = true;
    try {
      await publish(op);
      const result = await resultOf(op);
      expect(result.status).toBe('failed');
      expect(result.error).toMatch(/block engine/);
      const [row] = await tradeRows(op);
      expect(row).toMatchObject({ status: 'failed' });
      expect(row!.error_message).toMatch(/block engine/);
      traders.forEach((t, i) => expect(holdingsOf(sim.chain, t)).toEqual(before[i]));
    } finally {
      sim.faults.rejectBundles = false;
    }
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toMatch(/executor_transactions_failed_total\{path="bundle",strategy="arbitrage",reason="failed",executor="test-executor"\} 1/);
  });

  it('a wallet locked by another executor is passed over; with every wallet locked the opportunity waits', async () => {
    const other = await app.state.keys.acquireExecutorLock(workers[0]!.id, 'another-executor-trade');
    expect(other).not.toBeNull();
    const first = orderOpportunityOn(sim.chain, 50_000_000n);
    await publish(first);
    expect((await resultOf(first)).walletAddress).toBe(workers[1]!.address);
    // both locked: the opportunity is deferred (nak with a delay), not failed, and trades once a wallet is free
    // the executor releases wallet 1 just after publishing the first result: take it once it is free
    const second = await eventually(async () => (await app.state.keys.acquireExecutorLock(workers[1]!.id, 'another-executor-trade-2')) ?? undefined, 10_000, 'wallet 1 free');
    const waiting = orderOpportunityOn(sim.chain, 50_000_000n);
    const deferredBefore = app.service.stats.deferred;
    await publish(waiting);
    await eventually(() => (app.service.stats.deferred >= deferredBefore + 2 ? true : undefined), 10_000, 'the opportunity deferred');
    expect(await tradeRows(waiting)).toEqual([]);
    await other!.release();
    const result = await resultOf(waiting);
    expect(result).toMatchObject({ status: 'confirmed', walletAddress: workers[0]!.address });
    await second.release();
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).not.toMatch(/bus_processing_failures_total\{stream="[^"]*TRADE_OPPORTUNITIES"/);
  });

  it('an expired opportunity is skipped, counted and acknowledged; no trade row', async () => {
    const fresh = orderOpportunityOn(sim.chain);
    const op: TradeOpportunity = { ...fresh, createdAt: Date.now() - 10_000, expiresAt: Date.now() - 5_000 };
    await publish(op);
    await eventually(async () => {
      const text = await (await fetch(`${http}/metrics`)).text();
      return /executor_opportunities_skipped_total\{strategy="dca",reason="expired",executor="test-executor"\} 1/.test(text) ? true : undefined;
    }, 10_000, 'the skip counted');
    await nothingPending();
    expect(await tradeRows(op)).toEqual([]);
    expect(results.has(tradeIdOf(op.id))).toBe(false);
  });

  it('the RPC failing mid-trade: the same transaction is sent again, one lands, one trade row; a redelivery trades nothing more', async () => {
    const op = orderOpportunityOn(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    const sends = proxy.received('sendTransaction');
    proxy.plan('sendTransaction', 'dropBefore', 'dropAfter');
    await publish(op);
    const result = await resultOf(op);
    expect(result.status).toBe('confirmed');
    expect(proxy.received('sendTransaction') - sends).toBeGreaterThanOrEqual(2);
    const trader = traderOfWallet(result.walletAddress!);
    expect(result.actualProfit).toBe(walletProfit(trader, before[traders.indexOf(trader)]!, op.profitMint));
    // the same opportunity again (another message id, past the stream's deduplication): no second trade
    const sendsAfter = proxy.received('sendTransaction');
    results.delete(tradeIdOf(op.id));
    await publish(op, `${op.id}-again`);
    const again = await resultOf(op);
    // ... and its result carries the fill again, read from the chain by the trade's signature
    expect(result.filledInput).toBe(op.inputAmount);
    expect(result.filledOutput).toBeGreaterThanOrEqual(op.minimumOutput);
    expect(again).toMatchObject({ status: 'confirmed', signature: result.signature, actualProfit: result.actualProfit, filledInput: result.filledInput, filledOutput: result.filledOutput });
    expect(proxy.received('sendTransaction')).toBe(sendsAfter);
    expect(await tradeRows(op)).toHaveLength(1);
    expect(walletProfit(trader, before[traders.indexOf(trader)]!, op.profitMint)).toBe(result.actualProfit);
  });

  it('the database down at record time: nothing sent, nothing acknowledged; the redelivery records and trades once', async () => {
    const op = orderOpportunityOn(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    const sends = proxy.received('sendTransaction');
    failedTransactions = 0;
    transactionsFail = true;
    try {
      await publish(op);
      await eventually(() => (failedTransactions >= 2 ? true : undefined), 15_000, 'the pending insert tried twice');
      expect(proxy.received('sendTransaction')).toBe(sends);
      traders.forEach((t, i) => expect(holdingsOf(sim.chain, t)).toEqual(before[i]));
      const jsm = await nc.jetstreamManager();
      const info = await jsm.consumers.info(`${prefix}TRADE_OPPORTUNITIES`, 'executor_test-executor');
      expect(info.num_ack_pending + info.num_pending).toBeGreaterThan(0);
    } finally {
      transactionsFail = false;
    }
    const result = await resultOf(op);
    expect(result.status).toBe('confirmed');
    expect(await tradeRows(op)).toHaveLength(1);
    expect(proxy.received('sendTransaction') - sends).toBe(1);
    await nothingPending();
  });

  it('the database down when the outcome is to be written: the message comes back and the trade is settled from the chain, once', async () => {
    const op = orderOpportunityOn(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    const sends = proxy.received('sendTransaction');
    failedTransactions = 0;
    // the pending insert passes; `submitted` and the five attempts at the outcome fail; then it is back
    transactionScript.push(false, true, true, true, true, true, true);
    await publish(op);
    const result = await resultOf(op);
    expect(transactionScript).toEqual([]);
    expect(failedTransactions).toBe(6);
    expect(result.status).toBe('confirmed');
    const trader = traderOfWallet(result.walletAddress!);
    const onChain = walletProfit(trader, before[traders.indexOf(trader)]!, op.profitMint);
    expect(result.actualProfit).toBe(onChain);
    const rows = await tradeRows(op);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'confirmed', actual_profit: onChain, signature: result.signature });
    // settled from the chain, with the fill the wallet's balances show
    const after = holdingsOf(sim.chain, trader);
    const before1 = before[traders.indexOf(trader)]!;
    expect(result.filledInput).toBe(op.inputAmount);
    expect(result.filledOutput).toBe(after.tokens.get(op.outputMint)! - before1.tokens.get(op.outputMint)!);
    expect(proxy.received('sendTransaction') - sends).toBe(1);
    await nothingPending();
  });

  it('a bundle trade settled from the chain after the outcome could not be written: its actual profit counts the tip transfer', async () => {
    await plantGap(sim.chain, 120);
    const op = arbitrageOpportunity(sim.chain);
    const before = traders.map((t) => holdingsOf(sim.chain, t));
    failedTransactions = 0;
    // the pending insert passes; `submitted` and the five attempts at the outcome fail; then it is back
    transactionScript.push(false, true, true, true, true, true, true);
    await publish(op);
    const result = await resultOf(op);
    expect(transactionScript).toEqual([]);
    expect(failedTransactions).toBe(6);
    expect(result).toMatchObject({ status: 'confirmed', path: 'bundle', tip: op.costs.tip });
    const [stored] = await app.state.db.query<{ tip_signature: string | null }>('SELECT tip_signature FROM trade_submissions WHERE trade_id = $1', [tradeIdOf(op.id)]);
    expect(stored!.tip_signature).not.toBeNull();
    expect(sim.chain.transaction(stored!.tip_signature!)).toBeDefined();
    // the wallet's wSOL and lamports, the tip transfer and its fee included
    const trader = traderOfWallet(result.walletAddress!);
    const onChain = walletProfit(trader, before[traders.indexOf(trader)]!, WSOL_MINT);
    expect(result.actualProfit).toBe(onChain);
    const rows = await tradeRows(op);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'confirmed', actual_profit: onChain, signature: result.signature });
    await nothingPending();
  });

  it('each trade\'s ExecutionRequest (its wallet, path, re-quoted amounts) is in the stream before its result', async () => {
    const orders = await executionOrdersStored(nc, prefix);
    const requests = orders.flatMap((o) => (o.kind === 'request' ? [o] : []));
    const results = orders.flatMap((o) => (o.kind === 'result' ? [o] : []));
    expect(results.length).toBeGreaterThanOrEqual(6);
    for (const { seq, result } of results) {
      const request = requests.find((o) => o.request.tradeId === result.tradeId);
      expect(request, `the request of trade ${result.tradeId}`).toBeDefined();
      expect(request!.seq).toBeLessThan(seq);
      expect(request!.request).toMatchObject({ opportunityId: result.opportunityId, strategy: result.strategy, path: result.path, paper: false, walletAddress: result.walletAddress, executorId: 'test-executor' });
      expect(request!.request.walletId).toBeDefined();
    }
  });

  it.skipIf(!hasPromtool())('its /metrics pass promtool check metrics, with the names the ops rules use', async () => {
    const text = await (await fetch(`${http}/metrics`)).text();
    const r = runPromtool(['check', 'metrics'], text);
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
    for (const name of Object.values(EXECUTOR_METRIC_NAMES)) expect(text).toContain(`# TYPE ${name} `);
  });
});
