import { describe, expect, it } from 'vitest';

import { MAX_QUOTE_AGE_MS, QuoteTable, staleAfterMs } from './quote-table.js';
import { routeHash } from './swap-route-event.js';
import { POOL_B, SOL, USDC, makeErrorQuote, makeQuote } from './testing.js';

const PAIR = { inputMint: SOL, outputMint: USDC, amount: '1000' };
const PAIR_ID = makeQuote(PAIR, 1n).pairId;
const quote = (out: bigint, pool?: string) => {
  const q = makeQuote(PAIR, out, pool === undefined ? {} : { pool });
  q.routeHash = routeHash(q.route);
  return q;
};

describe('QuoteTable', () => {
  it('staleness window is max(3 × update interval, 2 s)', () => {
    expect(staleAfterMs(100)).toBe(2000);
    expect(staleAfterMs(1000)).toBe(3000);
  });

  it('a quote with the same route hash and output is a duplicate: counted, and it only refreshes the receipt time', () => {
    const t = new QuoteTable(3000);
    const first = quote(10n);
    expect(t.offer(first, 1000)).toBe('changed');
    expect(t.offer(quote(10n), 2000)).toBe('duplicate');
    expect(t.duplicates).toBe(1);
    expect(t.get(first.pairId)).toMatchObject({ quote: first, receivedAtMs: 2000 });
    expect(t.offer(quote(11n), 2100)).toBe('changed'); // other output
    expect(t.offer(quote(11n, POOL_B), 2200)).toBe('changed'); // other route
    expect(t.duplicates).toBe(1);
  });

  it('holds "cannot quote" errors too; the same error again is a duplicate', () => {
    const t = new QuoteTable(3000);
    const err = makeErrorQuote(PAIR);
    expect(t.offer(err, 0)).toBe('changed');
    expect(t.offer(makeErrorQuote(PAIR), 1)).toBe('duplicate');
    expect(t.get(err.pairId)).toMatchObject({ quote: undefined, error: { code: 'TP_ERR_NO_POOL_FOR_PAIR' } });
    expect(t.offer(quote(5n), 2)).toBe('changed');
  });

  it('does not use a held quote past the staleness window or from a disconnected upstream', () => {
    const t = new QuoteTable(3000);
    const q = quote(10n);
    t.offer(q, 1000);
    expect(t.fresh(q.pairId, 4000, true)).toBeDefined();
    expect(t.fresh(q.pairId, 4001, true)).toBeUndefined();
    expect(t.fresh(q.pairId, 1000, false)).toBeUndefined();
    t.offer(quote(10n), 4001); // a duplicate keeps it fresh
    expect(t.fresh(q.pairId, 5000, true)).toBeDefined();
  });

  it('does not use a quote computed more than MAX_QUOTE_AGE_MS ago, however recently it was re-sent; a newer duplicate confirms it', () => {
    const t = new QuoteTable(3000);
    const T = 1_800_000_000_000;
    const polled = (out: bigint, quotedAt: number) => {
      const q = makeQuote(PAIR, out, { quotedAtUnixMs: quotedAt });
      q.routeHash = routeHash(q.route);
      return q;
    };
    // The external service re-sends its last poll result every interval, with the poll's quoted_at.
    t.offer(polled(10n, T), T);
    for (let at = T + 1000; at <= T + MAX_QUOTE_AGE_MS + 1000; at += 1000) t.offer(polled(10n, T), at);
    expect(t.fresh(PAIR_ID, T + MAX_QUOTE_AGE_MS, true)).toBeDefined();
    expect(t.fresh(PAIR_ID, T + MAX_QUOTE_AGE_MS + 1, true)).toBeUndefined();
    // A new poll with the same answer is a duplicate that moves the quote's age forward.
    expect(t.offer(polled(10n, T + MAX_QUOTE_AGE_MS + 1000), T + MAX_QUOTE_AGE_MS + 1000)).toBe('duplicate');
    expect(t.fresh(PAIR_ID, T + MAX_QUOTE_AGE_MS + 1001, true)).toBeDefined();
  });

  it('drops entries older than a cutoff unless kept', () => {
    const t = new QuoteTable(3000);
    const a = quote(1n);
    t.offer(a, 0);
    t.dropOlderThan(10, (id) => id === a.pairId);
    expect(t.size).toBe(1);
    t.dropOlderThan(10, () => false);
    expect(t.size).toBe(0);
  });
});
