/**
 * Simulated time (leaf module). Block times follow from the slot number, never from the wall
 * clock, so that time-dependent state (DLMM volatility, block times) repeats for a seed; the wall
 * clock only decides when the next slot is produced.
 */

/** Unix time of slot 0 (2025-06-15T15:06:40Z). */
export const GENESIS_UNIX_TIME = 1_750_000_000n;

/** The epoch of `slot` (no warmup epochs: every epoch is `slotsPerEpoch` long, as on mainnet). */
export function epochOf(slot: bigint, slotsPerEpoch: number): bigint {
  return slot / BigInt(slotsPerEpoch);
}

/** Unix seconds of `slot` when slots last `slotMs`. */
export function blockTimeOf(slot: bigint, slotMs: number): bigint {
  return GENESIS_UNIX_TIME + (slot * BigInt(slotMs)) / 1000n;
}
