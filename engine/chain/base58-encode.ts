/**
 * Base58 (Bitcoin alphabet) encoding fast enough for the scanner's hot path.
 *
 * `bs58` (base-x) converts byte by byte, O(n²) single-digit steps with an allocation per call:
 * ~19 µs for a 64-byte signature and ~9 µs for a 32-byte key on our machines, which alone caps a
 * scanner at a few tens of thousands of transactions per second. This encoder divides the number
 * by 58^5 at a time over 16-bit limbs: every intermediate (remainder < 58^5 < 2^30, times 2^16,
 * plus a limb) stays below 2^46, exact in a double, so there is no BigInt and no allocation but the
 * result string. Tested for equality with bs58 on random inputs (base58-encode.test.ts).
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const BASE_58_POW_5 = 656_356_768; // 58^5
const ONE = 0x31; // '1', the digit for a leading zero byte

// Scratch space, grown on demand: limbs of the number and the output characters.
let limbs = new Float64Array(64);
let chars = new Uint8Array(128);

/** Base58 text of `bytes[start, end)`. */
export function encodeBase58(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let zeros = 0;
  while (start + zeros < end && bytes[start + zeros] === 0) zeros++;
  const first = start + zeros;
  const n = end - first;
  // Digits needed: n * log(256) / log(58) < n * 1.3658 + 1, plus up to 4 of padding in the top group.
  const maxChars = zeros + Math.ceil(n * 1.3658) + 6;
  if (chars.length < maxChars) chars = new Uint8Array(maxChars * 2);
  const limbCount = (n + 1) >> 1;
  if (limbs.length < limbCount) limbs = new Float64Array(limbCount * 2);

  // Big-endian 16-bit limbs; an odd length puts the first byte alone in the top limb.
  let b = first;
  let l = 0;
  if (n & 1) limbs[l++] = bytes[b++]!;
  while (b < end) {
    limbs[l++] = (bytes[b]! << 8) | bytes[b + 1]!;
    b += 2;
  }

  let pos = maxChars;
  let lead = 0;
  while (lead < limbCount) {
    let rem = 0;
    for (let i = lead; i < limbCount; i++) {
      const cur = rem * 65536 + limbs[i]!;
      const q = Math.floor(cur / BASE_58_POW_5);
      limbs[i] = q;
      rem = cur - q * BASE_58_POW_5;
    }
    while (lead < limbCount && limbs[lead] === 0) lead++;
    for (let k = 0; k < 5; k++) {
      const q = Math.floor(rem / 58);
      chars[--pos] = ALPHABET_CODES[rem - q * 58]!;
      rem = q;
    }
  }
  // The top group was padded to 5 digits: drop its leading zero digits, then add one '1' per zero byte.
  while (pos < maxChars && chars[pos] === ONE) pos++;
  for (let z = 0; z < zeros; z++) chars[--pos] = ONE;
  return latin1(chars, pos, maxChars);
}

function latin1(codes: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(codes[i]!);
  return s;
}
