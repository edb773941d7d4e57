/**
 * Base58 (Bitcoin alphabet) for keys, signatures and hashes, with engine errors instead of bare
 * exceptions. Encoding goes through encodeBase58Fast (native-base58.ts: the C++ or the TypeScript
 * encoder, the same text bs58 prints, 3 to 30 times faster); decoding is the `bs58` package's.
 * Meant to be imported as a namespace: `import * as base58 from './base58.js'` then
 * `base58.encode(bytes)`.
 */
import bs58 from 'bs58';

import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import { encodeBase58Fast } from './native-base58.js';
import { PUBKEY_BYTES } from './parse-layout.js';

export function encode(bytes: Uint8Array): string {
  return encodeBase58Fast(bytes);
}

/** Encodes `length` bytes of `bytes` starting at `offset`, in place (no copy, no view). */
export function encodeAt(bytes: Uint8Array, offset: number, length: number): string {
  if (offset < 0 || length < 0 || offset + length > bytes.length) {
    throw invalidArgument('offset..length', `${offset}..${length}`, `base58 range [${offset}, ${offset + length}) outside ${bytes.length} bytes`);
  }
  return encodeBase58Fast(bytes, offset, offset + length);
}

/** Decodes base58 text. Throws TpError(Base58Invalid) on a character outside the alphabet. */
export function decode(text: string): Uint8Array {
  if (typeof text !== 'string') {
    throw new TpError(ErrorCode.Base58Invalid, 'base58 input is not a string', {
      context: { type: typeof text },
    });
  }
  const bytes = bs58.decodeUnsafe(text);
  if (bytes === undefined) {
    throw new TpError(ErrorCode.Base58Invalid, 'invalid base58 text', { context: { value: preview(text) } });
  }
  return bytes;
}

/** Decodes a base58 public key (or any 32-byte value). Throws TpError(Base58Invalid) otherwise. */
export function decodePubkey(text: string): Uint8Array {
  // 32 bytes never need more than 44 characters; refuse longer text before decoding it.
  if (typeof text === 'string' && text.length > 44) {
    throw new TpError(ErrorCode.Base58Invalid, 'base58 public key too long', {
      context: { value: preview(text), length: text.length },
    });
  }
  const bytes = decode(text);
  if (bytes.length !== PUBKEY_BYTES) {
    throw new TpError(ErrorCode.Base58Invalid, `base58 public key decodes to ${bytes.length} bytes, not 32`, {
      context: { value: preview(text), length: bytes.length },
    });
  }
  return bytes;
}

export function isPubkey(text: string): boolean {
  if (typeof text !== 'string' || text.length < 32 || text.length > 44) return false;
  const bytes = bs58.decodeUnsafe(text);
  return bytes !== undefined && bytes.length === PUBKEY_BYTES;
}

function preview(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
}
