import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrateUp } from '../state/db/migrations.js';
import type { SqlClient, SqlQueryable } from '../state/db/sql-client.js';
import { TEST_BACKENDS, type TestDatabase } from '../state/db/testing.js';
import type { RouteHop } from '../messages/trade-opportunity.js';
import { WalletRepository } from '../wallets/wallet-repository.js';
import { TradeStore, tradeIdOf, type NewTrade } from './trade-store.js';

const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

function route(): RouteHop[] {
  return [
    { step: 0, pool: POOL, dex: 'dexa_amm', inputMint: WSOL, outputMint: USDC, inputAmount: 1_000n, outputAmount: 150n, fee: 3n, feeMint: WSOL, priceImpact: 0, slot: 5n },
    { step: 1, pool: POOL, dex: 'dexc_whirlpool', inputMint: USDC, outputMint: WSOL, inputAmount: 150n, outputAmount: 1_020n, fee: 1n, feeMint: USDC, priceImpact: 0, slot: 5n },
  ];
}

describe.each(TEST_BACKENDS)('TradeStore on $name', ({ create }) => {
  let t: TestDatabase;
  let store: TradeStore;
  let walletId: string;

  beforeAll(async () => {
    t = await create();
    await migrateUp(t.db);
    store = new TradeStore(t.db);
    walletId = (await new WalletRepository(t.db).insert({ tier: 'worker', address: USDC, encryptedPrivateKey: 'sealed' })).id;
  }, 60_000);

  afterAll(async () => {
    await t?.drop();
  });

  function trade(opportunityId: string, over: Partial<NewTrade> = {}): NewTrade {
    return { id: tradeIdOf(opportunityId), opportunityId, executorId: 'ex-1', strategy: 'arbitrage', walletId, path: 'bundle', profitMint: WSOL, expectedProfit: 20n, tip: 5_000n, route: route(), signature: `${opportunityId.slice(-8)}${'1'.repeat(80)}`, transaction: 'AQID', lastValidBlockHeight: 99n, ...over };
  }

  it('writes the pending trade, its routes and its journal row together; reads it back by opportunity', async () => {
    const opp = '11111111-0000-4000-8000-000000000001';
    await store.insertPending(trade(opp));
    const stored = await store.byOpportunity(opp);
    expect(stored).toMatchObject({ id: tradeIdOf(opp), status: 'pending', walletId, path: 'bundle', paper: false, expectedProfit: 20n, tip: 5_000n, transaction: 'AQID', lastValidBlockHeight: 99n });
    const routes = await t.db.query<{ step: number; protocol: string; input_amount: bigint; output_amount: bigint }>('SELECT step, protocol, input_amount, output_amount FROM trade_routes WHERE trade_id = $1 ORDER BY step', [tradeIdOf(opp)]);
    expect(routes).toEqual([
      { step: 0, protocol: 'dexa_amm', input_amount: 1_000n, output_amount: 150n },
      { step: 1, protocol: 'dexc_whirlpool', input_amount: 150n, output_amount: 1_020n },
    ]);
    expect(tradeIdOf(opp)).toBe(tradeIdOf(opp));
  });

  it('writes a pending trade, then its submitted and final statuses, in one round trip each: one statement, all or nothing by itself', async () => {
    let roundTrips = 0;
    const count = (q: SqlQueryable): SqlQueryable => ({
      query: (text, params) => {
        roundTrips++;
        return q.query(text, params);
      },
      exec: (script) => {
        roundTrips++;
        return q.exec(script);
      },
    });
    const counting: SqlClient = {
      ...count(t.db),
      kind: t.db.kind,
      target: t.db.target,
      // BEGIN and COMMIT are round trips too.
      transaction: (fn) => t.db.transaction((tx) => ((roundTrips += 2), fn(count(tx)))),
      withConnection: (fn) => t.db.withConnection((c) => fn(count(c))),
      ping: () => t.db.ping(),
      close: () => Promise.resolve(),
    };
    const opp = '11111111-0000-4000-8000-000000000010';
    const counted = new TradeStore(counting);
    await counted.insertPending(trade(opp));
    expect(roundTrips).toBe(1);
    // and each status after it
    await counted.markSubmitted(tradeIdOf(opp), new Date(1_000));
    expect(roundTrips).toBe(2);
    expect(await counted.markOutcome(tradeIdOf(opp), { status: 'confirmed', slot: 5n, confirmedAt: new Date(2_000), fees: 5_000n })).toBe(true);
    expect(roundTrips).toBe(3);
    expect(await store.byOpportunity(opp)).toMatchObject({ status: 'confirmed', fees: 5_000n, submittedAt: new Date(1_000) });
    expect(await t.db.query('SELECT step FROM trade_routes WHERE trade_id = $1 ORDER BY step', [tradeIdOf(opp)])).toEqual([{ step: 0 }, { step: 1 }]);
  });

  it('rolls the whole insert back when one statement fails: no trade, no routes, no journal row', async () => {
    const opp = '11111111-0000-4000-8000-000000000002';
    const bad = route();
    bad[1] = { ...bad[1]!, pool: 'x'.repeat(45) }; // varchar(44): the second route row fails
    await expect(store.insertPending(trade(opp, { route: bad }))).rejects.toThrow();
    expect(await store.byOpportunity(opp)).toBeNull();
    expect(await t.db.query('SELECT 1 FROM trades WHERE id = $1', [tradeIdOf(opp)])).toEqual([]);
    expect(await t.db.query('SELECT 1 FROM trade_routes WHERE trade_id = $1', [tradeIdOf(opp)])).toEqual([]);
    // one trade per opportunity: a second insert of the same one is refused
    await expect(store.insertPending(trade('11111111-0000-4000-8000-000000000001'))).rejects.toThrow();
  });

  it('pending → submitted → confirmed, and a final status is never overwritten', async () => {
    const opp = '11111111-0000-4000-8000-000000000003';
    await store.insertPending(trade(opp));
    const id = tradeIdOf(opp);
    await store.markSubmitted(id, new Date(1_000), 'bundle-1');
    expect((await store.byOpportunity(opp))!.status).toBe('submitted');
    expect(await store.markOutcome(id, { status: 'confirmed', actualProfit: -7n, slot: 42n, confirmedAt: new Date(2_000), fees: 10_000n })).toBe(true);
    expect(await store.markOutcome(id, { status: 'failed', error: 'late' })).toBe(false);
    await store.markSubmitted(id, new Date(3_000));
    expect(await store.byOpportunity(opp)).toMatchObject({ status: 'confirmed', actualProfit: -7n, slot: 42n, confirmedAt: new Date(2_000), fees: 10_000n, bundleId: 'bundle-1', submittedAt: new Date(1_000), errorMessage: null });
  });

  it('a paper trade is written once with status paper, its routes and fill', async () => {
    const opp = '11111111-0000-4000-8000-000000000004';
    const { signature: _s, transaction: _t, lastValidBlockHeight: _h, ...paper } = trade(opp);
    await store.insertPaper({ ...paper, actualProfit: 5n, fees: 10_000n, slot: 7n });
    expect(await store.byOpportunity(opp)).toMatchObject({ status: 'paper', paper: true, signature: null, actualProfit: 5n, fees: 10_000n, slot: 7n, transaction: null });
    expect((await t.db.query('SELECT 1 FROM trade_routes WHERE trade_id = $1', [tradeIdOf(opp)])).length).toBe(2);
  });

  it('executor_metrics rows', async () => {
    await store.recordMetrics('ex-1', new Date(5_000), 3, 2 / 3);
    await store.recordMetrics('ex-1', new Date(6_000), 0, null);
    const rows = await t.db.query<{ tx_submitted: number; success_rate: number | null }>('SELECT tx_submitted, success_rate FROM executor_metrics ORDER BY "timestamp"');
    expect(rows.map((r) => r.tx_submitted)).toEqual([3, 0]);
    expect(rows[0]!.success_rate).toBeCloseTo(2 / 3, 5);
    expect(rows[1]!.success_rate).toBeNull();
  });
});
