import { createHash } from 'node:crypto';

import bs58 from 'bs58';

/**
 * Bundle ids and transaction ids as Jito derives them. Jito-Solana `derive_bundle_id`: the
 * lowercase hex SHA-256 of the transactions' first signatures, in base58, joined by ",".
 * The chain's ChainBackend.sendBundle should return deriveBundleId(txs) so ids agree.
 */

const SIGNATURE_BYTES = 64;

/**
 * The first signature of a wire-format transaction (compact-u16 count, then 64-byte signatures),
 * as a view; undefined when the bytes hold no signature.
 */
export function firstSignature(tx: Uint8Array): Uint8Array | undefined {
  // compact-u16: 1..3 bytes, 7 bits each, low first; only whether the count is > 0 matters here.
  let count = 0;
  let offset = 0;
  for (let shift = 0; shift <= 14; shift += 7) {
    const b = tx[offset];
    if (b === undefined) return undefined;
    offset++;
    count |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    if (shift === 14) return undefined;
  }
  if (count === 0 || offset + SIGNATURE_BYTES > tx.length) return undefined;
  return tx.subarray(offset, offset + SIGNATURE_BYTES);
}

/** base58 of the first signature: the transaction id. Throws RangeError when there is none. */
export function transactionId(tx: Uint8Array): string {
  const sig = firstSignature(tx);
  if (sig === undefined) throw new RangeError('transaction has no signature');
  return bs58.encode(sig);
}

export function deriveBundleId(txs: readonly Uint8Array[]): string {
  return createHash('sha256')
    .update(txs.map((tx) => transactionId(tx)).join(','))
    .digest('hex');
}
