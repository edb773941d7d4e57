import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { decodeExecutionResult, executionResultFilter, encodeTradeOpportunity, tradeOpportunitySubject, type ExecutionResult } from '../messages/index.js';
import { tradeIdOf } from '../executor/index.js';
import type { Simulator } from '../sim/simulator.js';
import { createExecutorApp, executorSchema, type ExecutorApp } from './executor-app.js';
import { arbitrageOpportunity, executionOrdersStored, orderOpportunityOn, plantGap } from './testing/executor.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/** `tidepool executor --paper`: the same pipeline, nothing sent, trades recorded as paper. */

const logger = createLogger({ name: 'executor-paper-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let app: ExecutorApp;

beforeAll(async () => {
  ({ sim } = await fx.runningSimulator(40));
  ({ nc, prefix } = await fx.bus('EXP'));
  await fx.database();
  const loaded = loadConfig(executorSchema, {
    env: { PAPER_TRADING: 'true' },
    flags: { ...fx.serviceFlags(), 'executor-id': 'paper-executor', 'flash-loan-reserves': sim.chain.genesis.lending.reserves.map((r) => r.reserve).join(',') },
  });
  app = fx.closing(await createExecutorApp(loaded, { logger }), 'the executor');
  await app.start();
}, 60_000);

afterAll(() => fx.close());

describe('tidepool executor --paper', () => {
  it('fills on the live state with the real path\'s fees and tip, records the trade as paper with its routes, sends nothing', async () => {
    await plantGap(sim.chain, 120);
    const op = arbitrageOpportunity(sim.chain);
    const poolBytes = (): string[] => op.route.map((h) => Buffer.from(sim.chain.getAccount(h.pool, 'processed')!.data).toString('hex'));
    const before = poolBytes();
    const sub = nc.subscribe(executionResultFilter(prefix), { max: 1 });
    const got = (async (): Promise<ExecutionResult> => {
      for await (const m of sub) return decodeExecutionResult(m.data);
      throw new Error('no result');
    })();
    await nc.jetstream().publish(tradeOpportunitySubject('arbitrage', prefix), encodeTradeOpportunity(op), { msgID: op.id });
    const result = await got;
    // the state did not move between the planner's quote and the fill: the same output
    expect(result).toMatchObject({ status: 'paper', path: 'bundle', tradeId: tradeIdOf(op.id), expectedProfit: op.expectedProfit, tip: op.costs.tip, fees: 10_000n });
    expect(result.signature).toBeUndefined();
    // a flash loan: its fee is paid (repaid with the loan), so it is in the paper profit too
    expect(op.flashLoan).toBe(true);
    expect(result.actualProfit).toBe(op.expectedOutput - op.inputAmount - op.costs.flashLoanFee - 10_000n - op.costs.tip);
    const rows = await eventually(async () => {
      const r = await app.state.db.query<{ status: string; actual_profit: bigint; wallet_id: string | null; signature: string | null }>('SELECT status, actual_profit, wallet_id, signature FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
      return r.length > 0 ? r : undefined;
    }, 10_000, 'the paper trade row');
    expect(rows).toEqual([{ status: 'paper', actual_profit: result.actualProfit, wallet_id: null, signature: null }]);
    const routes = await app.state.db.query<{ pool: string }>('SELECT pool FROM trade_routes WHERE trade_id = $1 ORDER BY step', [tradeIdOf(op.id)]);
    expect(routes.map((r) => r.pool)).toEqual(op.route.map((h) => h.pool));
    // nothing sent: the route's pools are as the planner saw them
    expect(poolBytes()).toEqual(before);
    expect(app.service.stats.paperTrades).toBe(1);
    // the decision was published first: the paper request, then the result
    const orders = await executionOrdersStored(nc, prefix);
    expect(orders.map((o) => o.kind)).toEqual(['request', 'result']);
    expect(orders[0]).toMatchObject({ kind: 'request', request: { tradeId: result.tradeId, opportunityId: op.id, paper: true, path: 'bundle', tip: op.costs.tip, inputAmount: op.inputAmount } });
  });

  it('an order redelivered after its paper trade: the same fill is published again, read from the trade\'s routes', async () => {
    const op = orderOpportunityOn(sim.chain);
    const next = (): Promise<ExecutionResult> => {
      const sub = nc.subscribe(executionResultFilter(prefix), { max: 1 });
      return (async (): Promise<ExecutionResult> => {
        for await (const m of sub) return decodeExecutionResult(m.data);
        throw new Error('no result');
      })();
    };
    const first = next();
    await nc.jetstream().publish(tradeOpportunitySubject(op.strategy, prefix), encodeTradeOpportunity(op), { msgID: op.id });
    const result = await first;
    expect(result).toMatchObject({ status: 'paper', filledInput: op.inputAmount, filledOutput: op.expectedOutput });
    // the same opportunity again, past the stream's deduplication: no second trade, the same fill
    const second = next();
    await nc.jetstream().publish(tradeOpportunitySubject(op.strategy, prefix), encodeTradeOpportunity(op), { msgID: `${op.id}-again` });
    const again = await second;
    expect(again).toMatchObject({ status: 'paper', tradeId: result.tradeId, filledInput: result.filledInput, filledOutput: result.filledOutput, actualProfit: result.actualProfit });
    expect(app.service.stats.paperTrades).toBe(2);
  });
});
