import { describe, expect, it } from 'vitest';

import { afterFill, assertTransition, canTransition, GRID_ORDER_TRANSITIONS, type GridOrderStatus } from './grid-order-lifecycle.js';

const order = (status: GridOrderStatus, filled: bigint) => ({ id: 'o1', status, amount: 100n, filled });

describe('grid order lifecycle', () => {
  it('allows pending → partial → filled and the open statuses to end cancelled or expired', () => {
    for (const [from, to] of [['pending', 'partial'], ['partial', 'partial'], ['partial', 'filled'], ['pending', 'filled'], ['pending', 'cancelled'], ['partial', 'cancelled'], ['pending', 'expired'], ['partial', 'expired']] as const) {
      expect(canTransition(from, to), `${from} → ${to}`).toBe(true);
    }
  });

  it('keeps filled, cancelled and expired final', () => {
    for (const from of ['filled', 'cancelled', 'expired'] as const) {
      expect(GRID_ORDER_TRANSITIONS[from]).toEqual([]);
      expect(() => assertTransition(from, 'partial', 'o1')).toThrow(/cannot move from/);
    }
    expect(canTransition('partial', 'pending')).toBe(false);
  });

  it('moves by the filled amount, capped at the order amount', () => {
    expect(afterFill(order('pending', 0n), 40n)).toEqual({ filled: 40n, status: 'partial' });
    expect(afterFill(order('partial', 40n), 20n)).toEqual({ filled: 60n, status: 'partial' });
    expect(afterFill(order('partial', 60n), 40n)).toEqual({ filled: 100n, status: 'filled' });
    expect(afterFill(order('pending', 0n), 150n)).toEqual({ filled: 100n, status: 'filled' });
    expect(afterFill(order('pending', 0n), 0n)).toEqual({ filled: 0n, status: 'pending' });
  });

  it('refuses a fill on a final order', () => {
    expect(() => afterFill(order('expired', 0n), 10n)).toThrow(/cannot move from expired to partial/);
    expect(() => afterFill(order('cancelled', 0n), 100n)).toThrow(/cannot move from cancelled to filled/);
  });
});
