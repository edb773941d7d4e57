import { describe, expect, it } from 'vitest';

import { base58, buildTransaction, keypairFromSeed } from '../chain/index.js';
import { ErrorCode } from '../errors.js';
import { firstSignatureText } from './signature.js';

describe('firstSignatureText', () => {
  it("is the base58 of a signed transaction's first signature", () => {
    const payer = keypairFromSeed(new Uint8Array(32).fill(7));
    const tx = buildTransaction({ payer, recentBlockhash: base58.encode(new Uint8Array(32).fill(1)), instructions: [] });
    expect(firstSignatureText(tx)).toBe(base58.encode(tx.subarray(1, 65)));
  });

  it('refuses bytes that hold no signature with TransactionInvalid', () => {
    for (const bytes of [new Uint8Array([0, 1, 2]), new Uint8Array([1, ...new Uint8Array(10)]), new Uint8Array(0)]) {
      expect(() => firstSignatureText(bytes)).toThrow(expect.objectContaining({ code: ErrorCode.TransactionInvalid, context: { reason: 'no-signature', length: bytes.length } }));
    }
  });
});
