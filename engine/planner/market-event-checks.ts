/**
 * What a planner checks of a market event before it plans on it, beyond the schema (which the
 * decoder applies: u64 and u128 fields are decimal strings no larger than their type, so
 * 18446744073709551616 or a 20-digit slot never decodes; prices are finite and non-negative, so a
 * price of "NaN" or 1e400 (Infinity) never decodes; reserves carry no sign). Anyone who can
 * publish on the bus can write an event, so the event is held against the pool as the planner
 * itself read it (by RPC, or from the replayed state in a backtest):
 *
 * - the protocol and the two mints are the pool's;
 * - the slot is not far ahead of the state read: at most MAX_EVENT_SLOT_LEAD slots (a minute of
 *   150 blockhash-valid slots), so a forged u64-max slot cannot pass for the newest state;
 * - the timestamp is not in the future beyond MAX_CLOCK_SKEW_MS (it sets the state age an
 *   opportunity carries: a future time would make any state look fresh).
 *
 * A violation is a TP_ERR_MESSAGE_INVALID: the event is dead-lettered at once with its reasons,
 * never retried and never planned on.
 */
import type { LoadedPool } from '../pools/index.js';
import { invalidMessage, type MarketEvent } from '../messages/index.js';

export const MAX_EVENT_SLOT_LEAD = 150n;
export const MAX_CLOCK_SKEW_MS = 30_000;

/** Every way `event` disagrees with `loaded` (the pool it names, as the planner read it) or the clock. */
export function marketEventViolations(event: MarketEvent, loaded: LoadedPool, nowMs: number): string[] {
  const v: string[] = [];
  if (event.protocol !== loaded.dex) v.push(`/protocol: the pool is ${loaded.dex}, not ${event.protocol}`);
  if (event.tokenA !== loaded.pool.tokenA || event.tokenB !== loaded.pool.tokenB) v.push(`/tokenA, /tokenB: the pool trades ${loaded.pool.tokenA} / ${loaded.pool.tokenB}`);
  const slot = BigInt(event.slot);
  if (slot > loaded.slot + MAX_EVENT_SLOT_LEAD) v.push(`/slot: ${event.slot} is more than ${MAX_EVENT_SLOT_LEAD} slots ahead of the pool's state (slot ${loaded.slot})`);
  if (event.timestamp > nowMs + MAX_CLOCK_SKEW_MS) v.push(`/timestamp: ${event.timestamp} is more than ${MAX_CLOCK_SKEW_MS} ms in the future`);
  return v;
}

/** Throws TP_ERR_MESSAGE_INVALID naming every violation. */
export function checkMarketEvent(event: MarketEvent, loaded: LoadedPool, nowMs: number): void {
  const v = marketEventViolations(event, loaded, nowMs);
  if (v.length > 0) throw invalidMessage('MarketEvent', v);
}
