import { createHash } from 'node:crypto';

import { base58 } from '../../chain/index.js';
import { firstSignatureBytes } from '../../chain/index.js';
import { ErrorCode, TpError } from '../../errors.js';

/**
 * Bundle ids and transaction ids as Jito derives them. Jito-Solana `derive_bundle_id`: the
 * lowercase hex SHA-256 of the transactions' first signatures, in base58, joined by ",".
 * The chain's ChainBackend.sendBundle should return deriveBundleId(txs) so ids agree.
 */

/**
 * The first signature of a wire-format transaction (compact-u16 count, then 64-byte signatures),
 * as a view; undefined when the bytes hold no signature.
 */
export const firstSignature = firstSignatureBytes;

/** base58 of the first signature: the transaction id. Throws TpError TransactionInvalid (no-signature) when there is none. */
export function transactionId(tx: Uint8Array): string {
  const sig = firstSignature(tx);
  if (sig === undefined) {
    throw new TpError(ErrorCode.TransactionInvalid, `transaction of ${tx.length} bytes has no signature`, { context: { reason: 'no-signature', length: tx.length } });
  }
  return base58.encode(sig);
}

export function deriveBundleId(txs: readonly Uint8Array[]): string {
  return createHash('sha256')
    .update(txs.map((tx) => transactionId(tx)).join(','))
    .digest('hex');
}
