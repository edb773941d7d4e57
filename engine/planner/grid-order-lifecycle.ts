/**
 * The lifecycle of a grid_orders row: its statuses and the transitions allowed between them.
 *
 *   pending → partial      a fill smaller than the order (filled < amount)
 *   pending → filled       a fill that completes it (filled = amount)
 *   partial → partial      another fill, still short of the amount
 *   partial → filled       the fill that completes it
 *   pending | partial → cancelled   the strategy is paused or removed, or the execution failed for good
 *   pending | partial → expired     orderTtlMs passed without the order completing
 *
 * filled, cancelled and expired are final: nothing leaves them. `afterFill` gives the status a fill
 * leads to; `assertTransition` refuses any move the table does not hold (TpError Internal).
 */
import { ErrorCode, TpError } from '../errors.js';

export const GridOrderStatus = { Pending: 'pending', Partial: 'partial', Filled: 'filled', Cancelled: 'cancelled', Expired: 'expired' } as const;
export type GridOrderStatus = (typeof GridOrderStatus)[keyof typeof GridOrderStatus];

/** From each status, the statuses it may move to. */
export const GRID_ORDER_TRANSITIONS: Readonly<Record<GridOrderStatus, readonly GridOrderStatus[]>> = {
  pending: ['partial', 'filled', 'cancelled', 'expired'],
  partial: ['partial', 'filled', 'cancelled', 'expired'],
  filled: [],
  cancelled: [],
  expired: [],
};

/** The statuses an order can still fill from (the open ones). */
export const OPEN_GRID_ORDER_STATUSES: readonly GridOrderStatus[] = ['pending', 'partial'];

export function canTransition(from: GridOrderStatus, to: GridOrderStatus): boolean {
  return GRID_ORDER_TRANSITIONS[from].includes(to);
}

export function assertTransition(from: GridOrderStatus, to: GridOrderStatus, orderId: string): void {
  if (!canTransition(from, to)) throw new TpError(ErrorCode.Internal, `grid order ${orderId} cannot move from ${from} to ${to}`, { context: { orderId, from, to } });
}

/**
 * A fill of `fill` atoms on an order of `amount` already `filled`: the new filled amount (capped at
 * `amount`) and the status it leads to. Refuses a fill on a final order.
 */
export function afterFill(order: { id: string; status: GridOrderStatus; amount: bigint; filled: bigint }, fill: bigint): { filled: bigint; status: GridOrderStatus } {
  const sum = order.filled + (fill > 0n ? fill : 0n);
  const filled = sum > order.amount ? order.amount : sum;
  const status: GridOrderStatus = filled >= order.amount ? 'filled' : filled > 0n ? 'partial' : order.status;
  if (status !== order.status || status === 'partial') assertTransition(order.status, status, order.id);
  return { filled, status };
}
