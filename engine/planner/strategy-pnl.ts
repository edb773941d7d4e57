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
 * Grid, DCA and signal strategies: position-based, at average cost, in atoms of the quote mint.
 *   - A buy (quote → `token`) of q tokens for Q quote atoms adds q to the position and Q to its cost.
 *   - A sell (`token` → quote) of q tokens for Q quote atoms closes c = min(q, position) tokens:
 *     their cost is ⌊cost × c / position⌋, the proceeds of those c tokens ⌊Q × c / q⌋, and the
 *     realized P&L grows by proceeds − cost; the position and its cost shrink by c and that cost.
 *   - Selling more than is held (a grid starts by selling the levels above the price from the
 *     wallet's inventory) opens a short position the same way, its "cost" the proceeds received;
 *     buying it back realizes cost − paid. So a buy then a sell of the same tokens realizes
 *     exactly what the sell brought minus what the buy cost, whichever came first.
 * Arbitrage: the sum of the fills' `actual_profit` (atoms of each trade's profit mint; spec 03's
 * profit, after fees and tip); no position.
 *
 * Beside it, what the strategy paid the network: `fees` (transaction fees of every trade that
 * recorded them, failed ones included: a failed transaction pays its fee) and `tips` (the tips of
 * bundle trades that filled), both lamports. Grid/DCA/signal P&L is before them (they are lamports,
 * the P&L quote atoms); arbitrage's actual_profit already has them deducted.
 */
import type { Strategy } from '../messages/index.js';
import type { SqlQueryable } from '../state/index.js';

export interface StrategyPnl {
  /** The mint the P&L and cost are counted in: the quote mint (grid, DCA, signal) or the profit mint (arbitrage); null before a fill. */
  mint: string | null;
  /** Realized P&L, atoms of `mint`. */
  realizedPnl: bigint;
  /** Token atoms the fills leave held (negative: sold more than bought); 0 for arbitrage. */
  position: bigint;
  /** What the open position cost at average cost, atoms of `mint` (a short's: the proceeds it got). */
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

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/**
 * Average-cost P&L of `token` traded against one quote mint, over `fills` in the order they were
 * made (see the module comment); arbitrage (`token` null) sums the actual profit.
 */
export function pnlOfFills(token: string | null, fills: readonly StrategyFill[]): StrategyPnl {
  const pnl = emptyPnl();
  for (const f of fills) {
    pnl.fees += f.fees ?? 0n;
    if (!FILLED.has(f.status)) continue;
    if (f.path === 'bundle') pnl.tips += f.tip ?? 0n;
    if (token === null) {
      if (pnl.mint !== null && f.profitMint !== pnl.mint) {
        pnl.skipped++;
        continue;
      }
      pnl.fills++;
      pnl.realizedPnl += f.actualProfit ?? 0n;
      pnl.mint ??= f.profitMint;
      continue;
    }
    const buy = f.outputMint === token && f.inputMint !== token;
    const sell = f.inputMint === token && f.outputMint !== token;
    const quoteMint = buy ? f.inputMint : f.outputMint;
    if ((!buy && !sell) || f.inputAmount === null || f.outputAmount === null || (pnl.mint !== null && quoteMint !== pnl.mint)) {
      pnl.skipped++;
      continue;
    }
    pnl.mint ??= quoteMint;
    pnl.fills++;
    const qty = buy ? f.outputAmount : f.inputAmount;
    const quote = buy ? f.inputAmount : f.outputAmount;
    const direction = buy ? 1n : -1n;
    if (qty === 0n) continue;
    // The part of this trade that closes the open position (a buy closes a short, a sell a long).
    const closing = pnl.position === 0n || (pnl.position > 0n) === buy ? 0n : abs(pnl.position) < qty ? abs(pnl.position) : qty;
    let quoteLeft = quote;
    if (closing > 0n) {
      const closedCost = (pnl.costBasis * closing) / abs(pnl.position);
      const closedQuote = (quote * closing) / qty;
      pnl.realizedPnl += buy ? closedCost - closedQuote : closedQuote - closedCost;
      pnl.costBasis -= closedCost;
      pnl.position += direction * closing;
      quoteLeft -= closedQuote;
    }
    // The rest opens or adds to a position in the trade's direction.
    if (qty > closing) {
      pnl.position += direction * (qty - closing);
      pnl.costBasis += quoteLeft;
    }
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
