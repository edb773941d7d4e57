import { base58, readCompactU16 } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';

const SIGNATURE_BYTES = 64;

/** The id of a signed wire transaction: its first signature in base58. TpError TransactionInvalid (no-signature) when it has none. */
export function firstSignatureText(tx: Uint8Array): string {
  const count = readCompactU16(tx, 0, tx.length);
  const at = count >>> 16;
  if (count < 0 || (count & 0xffff) === 0 || at + SIGNATURE_BYTES > tx.length) {
    throw new TpError(ErrorCode.TransactionInvalid, `transaction of ${tx.length} bytes holds no signature`, { context: { reason: 'no-signature', length: tx.length } });
  }
  return base58.encode(tx.subarray(at, at + SIGNATURE_BYTES));
}
