import { describe, expect, it } from 'vitest';

import { Position, PositionBook } from './position-book.js';

const key = { strategy: 'grid', strategyId: 'g', pool: 'P', token: 'T', quoteMint: 'Q' };
const fill = (side: 'buy' | 'sell', base: bigint, quote: bigint) => ({ side, base, quote, fees: 5_000n, tip: 0n });

describe('a position by average cost', () => {
  it('realizes a sale against the average cost of what was bought, and marks the rest at the last price', () => {
    const p = new Position(key);
    p.fill(fill('buy', 100n, 1_000n)); // 10 a token
    p.fill(fill('buy', 100n, 2_000n)); // 20 a token: average 15
    p.fill(fill('sell', 50n, 1_000n)); // 20 a token: realized 50 × (20 − 15) = 250
    expect([p.held, p.cost, p.realized, p.quoteSpent, p.quoteReceived, p.fees]).toEqual([150n, 2_250n, 250n, 3_000n, 1_000n, 15_000n]);
    expect(p.averageCost()).toBe(15);
    p.lastPrice = 12;
    expect(p.unrealized()).toBe(150n * 12n - 2_250n); // −450
    expect([p.trades, p.buys, p.sells]).toEqual([3, 2, 1]);
  });

  it('opens a short on a sale from flat, closes it on a buy, and flips when the trade is larger than the position', () => {
    const p = new Position(key);
    p.fill(fill('sell', 100n, 2_000n)); // short 100 at 20
    expect([p.held, p.cost]).toEqual([-100n, -2_000n]);
    p.lastPrice = 18;
    expect(p.unrealized()).toBe(-1_800n + 2_000n); // 200 to the good
    p.fill(fill('buy', 150n, 2_700n)); // 18 a token: closes 100 (realized 2,000 − 1,800 = 200), opens a long of 50 at 18
    expect([p.held, p.cost, p.realized]).toEqual([50n, 900n, 200n]);
    p.fill(fill('sell', 50n, 1_000n)); // flat: realized += 1,000 − 900
    expect([p.held, p.cost, p.realized]).toEqual([0n, 0n, 300n]);
    expect(p.unrealized()).toBe(0n);
    // Quote in − quote out is the realized P&L once flat.
    expect(p.quoteReceived - p.quoteSpent).toBe(p.realized);
  });

  it('keeps one position per strategy, token and pool, and marks only the pool priced', () => {
    const book = new PositionBook();
    book.position(key).fill(fill('buy', 10n, 100n));
    book.position({ ...key, strategyId: 'h' }).fill(fill('buy', 10n, 100n));
    book.mark('P', (token) => (token === 'T' ? 11 : undefined));
    book.mark('other', () => 99);
    expect(book.of('g').map((p) => [p.held, p.lastPrice, p.unrealized()])).toEqual([[10n, 11, 10n]]);
    expect(book.pools()).toEqual(['P']);
    expect(book.size).toBe(2);
  });
});
