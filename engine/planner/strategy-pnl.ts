/**
 * Realized P&L per strategy (issue 27), from the executors' records: the `trades` of a
 * strategy_configs row (`trades.strategy_id`, migration 006), their `trade_routes` and
 * `trade_submissions`. Exact integers throughout.
 *
 * A fill is a trade whose status is `confirmed` or `paper`. Its amounts: a real trade's are what
 * landed (`trades.landed_input_amount` / `landed_output_amount`, migration 007: the wallet's balance
 * changes in the landed transaction, which may differ from what the transaction was built for: the
 * pool moved between build and land, anything down to minimumOutput lands); a row without them (a
 * paper trade, whose route rows are the simulated fill; a real trade written before migration 007)
 * counts its route's: the first hop's input and the last hop's output. Trades not final yet
 * (pending, submitted) count nothing until they are.
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

/*
 * Incremental reading (StrategyPnlBooks): the planner keeps each strategy's book (the accumulator
 * below, and the order key of the last trade folded in) and reads, per request, only the trade rows
 * changed since its last read: trades.change_xid (migration 008, the writing transaction's id) at
 * or above the oldest transaction that was still running when it last read. A row already folded
 * in is known by id; a new final row that sorts after the last one folded is folded in; one that
 * sorts before it (a trade settled after a later one was) makes that strategy read in full again,
 * as does a changed parameter `token`. So a request reads O(new trades), and gives what a full
 * recompute gives.
 */

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
/** Statuses a trade ends in; a trade counts once it has one (before, its fees and amounts are not known). */
const FINAL = ['confirmed', 'failed', 'expired', 'paper'];

/** The P&L of fills folded in one at a time, in the order they were made (see the module comment). */
export class PnlAccumulator {
  private readonly pnl = emptyPnl();
  private book: Position | undefined;

  /** `token`: the strategy's traded token; null for arbitrage (the sum of the actual profit). */
  constructor(readonly token: string | null) {}

  add(f: StrategyFill): void {
    const { pnl, token } = this;
    pnl.fees += f.fees ?? 0n;
    if (!FILLED.has(f.status)) return;
    const tip = f.path === 'bundle' ? (f.tip ?? 0n) : 0n;
    const mint = token === null ? f.profitMint : f.outputMint === token ? f.inputMint : f.outputMint;
    const buy = token !== null && f.outputMint === token && f.inputMint !== token;
    const sell = token !== null && f.inputMint === token && f.outputMint !== token;
    const priced = token === null || ((buy || sell) && f.inputAmount !== null && f.outputAmount !== null);
    if (!priced || (pnl.mint !== null && mint !== pnl.mint)) {
      pnl.skipped++;
      return;
    }
    pnl.mint ??= mint;
    pnl.fills++;
    pnl.tips += tip;
    if (token === null) {
      pnl.realizedPnl += f.actualProfit ?? 0n;
      return;
    }
    this.book ??= new Position({ strategy: '', strategyId: '', pool: '', token, quoteMint: mint ?? '' });
    this.book.fill({ side: buy ? 'buy' : 'sell', base: buy ? f.outputAmount! : f.inputAmount!, quote: buy ? f.inputAmount! : f.outputAmount!, fees: 0n, tip: 0n });
  }

  /** The P&L so far (a copy). */
  value(): StrategyPnl {
    const out = { ...this.pnl };
    if (this.book !== undefined) {
      out.realizedPnl = this.book.realized;
      out.position = this.book.held;
      out.costBasis = this.book.cost;
    }
    return out;
  }
}

/**
 * Average-cost P&L of `token` traded against one quote mint, over `fills` in the order they were
 * made (see the module comment); arbitrage (`token` null) sums the actual profit.
 */
export function pnlOfFills(token: string | null, fills: readonly StrategyFill[]): StrategyPnl {
  const acc = new PnlAccumulator(token);
  for (const f of fills) acc.add(f);
  return acc.value();
}

interface FillRow {
  id: string;
  strategy_id: string;
  /** created_at as fixed-width digits (microseconds): compares as the timestamp does. */
  created: string;
  slot: string | null;
  change_xid: string | null;
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

function fillOf(r: FillRow): StrategyFill {
  return {
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
  };
}

/** Where a trade sorts: created_at, then slot (nulls last), then id, as the SQL orders them. */
interface OrderKey {
  created: string;
  slot: bigint | null;
  id: string;
}

function keyOf(r: FillRow): OrderKey {
  return { created: r.created, slot: big(r.slot), id: r.id };
}

function compareKeys(a: OrderKey, b: OrderKey): number {
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  if (a.slot !== b.slot) {
    if (a.slot === null) return 1;
    if (b.slot === null) return -1;
    return a.slot < b.slot ? -1 : 1;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The strategy's traded token: `parameters.token` (grid, DCA, signal); null for arbitrage. */
function tokenOf(strategyType: Strategy, parameters: Record<string, unknown>): string | null {
  if (strategyType === 'arbitrage') return null;
  return typeof parameters.token === 'string' ? parameters.token : null;
}

export interface PnlStrategy {
  id: string;
  strategyType: Strategy;
  parameters: Record<string, unknown>;
}

/**
 * The final trades of the strategies `full` (all of them), and of `since` those changed by a
 * transaction at or after `xid`, in creation order; a filled real trade's amounts are the landed ones
 * when recorded (migration 007), its route's otherwise.
 */
async function readFills(db: SqlQueryable, full: readonly string[], since: readonly string[], xid: bigint): Promise<FillRow[]> {
  return db.query<FillRow>(
    `SELECT t.id::text AS id, t.strategy_id, to_char(t.created_at, 'YYYYMMDDHH24MISSUS') AS created, t.slot::text AS slot, t.change_xid::text AS change_xid, t.status,
            f.input_mint, COALESCE(t.landed_input_amount, f.input_amount)::text AS input_amount,
            l.output_mint, COALESCE(t.landed_output_amount, l.output_amount)::text AS output_amount,
            t.actual_profit::text AS actual_profit, s.profit_mint, s.fees::text AS fees, s.tip::text AS tip, s.path
       FROM trades t
       LEFT JOIN trade_submissions s ON s.trade_id = t.id
       LEFT JOIN LATERAL (SELECT input_mint, input_amount FROM trade_routes r WHERE r.trade_id = t.id ORDER BY r.step ASC LIMIT 1) f ON true
       LEFT JOIN LATERAL (SELECT output_mint, output_amount FROM trade_routes r WHERE r.trade_id = t.id ORDER BY r.step DESC LIMIT 1) l ON true
      WHERE t.status = ANY($4::text[])
        AND (t.strategy_id = ANY($1::text[]) OR (t.strategy_id = ANY($2::text[]) AND t.change_xid >= $3))
      ORDER BY t.strategy_id, t.created_at, t.slot NULLS LAST, t.id`,
    [[...full], [...since], xid, FINAL],
  );
}

/** Realized P&L of each strategy given (by id), from all its trades in creation order. */
export async function readStrategyPnl(db: SqlQueryable, strategies: readonly PnlStrategy[]): Promise<Map<string, StrategyPnl>> {
  return new StrategyPnlBooks().read(db, strategies);
}

/** One strategy's book: its P&L so far and what the next read must start from. */
interface Book {
  token: string | null;
  acc: PnlAccumulator;
  /** The last trade folded in. */
  last: OrderKey | undefined;
  /** The oldest transaction running at the last read: every row changed below it is in `acc`. */
  watermark: bigint;
  /** Rows changed at or above `watermark` already folded in: id → change_xid. */
  seen: Map<string, bigint>;
}

export interface PnlReadStats {
  /** read() calls. */
  reads: number;
  /** Trade rows the last read() fetched (rows it had folded in already among them). */
  lastRows: number;
  /** Trade rows the last read() folded into a book it kept (not counting the strategies it read in full). */
  lastFolded: number;
  /** Strategies read in full (first read, token changed, a trade that settled out of order). */
  fullReads: number;
}

/**
 * Per-strategy P&L kept between requests (the module comment, "Incremental reading"): each read
 * fetches only the rows changed since the last. Reads run one at a time.
 */
export class StrategyPnlBooks {
  private readonly books = new Map<string, Book>();
  private queue: Promise<unknown> = Promise.resolve();
  readonly stats: PnlReadStats = { reads: 0, lastRows: 0, lastFolded: 0, fullReads: 0 };

  read(db: SqlQueryable, strategies: readonly PnlStrategy[]): Promise<Map<string, StrategyPnl>> {
    return this.serial(() => this.readNow(db, strategies));
  }

  /** Drops the books of strategies not in `ids` (removed rows), so they do not pile up. */
  retain(ids: readonly string[]): Promise<void> {
    const keep = new Set(ids);
    return this.serial(() => {
      for (const id of this.books.keys()) if (!keep.has(id)) this.books.delete(id);
    });
  }

  /** Runs `work` after what is queued (reads and retains run one at a time). */
  private serial<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async readNow(db: SqlQueryable, strategies: readonly PnlStrategy[]): Promise<Map<string, StrategyPnl>> {
    this.stats.reads++;
    this.stats.lastRows = 0;
    this.stats.lastFolded = 0;
    const out = new Map<string, StrategyPnl>();
    if (strategies.length === 0) return out;
    // Before the rows: every transaction below this one had ended, so the rows read next show it.
    const [snap] = await db.query<{ xmin: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin');
    const xmin = BigInt(snap!.xmin);
    const full: PnlStrategy[] = [];
    const since: PnlStrategy[] = [];
    for (const s of strategies) {
      const book = this.books.get(s.id);
      if (book === undefined || book.token !== tokenOf(s.strategyType, s.parameters)) full.push(s);
      else since.push(s);
    }
    const from = since.reduce((min, s) => (this.books.get(s.id)!.watermark < min ? this.books.get(s.id)!.watermark : min), xmin);
    const rows = await readFills(db, full.map((s) => s.id), since.map((s) => s.id), from);
    this.stats.lastRows += rows.length;
    const byStrategy = groupByStrategy(rows);
    for (const s of full) this.rebuild(s, byStrategy.get(s.id) ?? [], xmin);
    const again: PnlStrategy[] = [];
    for (const s of since) if (!this.advance(this.books.get(s.id)!, byStrategy.get(s.id) ?? [], xmin)) again.push(s);
    if (again.length > 0) {
      // A trade settled before one already folded in: those strategies are read in full.
      const more = await readFills(db, again.map((s) => s.id), [], 0n);
      this.stats.lastRows += more.length;
      const moreBy = groupByStrategy(more);
      for (const s of again) this.rebuild(s, moreBy.get(s.id) ?? [], xmin);
    }
    for (const s of strategies) out.set(s.id, this.books.get(s.id)!.acc.value());
    return out;
  }

  private rebuild(s: PnlStrategy, rows: readonly FillRow[], xmin: bigint): void {
    this.stats.fullReads++;
    const book: Book = { token: tokenOf(s.strategyType, s.parameters), acc: new PnlAccumulator(tokenOf(s.strategyType, s.parameters)), last: undefined, watermark: xmin, seen: new Map() };
    for (const r of rows) this.fold(book, r);
    this.books.set(s.id, book);
  }

  /** Folds in the new rows; false when one sorts before the last folded (the book must be rebuilt). */
  private advance(book: Book, rows: readonly FillRow[], xmin: bigint): boolean {
    const fresh = rows.filter((r) => {
      const xid = r.change_xid === null ? undefined : BigInt(r.change_xid);
      return xid !== undefined && xid >= book.watermark && book.seen.get(r.id) !== xid;
    });
    if (fresh.length > 0 && book.last !== undefined && compareKeys(keyOf(fresh[0]!), book.last) <= 0) return false;
    for (const r of fresh) this.fold(book, r);
    this.stats.lastFolded += fresh.length;
    book.watermark = xmin;
    for (const [id, xid] of book.seen) if (xid < xmin) book.seen.delete(id);
    return true;
  }

  private fold(book: Book, r: FillRow): void {
    book.acc.add(fillOf(r));
    book.last = keyOf(r);
    if (r.change_xid !== null && BigInt(r.change_xid) >= book.watermark) book.seen.set(r.id, BigInt(r.change_xid));
  }
}

function groupByStrategy(rows: readonly FillRow[]): Map<string, FillRow[]> {
  const out = new Map<string, FillRow[]>();
  for (const r of rows) {
    const list = out.get(r.strategy_id) ?? [];
    list.push(r);
    out.set(r.strategy_id, list);
  }
  return out;
}
