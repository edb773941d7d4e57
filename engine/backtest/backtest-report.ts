/**
 * A backtest's report: the paper trades, and per strategy (one strategy_configs id) and profit mint
 * the trades, wins, losses, win rate, gross and net profit and loss, fees and tips paid, and the
 * worst drawdown.
 *
 * - gross = output − input of the trade in the profit mint (what the route gave);
 * - net = the paper fill's actual profit: the profit mint's balance change the real path would
 *   show, fees and tip included when the profit mint is wrapped SOL (the fill's rules);
 * - a win is a trade with net > 0; a loss one with net ≤ 0; win rate = wins / trades;
 * - fees (transaction fees and priority fee) and tips are lamports, summed per strategy;
 * - worst drawdown = the largest fall of the cumulative net P&L from its running peak (the peak
 *   starts at 0, before the first trade), in the profit mint's atoms, trades taken in stream order.
 *
 * The order strategies (grid, DCA, signal) are reported by position instead (engine/planner/position-book.ts): per
 * strategy and token the base held, quote spent and received, average cost, realized P&L, P&L
 * unrealized at the last replayed price, trades and fees; the arbitrage report is unchanged.
 *
 * Amounts are bigint inside and decimal strings in the JSON. Nothing in it depends on when or where
 * the backtest ran: the same trades give the same bytes (`reportJson`).
 */
import { PositionBook, type Position, type PositionKey } from '../planner/index.js';

/** Strategies reported by position (one-hop orders of a token against a quote mint). */
export const POSITION_STRATEGIES: ReadonlySet<string> = new Set(['grid', 'dca', 'signal']);

export interface BacktestTrade {
  /** Deterministic: derived from the source event, the strategy and the opportunity's rank in it (arbitrage), or the order's own id. */
  id: string;
  strategy: string;
  strategyId: string;
  /** Orders (grid, DCA, signal): buy or sell of the strategy's token. */
  side?: 'buy' | 'sell';
  /** The market event that led to it, its slot and its time (the replay's clock). */
  sourceEvent: string;
  slot: bigint;
  timestamp: number;
  path: string;
  profitMint: string;
  inputMint: string;
  input: bigint;
  output: bigint;
  /** The planner's expected profit. */
  expectedProfit: bigint;
  gross: bigint;
  fees: bigint;
  tip: bigint;
  net: bigint;
  /** The route's pools, in order. */
  route: string[];
}

/** Why a strategy's opportunity was not filled (the re-quote's refusal reasons, `below_minimum`). */
export type NotFilled = Record<string, number>;

export interface EventCounts {
  /** pool_update messages read (warm-up included). */
  read: number;
  /** Read before `from`: their states were applied, no strategy ran. */
  warmup: number;
  /** Run through the strategies. */
  replayed: number;
  /** Not used, by reason: no_state (an older publisher), no_base, gap, malformed, invalid, load_failed. */
  skipped: Record<string, number>;
}

interface MintTotals {
  trades: number;
  wins: number;
  losses: number;
  gross: bigint;
  net: bigint;
  peak: bigint;
  maxDrawdown: bigint;
}

interface StrategyTotals {
  strategy: string;
  strategyId: string;
  opportunities: number;
  notFilled: NotFilled;
  fees: bigint;
  tips: bigint;
  mints: Map<string, MintTotals>;
  /** Fills of an order strategy (POSITION_STRATEGIES). */
  orderTrades: number;
}

export interface BacktestRange {
  from: number;
  to: number;
  warmupMs: number;
}

export class BacktestReport {
  readonly trades: BacktestTrade[] = [];
  readonly events: EventCounts = { read: 0, warmup: 0, replayed: 0, skipped: {} };
  readonly positions = new PositionBook();
  private readonly strategies = new Map<string, StrategyTotals>();

  constructor(readonly range: BacktestRange) {}

  skip(reason: string): void {
    this.events.skipped[reason] = (this.events.skipped[reason] ?? 0) + 1;
  }

  /** A strategy appears in the report even with no opportunity. */
  strategy(strategy: string, strategyId: string): StrategyTotals {
    let s = this.strategies.get(strategyId);
    if (s === undefined) {
      s = { strategy, strategyId, opportunities: 0, notFilled: {}, fees: 0n, tips: 0n, mints: new Map(), orderTrades: 0 };
      this.strategies.set(strategyId, s);
    }
    return s;
  }

  opportunity(strategy: string, strategyId: string): void {
    this.strategy(strategy, strategyId).opportunities++;
  }

  notFilled(strategy: string, strategyId: string, reason: string): void {
    const s = this.strategy(strategy, strategyId);
    s.notFilled[reason] = (s.notFilled[reason] ?? 0) + 1;
  }

  /** A fill of an order strategy: the trade listed, the position of its token moved. */
  orderTrade(t: BacktestTrade & { side: 'buy' | 'sell' }, key: PositionKey): void {
    this.trades.push(t);
    const s = this.strategy(t.strategy, t.strategyId);
    s.fees += t.fees;
    s.tips += t.tip;
    s.orderTrades++;
    const buy = t.side === 'buy';
    this.positions.position(key).fill({ side: t.side, base: buy ? t.output : t.input, quote: buy ? t.input : t.output, fees: t.fees, tip: t.tip });
  }

  trade(t: BacktestTrade): void {
    this.trades.push(t);
    const s = this.strategy(t.strategy, t.strategyId);
    s.fees += t.fees;
    s.tips += t.tip;
    let m = s.mints.get(t.profitMint);
    if (m === undefined) {
      m = { trades: 0, wins: 0, losses: 0, gross: 0n, net: 0n, peak: 0n, maxDrawdown: 0n };
      s.mints.set(t.profitMint, m);
    }
    m.trades++;
    if (t.net > 0n) m.wins++;
    else m.losses++;
    m.gross += t.gross;
    m.net += t.net;
    if (m.net > m.peak) m.peak = m.net;
    if (m.peak - m.net > m.maxDrawdown) m.maxDrawdown = m.peak - m.net;
  }

  /** The report as plain JSON values (amounts as decimal strings), strategies by id, mints by address. */
  toJson(): Record<string, unknown> {
    const byKey = <T>(entries: Iterable<[string, T]>): [string, T][] => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const strategies = byKey(this.strategies).map(([, s]): Record<string, unknown> => {
      if (POSITION_STRATEGIES.has(s.strategy)) {
        return {
          strategy: s.strategy,
          strategyId: s.strategyId,
          opportunities: s.opportunities,
          notFilled: Object.fromEntries(byKey(Object.entries(s.notFilled))),
          trades: s.orderTrades,
          feesPaid: s.fees.toString(),
          tipsPaid: s.tips.toString(),
          positions: this.positions.of(s.strategyId).map(positionJson),
        };
      }
      let trades = 0;
      let wins = 0;
      const mints = byKey(s.mints).map(([profitMint, m]) => {
        trades += m.trades;
        wins += m.wins;
        return { profitMint, trades: m.trades, wins: m.wins, losses: m.losses, winRate: rate(m.wins, m.trades), grossProfit: m.gross.toString(), netProfit: m.net.toString(), maxDrawdown: m.maxDrawdown.toString() };
      });
      return {
        strategy: s.strategy,
        strategyId: s.strategyId,
        opportunities: s.opportunities,
        notFilled: Object.fromEntries(byKey(Object.entries(s.notFilled))),
        trades,
        wins,
        losses: trades - wins,
        winRate: rate(wins, trades),
        feesPaid: s.fees.toString(),
        tipsPaid: s.tips.toString(),
        byProfitMint: mints,
      };
    });
    return {
      version: 1,
      range: { from: this.range.from, to: this.range.to, warmupMs: this.range.warmupMs },
      events: { ...this.events, skipped: Object.fromEntries(byKey(Object.entries(this.events.skipped))) },
      strategies,
      trades: this.trades.map((t) => ({
        id: t.id,
        strategy: t.strategy,
        strategyId: t.strategyId,
        ...(t.side === undefined ? {} : { side: t.side }),
        sourceEvent: t.sourceEvent,
        slot: t.slot.toString(),
        timestamp: t.timestamp,
        path: t.path,
        route: t.route,
        inputMint: t.inputMint,
        profitMint: t.profitMint,
        input: t.input.toString(),
        output: t.output.toString(),
        expectedProfit: t.expectedProfit.toString(),
        grossProfit: t.gross.toString(),
        fees: t.fees.toString(),
        tip: t.tip.toString(),
        netProfit: t.net.toString(),
      })),
    };
  }
}

/** A position's figures: amounts as decimal strings, prices as numbers (null when none). */
export function positionJson(p: Position): Record<string, unknown> {
  const unrealized = p.unrealized();
  const average = p.averageCost();
  return {
    pool: p.key.pool,
    token: p.key.token,
    quoteMint: p.key.quoteMint,
    trades: p.trades,
    buys: p.buys,
    sells: p.sells,
    baseHeld: p.held.toString(),
    quoteSpent: p.quoteSpent.toString(),
    quoteReceived: p.quoteReceived.toString(),
    costBasis: p.cost.toString(),
    averageCost: average === undefined ? null : average,
    lastPrice: p.lastPrice === undefined ? null : p.lastPrice,
    realizedPnl: p.realized.toString(),
    unrealizedPnl: unrealized.toString(),
    totalPnl: (p.realized + unrealized).toString(),
    feesPaid: p.fees.toString(),
    tipsPaid: p.tips.toString(),
  };
}

/** wins / trades, rounded to 4 decimals (0 with no trade). */
function rate(wins: number, trades: number): number {
  return trades === 0 ? 0 : Math.round((wins / trades) * 10_000) / 10_000;
}

/** The report's JSON text (indented): byte-identical for the same report. */
export function reportJson(report: BacktestReport): string {
  return `${JSON.stringify(report.toJson(), null, 2)}\n`;
}

/** Rows under a header, columns padded (the first `left` columns left-aligned, the others right). */
function tableLines(header: string[], rows: string[][], left: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i >= left ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

interface StrategyJson {
  strategy: string;
  strategyId: string;
  opportunities: number;
  notFilled: Record<string, number>;
  feesPaid: string;
  tipsPaid: string;
  byProfitMint?: { profitMint: string; trades: number; wins: number; losses: number; winRate: number; grossProfit: string; netProfit: string; maxDrawdown: string }[];
  positions?: { token: string; quoteMint: string; trades: number; buys: number; sells: number; baseHeld: string; quoteSpent: string; quoteReceived: string; averageCost: number | null; lastPrice: number | null; realizedPnl: string; unrealizedPnl: string; totalPnl: string; feesPaid: string }[];
}

/** A price for the table: 6 significant digits, '-' when none. */
function priceCell(v: number | null): string {
  return v === null ? '-' : String(Number(v.toPrecision(6)));
}

/**
 * The report as a table: one row per arbitrage strategy and profit mint, one row per order
 * strategy's position (when there are any), then the event counts.
 */
export function reportTable(report: BacktestReport): string {
  const json = report.toJson() as { strategies: StrategyJson[] };
  const out: string[] = [];
  const arbitrage = json.strategies.filter((s) => s.byProfitMint !== undefined);
  const orders = json.strategies.filter((s) => s.positions !== undefined);
  if (arbitrage.length > 0 || orders.length === 0) {
    const rows: string[][] = [];
    for (const s of arbitrage) {
      const mints = s.byProfitMint!;
      if (mints.length === 0) rows.push([s.strategy, s.strategyId, '-', '0', '0', '0', '-', '0', '0', s.feesPaid, s.tipsPaid, '0']);
      for (const m of mints) {
        rows.push([s.strategy, s.strategyId, m.profitMint, String(m.trades), String(m.wins), String(m.losses), `${(m.winRate * 100).toFixed(2)}%`, m.grossProfit, m.netProfit, s.feesPaid, s.tipsPaid, m.maxDrawdown]);
      }
    }
    out.push(...tableLines(['strategy', 'strategy id', 'profit mint', 'trades', 'wins', 'losses', 'win rate', 'gross P&L', 'net P&L', 'fees', 'tips', 'worst drawdown'], rows, 3));
  }
  if (orders.length > 0) {
    const rows: string[][] = [];
    for (const s of orders) {
      const positions = s.positions!;
      if (positions.length === 0) rows.push([s.strategy, s.strategyId, '-', '-', '0', '0', '0', '0', '0', '0', '-', '-', '0', '0', '0', s.feesPaid]);
      for (const p of positions) {
        rows.push([s.strategy, s.strategyId, p.token, p.quoteMint, String(p.trades), String(p.buys), String(p.sells), p.baseHeld, p.quoteSpent, p.quoteReceived, priceCell(p.averageCost), priceCell(p.lastPrice), p.realizedPnl, p.unrealizedPnl, p.totalPnl, p.feesPaid]);
      }
    }
    if (out.length > 0) out.push('');
    out.push(...tableLines(['strategy', 'strategy id', 'token', 'quote mint', 'trades', 'buys', 'sells', 'base held', 'quote spent', 'quote received', 'avg cost', 'last price', 'realized P&L', 'unrealized P&L', 'total P&L', 'fees'], rows, 4));
  }
  const e = report.events;
  const skipped = Object.entries(e.skipped)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  out.push('', `events: ${e.read} read, ${e.warmup} warm-up, ${e.replayed} replayed, skipped: ${skipped === '' ? 'none' : skipped}`);
  for (const s of json.strategies) {
    const nf = Object.entries(s.notFilled)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    out.push(`${s.strategy} ${s.strategyId}: ${s.opportunities} opportunities${nf === '' ? '' : `, not filled: ${nf}`}`);
  }
  out.push(`trades: ${report.trades.length}; amounts in atoms of the profit mint, fees and tips in lamports`);
  if (orders.length > 0) out.push('positions: token and quote amounts in atoms, P&L in quote atoms (average cost; unrealized at the last replayed price), prices in quote atoms per token atom');
  return `${out.join('\n')}\n`;
}
