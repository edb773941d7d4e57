/**
 * Position-based P&L of the order strategies (grid, DCA, signal): per strategy and traded token, the
 * position its fills built, by average cost. A backtest books its paper fills here
 * (engine/backtest/backtest-report.ts); a live strategy's realized P&L books its trades
 * (strategy-pnl.ts).
 *
 * Every fill of an order is one swap on the strategy's pool: a buy pays `quote` atoms of the quote
 * mint for `base` atoms of the token, a sell the other way round. The position is signed (a grid
 * may sell tokens it never bought in the range: a short, as if it held them before):
 *
 * - a trade in the position's direction (or from flat) adds to it: base held ± base, cost ± quote
 *   (cost of a long = quote spent on what is held; of a short = −quote received for what is owed);
 * - a trade against it closes min(|trade|, |held|) at the average cost cost/held: realized P&L +=
 *   (quote received − cost of the part sold) for a long, (proceeds of the part bought back − quote
 *   paid) for a short; what is left of the trade opens a position the other way;
 * - unrealized P&L = held × the last price the replay saw for the pool (quote atoms per token
 *   atom, the pool's spot price, rounded to the nearest atom) − cost;
 * - transaction fees and tips are lamports, kept apart (they are not in the quote mint's P&L).
 *
 * Integer atoms throughout; a division rounds toward zero. The same fills give the same figures.
 */

export interface PositionFill {
  side: 'buy' | 'sell';
  /** Token atoms bought or sold. */
  base: bigint;
  /** Quote atoms paid (buy) or received (sell). */
  quote: bigint;
  fees: bigint;
  tip: bigint;
}

export interface PositionKey {
  strategy: string;
  strategyId: string;
  pool: string;
  token: string;
  quoteMint: string;
}

export class Position {
  trades = 0;
  buys = 0;
  sells = 0;
  /** Token atoms held (negative: owed). */
  held = 0n;
  /** Quote atoms the held tokens cost (negative for a short: what selling them brought). */
  cost = 0n;
  quoteSpent = 0n;
  quoteReceived = 0n;
  realized = 0n;
  fees = 0n;
  tips = 0n;
  /** The pool's spot price at the last replayed moment (quote atoms per token atom); undefined before any. */
  lastPrice: number | undefined;

  constructor(readonly key: PositionKey) {}

  fill(f: PositionFill): void {
    this.trades++;
    this.fees += f.fees;
    this.tips += f.tip;
    const delta = f.side === 'buy' ? f.base : -f.base;
    const flow = f.side === 'buy' ? f.quote : -f.quote;
    if (f.side === 'buy') {
      this.buys++;
      this.quoteSpent += f.quote;
    } else {
      this.sells++;
      this.quoteReceived += f.quote;
    }
    if (this.held === 0n || this.held > 0n === delta > 0n) {
      this.held += delta;
      this.cost += flow;
      return;
    }
    const size = abs(delta);
    const closing = size < abs(this.held) ? size : abs(this.held);
    // The part of the position closed, at its average cost, and the part of the trade that closes it.
    const closedCost = (this.cost * closing) / abs(this.held);
    const closingFlow = (flow * closing) / size;
    // Long sold: received (−closingFlow) − cost; short bought back: proceeds (−closedCost) − paid (closingFlow).
    this.realized += -closingFlow - closedCost;
    this.held += delta > 0n ? closing : -closing;
    this.cost -= closedCost;
    if (this.held === 0n) this.cost = 0n;
    const rest = size - closing;
    if (rest > 0n) {
      this.held += delta > 0n ? rest : -rest;
      this.cost += flow - closingFlow;
    }
  }

  /** held × the last price − cost; 0 with no price seen. */
  unrealized(): bigint {
    if (this.lastPrice === undefined || this.held === 0n) return 0n;
    return BigInt(Math.round(Number(this.held) * this.lastPrice)) - this.cost;
  }

  /** Average cost per token atom of what is held (quote atoms), or undefined when flat. */
  averageCost(): number | undefined {
    return this.held === 0n ? undefined : Number(this.cost) / Number(this.held);
  }
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

/** The positions of a backtest, by strategy id and token (and the pool it trades on). */
export class PositionBook {
  private readonly positions = new Map<string, Position>();

  position(key: PositionKey): Position {
    const id = `${key.strategyId}\u0000${key.token}\u0000${key.quoteMint}\u0000${key.pool}`;
    let p = this.positions.get(id);
    if (p === undefined) {
      p = new Position(key);
      this.positions.set(id, p);
    }
    return p;
  }

  /** Marks every position on `pool` at `priceOf(token)`. */
  mark(pool: string, priceOf: (token: string) => number | undefined): void {
    for (const p of this.positions.values()) {
      if (p.key.pool !== pool) continue;
      const price = priceOf(p.key.token);
      if (price !== undefined && Number.isFinite(price)) p.lastPrice = price;
    }
  }

  /** The pools positions are held on. */
  pools(): string[] {
    return [...new Set([...this.positions.values()].map((p) => p.key.pool))];
  }

  /** Positions of `strategyId`, sorted by token, then quote mint, then pool. */
  of(strategyId: string): Position[] {
    return [...this.positions.entries()]
      .filter(([, p]) => p.key.strategyId === strategyId)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, p]) => p);
  }

  get size(): number {
    return this.positions.size;
  }
}
