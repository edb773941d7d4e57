/**
 * The executor's records in PostgreSQL: spec 03's `trades` and `trade_routes`, the journal row of
 * `trade_submissions` (schemas/sql/004_trade_submissions.sql, 005_trade_tip_signature.sql) and `executor_metrics`.
 *
 * Trade states (spec 03 gives `pending` on insert; the rest are ours):
 *
 *   pending ──accepted by the RPC node / block engine──▶ submitted ──landed──▶ confirmed
 *      │                                                     ├──refused, dropped or landed with an error──▶ failed
 *      └──(never accepted)──▶ failed | expired               └──no final status in time / blockhash expired──▶ expired
 *   paper: a paper trade, written once with its routes (nothing sent)
 *
 * `markOutcome` writes, with the final status, what the landed transaction actually filled
 * (`landed_input_amount`, `landed_output_amount`, migration 007) beside the route rows' built amounts.
 *
 * `insertPending` writes the trade (with the signature of the signed swap transaction), its route
 * rows and the journal row in ONE statement (all or nothing by itself, one round trip); nothing is sent
 * before it commits. The trade id is derived from the opportunity id
 * (`tradeIdOf`), and the journal's opportunity_id is unique, so an opportunity can have one trade.
 */
import type { SqlClient, SqlParam } from '../state/index.js';
import { deterministicUuid, type RouteHop, type Strategy, type ExecutionPath } from '../messages/index.js';

export type TradeStatus = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'expired' | 'paper';
export const FINAL_TRADE_STATUSES: readonly TradeStatus[] = ['confirmed', 'failed', 'expired', 'paper'];

/** The trade id of an opportunity: the same after a redelivery or a restart. */
export function tradeIdOf(opportunityId: string): string {
  return deterministicUuid(`trade:${opportunityId}`);
}

export interface NewTrade {
  id: string;
  opportunityId: string;
  executorId: string;
  strategy: Strategy;
  /** The TradeOpportunity's strategyId (the strategy_configs row): trades.strategy_id, migration 006. */
  strategyId?: string;
  /** Null only for a paper trade run without worker wallets. */
  walletId: string | null;
  path: ExecutionPath;
  profitMint: string;
  expectedProfit: bigint;
  tip: bigint;
  route: readonly RouteHop[];
  /** Real trades: the swap's signature, its signed bytes (base64) and the blockhash's last valid height. */
  signature?: string;
  transaction?: string;
  lastValidBlockHeight?: bigint;
}

export interface PaperTrade extends Omit<NewTrade, 'signature' | 'transaction' | 'lastValidBlockHeight'> {
  actualProfit: bigint;
  fees: bigint;
  slot: bigint;
}

export interface TradeOutcomeUpdate {
  status: 'confirmed' | 'failed' | 'expired';
  actualProfit?: bigint;
  slot?: bigint;
  confirmedAt?: Date;
  error?: string;
  fees?: bigint;
  bundleId?: string;
  /**
   * What the landed transaction actually filled (ExecutionResult filledInput / filledOutput, from
   * the wallet's balance changes): trades.landed_input_amount / landed_output_amount, migration 007.
   * Absent: not landed, or a cycle whose input and output are one mint.
   */
  landed?: { input: bigint; output: bigint };
}

/** A trade as the executor reads it back (a redelivered opportunity's). */
export interface StoredTrade {
  id: string;
  opportunityId: string;
  strategy: string;
  walletId: string | null;
  status: TradeStatus;
  signature: string | null;
  expectedProfit: bigint;
  actualProfit: bigint | null;
  errorMessage: string | null;
  slot: bigint | null;
  confirmedAt: Date | null;
  path: ExecutionPath;
  paper: boolean;
  profitMint: string;
  tip: bigint;
  fees: bigint | null;
  transaction: string | null;
  lastValidBlockHeight: bigint | null;
  bundleId: string | null;
  /** A bundle's tip transfer (migration 005), recorded before anything is sent; null otherwise. */
  tipSignature: string | null;
  submittedAt: Date | null;
}

interface StoredRow {
  id: string;
  opportunity_id: string;
  strategy: string;
  wallet_id: string | null;
  status: TradeStatus;
  signature: string | null;
  expected_profit: bigint;
  actual_profit: bigint | null;
  error_message: string | null;
  slot: bigint | null;
  confirmed_at: Date | null;
  path: ExecutionPath;
  paper: boolean;
  profit_mint: string;
  tip: bigint;
  fees: bigint | null;
  transaction: string | null;
  last_valid_block_height: bigint | null;
  bundle_id: string | null;
  tip_signature: string | null;
  submitted_at: Date | null;
}

/** error_message is text; keep it to a readable size. */
function clip(text: string | undefined): string | null {
  return text === undefined ? null : text.slice(0, 2_000);
}

export class TradeStore {
  constructor(readonly db: SqlClient) {}

  /**
   * The trade, its route rows and its journal row in ONE statement (data-modifying CTEs), whatever
   * the route's length: BEGIN, the statement, COMMIT, where one INSERT per row took six round trips
   * for a two-hop route (the executor waits for it before it sends; issue 23). The statement is
   * atomic by itself; it stays in `transaction` because that is what a database outage is modelled
   * on in engine/app/executor-app.test.ts (then it can be a single round trip).
   */
  private async insertTrade(t: NewTrade, status: 'pending' | 'paper', extra: { actualProfit?: bigint; slot?: bigint; fees?: bigint; paper: boolean }): Promise<void> {
    const params: SqlParam[] = [];
    const row = (values: readonly SqlParam[]): string => `(${values.map((v) => `$${params.push(v)}`).join(', ')})`;
    const trade = row([t.id, t.strategy, t.strategyId ?? null, t.walletId, t.signature ?? null, t.expectedProfit, extra.actualProfit ?? null, status, extra.slot ?? null]);
    const routes = t.route.map((h) => row([t.id, h.step, h.dex, h.pool, h.inputMint, h.outputMint, h.inputAmount, h.outputAmount]));
    const submission = row([t.id, t.opportunityId, t.executorId, t.path, extra.paper, t.profitMint, t.tip, extra.fees ?? null, t.transaction ?? null, t.lastValidBlockHeight ?? null]);
    const text = [
      `WITH trade AS (INSERT INTO trades (id, strategy, strategy_id, wallet_id, signature, expected_profit, actual_profit, status, slot) VALUES ${trade})`,
      ...(routes.length === 0 ? [] : [`, routes AS (INSERT INTO trade_routes (trade_id, step, protocol, pool, input_mint, output_mint, input_amount, output_amount) VALUES ${routes.join(', ')})`]),
      `INSERT INTO trade_submissions (trade_id, opportunity_id, executor_id, path, paper, profit_mint, tip, fees, transaction, last_valid_block_height) VALUES ${submission}`,
    ].join(' ');
    // One statement is all or nothing by itself: no BEGIN and COMMIT around it (two round trips
    // fewer on the trade's path before its send, issue 23).
    await this.db.query(text, params);
  }

  /** The pending trade, its routes and its journal row, in one statement (all or nothing). */
  async insertPending(t: NewTrade): Promise<void> {
    await this.insertTrade(t, 'pending', { paper: false });
  }

  /** A paper trade (status `paper`), its routes and its journal row, in one statement (all or nothing). */
  async insertPaper(t: PaperTrade): Promise<void> {
    await this.insertTrade(t, 'paper', { actualProfit: t.actualProfit, slot: t.slot, fees: t.fees, paper: true });
  }

  /** The signature of a bundle trade's tip transfer, before the bundle is sent. */
  async recordTipSignature(tradeId: string, tipSignature: string): Promise<void> {
    await this.db.query('UPDATE trade_submissions SET tip_signature = $2 WHERE trade_id = $1', [tradeId, tipSignature]);
  }

  /** pending → submitted (only from pending: a later status is never overwritten); one statement, one round trip. */
  async markSubmitted(tradeId: string, at: Date, bundleId?: string): Promise<void> {
    await this.db.query(
      `WITH trade AS (UPDATE trades SET status = 'submitted' WHERE id = $1 AND status = 'pending')
       UPDATE trade_submissions SET submitted_at = COALESCE(submitted_at, $2), bundle_id = COALESCE($3, bundle_id) WHERE trade_id = $1`,
      [tradeId, at, bundleId ?? null],
    );
  }

  /**
   * The final status of a real trade, in one statement (one round trip): the journal row is updated
   * only with the trade row. Returns false when the trade was already final (nothing changed).
   */
  async markOutcome(tradeId: string, u: TradeOutcomeUpdate): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `WITH trade AS (UPDATE trades SET status = $2, actual_profit = $3, slot = $4, confirmed_at = $5, error_message = $6, landed_input_amount = $7, landed_output_amount = $8
                        WHERE id = $1 AND status IN ('pending', 'submitted') RETURNING id),
            submission AS (UPDATE trade_submissions SET fees = COALESCE($9, fees), bundle_id = COALESCE($10, bundle_id) WHERE trade_id IN (SELECT id FROM trade))
       SELECT id FROM trade`,
      [tradeId, u.status, u.actualProfit ?? null, u.slot ?? null, u.confirmedAt ?? null, clip(u.error), u.landed?.input ?? null, u.landed?.output ?? null, u.fees ?? null, u.bundleId ?? null],
    );
    return rows.length > 0;
  }

  /** The trade of an opportunity, or null. */
  async byOpportunity(opportunityId: string): Promise<StoredTrade | null> {
    const rows = await this.db.query<StoredRow>(
      `SELECT t.id, s.opportunity_id, t.strategy, t.wallet_id, t.status, t.signature, t.expected_profit, t.actual_profit, t.error_message, t.slot,
              t.confirmed_at, s.path, s.paper, s.profit_mint, s.tip, s.fees, s.transaction, s.last_valid_block_height, s.bundle_id, s.tip_signature, s.submitted_at
         FROM trade_submissions s JOIN trades t ON t.id = s.trade_id WHERE s.opportunity_id = $1`,
      [opportunityId],
    );
    const r = rows[0];
    if (r === undefined) return null;
    return {
      id: r.id,
      opportunityId: r.opportunity_id,
      strategy: r.strategy,
      walletId: r.wallet_id,
      status: r.status,
      signature: r.signature,
      expectedProfit: r.expected_profit,
      actualProfit: r.actual_profit,
      errorMessage: r.error_message,
      slot: r.slot,
      confirmedAt: r.confirmed_at,
      path: r.path,
      paper: r.paper,
      profitMint: r.profit_mint,
      tip: r.tip,
      fees: r.fees,
      transaction: r.transaction,
      lastValidBlockHeight: r.last_valid_block_height,
      bundleId: r.bundle_id,
      tipSignature: r.tip_signature,
      submittedAt: r.submitted_at,
    };
  }

  /** What a trade's route sold first and bought last (its trade_routes rows), or null without rows. */
  async routeAmounts(tradeId: string): Promise<{ input: bigint; output: bigint } | null> {
    const rows = await this.db.query<{ input_amount: bigint; output_amount: bigint }>('SELECT input_amount, output_amount FROM trade_routes WHERE trade_id = $1 ORDER BY step', [tradeId]);
    if (rows.length === 0) return null;
    return { input: BigInt(rows[0]!.input_amount), output: BigInt(rows[rows.length - 1]!.output_amount) };
  }

  /** One executor_metrics row. */
  async recordMetrics(executorId: string, at: Date, txSubmitted: number, successRate: number | null): Promise<void> {
    await this.db.query('INSERT INTO executor_metrics ("timestamp", executor_id, tx_submitted, success_rate) VALUES ($1, $2, $3, $4) ON CONFLICT (executor_id, "timestamp") DO NOTHING', [at, executorId, txSubmitted, successRate]);
  }
}
