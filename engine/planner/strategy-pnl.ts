/**
 * Realized P&L per strategy (issue 27), from the executors' records: the `trades` of a
 * strategy_configs row (`trades.strategy_id`, migration 006), their `trade_routes` and
 * `trade_submissions`. Exact integers throughout.
 *
 * A fill is a trade whose status is `confirmed` or `paper`. Its amounts are its route's: the first
 * hop's input and the last hop's output (a paper trade's are the simulated fill; a real trade's the
 * amounts its transaction was built for, whose output the chain guarantees only down to
 * minimumOutput).
 *
 * Grid, DCA and signal strategies: position-based at average cost, in atoms of the quote mint, by
 * the backtest's book (position-book.ts, so a live strategy and its replay count alike): a buy of q tokens for Q quote atoms adds q to the position and Q to its cost; a sell
 * closes min(q, held) tokens at the average cost (⌊cost × closed / held⌋) against the matching part
 * of its proceeds (⌊Q × closed / q⌋), the difference realized. Selling more than is held (a grid
 * starts by selling the levels above the price from the wallet's inventory) opens a short, whose
 * cost is minus what the sale brought; buying it back realizes the difference. So a buy then a sell
 * of the same tokens realizes exactly what the sell brought minus what the buy cost.
 * Arbitrage: the sum of the fills' `actual_profit` (atoms of each trade's profit mint; spec 03's
 * profit, after fees and tip); no position.
 *
 * Beside it, what the strategy paid the network: `fees` (transaction fees of every trade that
 * recorded them, failed ones included: a failed transaction pays its fee) and `tips` (the tips of
 * bundle trades that filled), both lamports. Grid/DCA/signal P&L is before them (they are lamports,
 * the P&L quote atoms); arbitrage's actual_profit already has them deducted.
 */
import { Position } from './position-book.js';
import type { Strategy } from '../messages/index.js';
import type { SqlQueryable } from '../state/index.js';

export interface StrategyPnl {
  /** The mint the P&L and cost are counted in: the quote mint (grid, DCA, signal) or the profit mint (arbitrage); null before a fill. */
  mint: string | null;
  /** Realized P&L, atoms of `mint`. */
  realizedPnl: bigint;
  /** Token atoms the fills leave held (negative: sold more than bought); 0 for arbitrage. */
  position: bigint;
  /** What the open position cost at average cost, atoms of `mint` (a short: minus what selling it brought). */
  costBasis: bigint;
  /** Trades that filled (confirmed or paper). */
  fills: number;
  /**
   * Filled trades left out: neither a buy nor a sell of the strategy's token, or in another quote
   * (profit) mint than the first fill's (a pool edited to another quote, arbitrage from a second base mint).
   */
  skipped: number;
  /** Transaction fees of all the strategy's trades, lamports. */
  fees: bigint;
  /** Tips of the bundle trades that filled, lamports. */
  tips: bigint;
}

/** One trade as the P&L reads it. */
export interface StrategyFill {
  status: string;
  inputMint: string | null;
  inputAmount: bigint | null;
  outputMint: string | null;
  outputAmount: bigint | null;
  actualProfit: bigint | null;
  profitMint: string | null;
  fees: bigint | null;
  tip: bigint | null;
  path: string | null;
}

export function emptyPnl(): StrategyPnl {
  return { mint: null, realizedPnl: 0n, position: 0n, costBasis: 0n, fills: 0, skipped: 0, fees: 0n, tips: 0n };
}

const FILLED = new Set(['confirmed', 'paper']);

/**
 * Average-cost P&L of `token` traded against one quote mint, over `fills` in the order they were
 * made (see the module comment); arbitrage (`token` null) sums the actual profit.
 */
export function pnlOfFills(token: string | null, fills: readonly StrategyFill[]): StrategyPnl {
  const pnl = emptyPnl();
  let book: Position | undefined;
  for (const f of fills) {
    pnl.fees += f.fees ?? 0n;
    if (!FILLED.has(f.status)) continue;
    const tip = f.path === 'bundle' ? (f.tip ?? 0n) : 0n;
    const mint = token === null ? f.profitMint : f.outputMint === token ? f.inputMint : f.outputMint;
    const buy = token !== null && f.outputMint === token && f.inputMint !== token;
    const sell = token !== null && f.inputMint === token && f.outputMint !== token;
    const priced = token === null || ((buy || sell) && f.inputAmount !== null && f.outputAmount !== null);
    if (!priced || (pnl.mint !== null && mint !== pnl.mint)) {
      pnl.skipped++;
      continue;
    }
    pnl.mint ??= mint;
    pnl.fills++;
    pnl.tips += tip;
    if (token === null) {
      pnl.realizedPnl += f.actualProfit ?? 0n;
      continue;
    }
    book ??= new Position({ strategy: '', strategyId: '', pool: '', token, quoteMint: mint ?? '' });
    book.fill({ side: buy ? 'buy' : 'sell', base: buy ? f.outputAmount! : f.inputAmount!, quote: buy ? f.inputAmount! : f.outputAmount!, fees: 0n, tip: 0n });
  }
  if (book !== undefined) {
    pnl.realizedPnl = book.realized;
    pnl.position = book.held;
    pnl.costBasis = book.cost;
  }
  return pnl;
}

interface FillRow {
  strategy_id: string;
  status: string;
  input_mint: string | null;
  input_amount: string | null;
  output_mint: string | null;
  output_amount: string | null;
  actual_profit: string | null;
  profit_mint: string | null;
  fees: string | null;
  tip: string | null;
  path: string | null;
}

const big = (v: string | null): bigint | null => (v === null ? null : BigInt(v));

/** The strategy's traded token: `parameters.token` (grid, DCA, signal); null for arbitrage. */
function tokenOf(strategyType: Strategy, parameters: Record<string, unknown>): string | null {
  if (strategyType === 'arbitrage') return null;
  return typeof parameters.token === 'string' ? parameters.token : null;
}

/** Realized P&L of each strategy given (by id), from its trades in creation order. */
export async function readStrategyPnl(db: SqlQueryable, strategies: readonly { id: string; strategyType: Strategy; parameters: Record<string, unknown> }[]): Promise<Map<string, StrategyPnl>> {
  const out = new Map<string, StrategyPnl>();
  if (strategies.length === 0) return out;
  const rows = await db.query<FillRow>(
    `SELECT t.strategy_id, t.status, f.input_mint, f.input_amount::text AS input_amount, l.output_mint, l.output_amount::text AS output_amount,
            t.actual_profit::text AS actual_profit, s.profit_mint, s.fees::text AS fees, s.tip::text AS tip, s.path
       FROM trades t
       LEFT JOIN trade_submissions s ON s.trade_id = t.id
       LEFT JOIN LATERAL (SELECT input_mint, input_amount FROM trade_routes r WHERE r.trade_id = t.id ORDER BY r.step ASC LIMIT 1) f ON true
       LEFT JOIN LATERAL (SELECT output_mint, output_amount FROM trade_routes r WHERE r.trade_id = t.id ORDER BY r.step DESC LIMIT 1) l ON true
      WHERE t.strategy_id = ANY($1::text[])
      ORDER BY t.strategy_id, t.created_at, t.slot NULLS LAST, t.id`,
    [strategies.map((s) => s.id)],
  );
  const byStrategy = new Map<string, StrategyFill[]>();
  for (const r of rows) {
    const list = byStrategy.get(r.strategy_id) ?? [];
    list.push({
      status: r.status,
      inputMint: r.input_mint,
      inputAmount: big(r.input_amount),
      outputMint: r.output_mint,
      outputAmount: big(r.output_amount),
      actualProfit: big(r.actual_profit),
      profitMint: r.profit_mint,
      fees: big(r.fees),
      tip: big(r.tip),
      path: r.path,
    });
    byStrategy.set(r.strategy_id, list);
  }
  for (const s of strategies) out.set(s.id, pnlOfFills(tokenOf(s.strategyType, s.parameters), byStrategy.get(s.id) ?? []));
  return out;
}
