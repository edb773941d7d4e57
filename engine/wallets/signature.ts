import { base58, readCompactU16 } from '../chain/index.js';

const SIGNATURE_BYTES = 64;

/** The id of a signed wire transaction: its first signature in base58. */
export function firstSignatureText(tx: Uint8Array): string {
  const count = readCompactU16(tx, 0, tx.length);
  const at = count >>> 16;
  if (count < 0 || (count & 0xffff) === 0 || at + SIGNATURE_BYTES > tx.length) throw new RangeError('transaction holds no signature');
  return base58.encode(tx.subarray(at, at + SIGNATURE_BYTES));
}
