import type { FaultInjector } from '../faults.js';

/** What the stream faults did to one batch. */
export const EntryFault = {
  None: 'none',
  Garbage: 'garbage',
  Truncate: 'truncate',
} as const;
export type EntryFault = (typeof EntryFault)[keyof typeof EntryFault];

export interface FaultedEntries {
  entries: Uint8Array;
  fault: EntryFault;
}

/**
 * The entries bytes as the faults say to send them: random bytes of the same length (garbage),
 * a strict prefix cut at a random point (truncate), or unchanged. Every random choice comes from
 * the injector's seeded generator, so a seed repeats its faults. Garbage wins when both draw.
 */
export function applyEntryFaults(entries: Uint8Array, faults: FaultInjector): FaultedEntries {
  const { garbageRate, truncateRate } = faults.stream;
  if (faults.happens(garbageRate)) {
    return { entries: randomBytes(entries.length, faults), fault: EntryFault.Garbage };
  }
  if (faults.happens(truncateRate)) {
    // A strict prefix that still has something in it when the batch has more than one byte.
    const cut = entries.length > 1 ? 1 + Math.floor(faults.draw() * (entries.length - 1)) : 0;
    return { entries: entries.subarray(0, cut), fault: EntryFault.Truncate };
  }
  return { entries, fault: EntryFault.None };
}

/** `length` bytes from xorshift32 seeded by one draw of the injector (one draw per batch, not per byte). */
function randomBytes(length: number, faults: FaultInjector): Uint8Array {
  const out = new Uint8Array(length);
  let x = Math.floor(faults.draw() * 0x1_0000_0000) >>> 0 || 0x9e37_79b9;
  for (let i = 0; i < length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
    if (i + 1 < length) out[i + 1] = (x >>> 8) & 0xff;
    if (i + 2 < length) out[i + 2] = (x >>> 16) & 0xff;
    if (i + 3 < length) out[i + 3] = x >>> 24;
  }
  return out;
}
