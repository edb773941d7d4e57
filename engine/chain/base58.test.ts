import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import * as base58 from './base58.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isTpError(err) ? err.code : 'not a TpError';
  }
  return undefined;
}

describe('base58', () => {
  it('encodes keys as Solana prints them, one leading 1 per zero byte', () => {
    expect(base58.encode(new Uint8Array(32))).toBe('11111111111111111111111111111111');
    const wsol = base58.decodePubkey('So11111111111111111111111111111111111111112');
    expect(base58.encode(wsol)).toBe('So11111111111111111111111111111111111111112');
    expect(base58.encode(Uint8Array.from([0, 0, 1]))).toBe('112');
    expect(base58.encode(new Uint8Array(0))).toBe('');
  });

  it('round-trips pubkeys of the reference', () => {
    for (const key of [
      '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8',
      'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
      'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
      '96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5',
    ]) {
      const bytes = base58.decodePubkey(key);
      expect(bytes.length).toBe(32);
      expect(base58.encode(bytes)).toBe(key);
      expect(base58.isPubkey(key)).toBe(true);
    }
  });

  it('encodes a range of a larger buffer without copying the rest', () => {
    const key = base58.decodePubkey('whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc');
    const buf = new Uint8Array(100).fill(0xee);
    buf.set(key, 40);
    expect(base58.encodeAt(buf, 40, 32)).toBe('whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc');
    expect(() => base58.encodeAt(buf, 80, 32)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'offset..length', value: '80..32' } }));
  });

  it('rejects characters outside the alphabet with TP_ERR_BASE58_INVALID', () => {
    for (const bad of ['0OIl', 'abc!', 'So1111111111111111111111111111111111111111O', ' 111']) {
      expect(codeOf(() => base58.decode(bad)), bad).toBe(ErrorCode.Base58Invalid);
      expect(base58.isPubkey(bad)).toBe(false);
    }
    expect(codeOf(() => base58.decode(42 as unknown as string))).toBe(ErrorCode.Base58Invalid);
  });

  it('rejects pubkeys that do not decode to 32 bytes', () => {
    expect(codeOf(() => base58.decodePubkey('1111111111111111111111111111111'))).toBe(ErrorCode.Base58Invalid); // 31 bytes
    expect(codeOf(() => base58.decodePubkey(''))).toBe(ErrorCode.Base58Invalid);
    expect(codeOf(() => base58.decodePubkey('z'.repeat(45)))).toBe(ErrorCode.Base58Invalid);
    expect(codeOf(() => base58.decodePubkey('z'.repeat(44)))).toBe(ErrorCode.Base58Invalid); // 33 bytes
  });
});
