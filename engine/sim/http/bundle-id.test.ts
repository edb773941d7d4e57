import { createHash } from 'node:crypto';

import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { deriveBundleId, firstSignature, transactionId } from './bundle-id.js';

function tx(signatures: number, fill: number, extra = 10): Uint8Array {
  // compact-u16 count (< 128 here), then the signatures, then a message stub.
  const out = new Uint8Array(1 + signatures * 64 + extra).fill(fill);
  out[0] = signatures;
  return out;
}

describe('bundle ids', () => {
  it('is the hex SHA-256 of the base58 first signatures joined by commas, as Jito-Solana derives it', () => {
    const a = tx(1, 7);
    const b = tx(2, 9);
    const expected = createHash('sha256')
      .update(`${bs58.encode(a.subarray(1, 65))},${bs58.encode(b.subarray(1, 65))}`)
      .digest('hex');
    expect(deriveBundleId([a, b])).toBe(expected);
  });

  it('depends on the order of the transactions', () => {
    expect(deriveBundleId([tx(1, 1), tx(1, 2)])).not.toBe(deriveBundleId([tx(1, 2), tx(1, 1)]));
  });

  it('reads the first signature after a compact-u16 count', () => {
    expect(transactionId(tx(1, 5))).toBe(bs58.encode(new Uint8Array(64).fill(5)));
    const many = new Uint8Array(3 + 200 * 64).fill(3);
    many.set([0xc8, 0x01], 0); // 200 signatures: two-byte compact-u16
    many[2] = 0xaa;
    expect(firstSignature(many)?.[0]).toBe(0xaa);
  });

  it('finds no signature in a transaction without one or too short for one', () => {
    expect(firstSignature(new Uint8Array([0, 1, 2]))).toBeUndefined();
    expect(firstSignature(new Uint8Array([1, 1, 2]))).toBeUndefined();
    expect(firstSignature(new Uint8Array())).toBeUndefined();
    expect(() => transactionId(new Uint8Array([0]))).toThrow(expect.objectContaining({ code: ErrorCode.TransactionInvalid, context: { reason: 'no-signature', length: 1 } }));
  });
});
