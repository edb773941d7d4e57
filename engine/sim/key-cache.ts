import { base58 } from '../chain/index.js';

/**
 * base58 text of 32-byte keys read out of transactions, memoized. The simulator reads the same few
 * thousand keys (traders, pools, vaults, programs) in every slot; base58 costs microseconds per
 * key, a latin1 string of the bytes a fraction of that. The table is dropped when full.
 */
export class KeyCache {
  private readonly byBinary = new Map<string, string>();

  constructor(private readonly limit = 1 << 16) {}

  /** base58 of `bytes[offset, offset + 32)`. */
  keyAt(bytes: Uint8Array, offset: number): string {
    const binary = Buffer.from(bytes.buffer, bytes.byteOffset + offset, 32).toString('latin1');
    let text = this.byBinary.get(binary);
    if (text === undefined) {
      text = base58.encodeAt(bytes, offset, 32);
      if (this.byBinary.size >= this.limit) this.byBinary.clear();
      this.byBinary.set(binary, text);
    }
    return text;
  }
}

const BYTES_CACHE_LIMIT = 1 << 14;
const bytesByText = new Map<string, Uint8Array>();

/** The 32 bytes of a base58 key, memoized (callers must not modify them). */
export function pubkeyBytes(text: string): Uint8Array {
  let bytes = bytesByText.get(text);
  if (bytes === undefined) {
    bytes = base58.decodePubkey(text);
    if (bytesByText.size >= BYTES_CACHE_LIMIT) bytesByText.clear();
    bytesByText.set(text, bytes);
  }
  return bytes;
}
