/**
 * The base58 encoder the hot paths should call. `encodeBase58Fast` has encodeBase58's signature
 * and results (base58-encode.ts; native-base58.test.ts checks native == TypeScript == bs58) and
 * sends each call to the implementation that measured faster for it (`npm run bench -- base58` races them):
 *
 * - the C++ one (native/base58.cc, loaded by native-addon.ts) for ranges of at least
 *   NATIVE_BASE58_MIN_BYTES in a buffer whose bytes are surely off V8's heap, and of at least
 *   NATIVE_BASE58_MIN_BYTES_ON_HEAP in one whose bytes may be on it;
 * - the TypeScript one otherwise, and always when the add-on is not loaded (TIDEPOOL_NATIVE=0).
 *
 * Why the heap matters: V8 keeps the bytes of a typed array of at most 64 bytes made by
 * `new Uint8Array(n)`, `Uint8Array.from` or `slice` inside the object, and Node-API's first look at
 * one moves them to a new backing store, ~0.3-0.5 µs here: more than the add-on saves on short
 * inputs. A view with a non-zero byteOffset, or longer than 64 bytes, is off the heap already (a
 * subarray moves the bytes out when it is made). A short view at offset 0 of a large buffer counts
 * as "may be on the heap": correct, just not always the fastest.
 */
import { encodeBase58 } from './base58-encode.js';
import { nativeAddon } from './native-addon.js';

/** `encodeBase58(bytes, start?, end?)`: base58 text of bytes[start, end). */
export type EncodeBase58Fn = (bytes: Uint8Array, start?: number, end?: number) => string;

/**
 * Shortest range sent to the add-on when its bytes are off V8's heap. Measured on views of a large
 * buffer: below 8 bytes both take ~0.2 µs, mostly the call; from 8 up the add-on leads, ~3× at 32
 * bytes and ~5× at 64.
 */
export const NATIVE_BASE58_MIN_BYTES = 8;

/**
 * Shortest range sent to the add-on when its bytes may be on V8's heap. Measured on fresh
 * `new Uint8Array(n)`: TypeScript leads up to 16 bytes, they tie at 24, the add-on leads from 32.
 */
export const NATIVE_BASE58_MIN_BYTES_ON_HEAP = 32;

/** V8's largest on-heap typed array (v8 flag typed_array_max_size_in_heap, default 64). */
const ON_HEAP_MAX_BYTES = 64;

/** The C++ encoder, or null when the add-on is not loaded. Same contract as encodeBase58. */
export const nativeEncodeBase58: EncodeBase58Fn | null = nativeAddon?.encodeBase58 ?? null;

/** The TypeScript encoder, always available. */
export const tsEncodeBase58: EncodeBase58Fn = encodeBase58;

function selecting(native: EncodeBase58Fn): EncodeBase58Fn {
  return function encodeBase58Fast(bytes, start = 0, end = bytes.length) {
    const min = bytes.byteOffset !== 0 || bytes.length > ON_HEAP_MAX_BYTES ? NATIVE_BASE58_MIN_BYTES : NATIVE_BASE58_MIN_BYTES_ON_HEAP;
    if (end - start < min) return encodeBase58(bytes, start, end);
    try {
      return native(bytes, start, end);
    } catch {
      // The add-on's RangeError or TypeError for a bad range: the TypeScript encoder throws the
      // engine's TpError(ArgumentInvalid) for the same range (no cost when nothing is thrown).
      return encodeBase58(bytes, start, end);
    }
  };
}

/** The faster encoder for each call: see the rule above. */
export const encodeBase58Fast: EncodeBase58Fn = nativeEncodeBase58 === null ? encodeBase58 : selecting(nativeEncodeBase58);
