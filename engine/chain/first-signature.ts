import { readCompactU16 } from './compact-u16.js';
import { SIGNATURE_BYTES } from './parse-layout.js';

/**
 * The first signature of a wire-format transaction (its id), as a view into `tx`, without parsing
 * the rest: the compact-u16 signature count, then 64-byte signatures. Undefined when the bytes hold
 * no signature (empty or malformed count, count 0, or fewer than 64 bytes after it).
 */
export function firstSignatureBytes(tx: Uint8Array): Uint8Array | undefined {
  const count = readCompactU16(tx, 0, tx.length);
  if (count < 0 || (count & 0xffff) === 0) return undefined;
  const at = count >>> 16;
  return at + SIGNATURE_BYTES > tx.length ? undefined : tx.subarray(at, at + SIGNATURE_BYTES);
}
