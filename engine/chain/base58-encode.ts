/**
 * Base58 (Bitcoin alphabet) encoding fast enough for the scanner's hot path.
 *
 * `bs58` (base-x) converts byte by byte, O(n²) single-digit steps with an allocation per call:
 * ~19 µs for a 64-byte signature and ~9 µs for a 32-byte key on our machines, which alone caps a
 * scanner at a few tens of thousands of transactions per second. This encoder converts the number
 * from 16-bit limbs to base 58^5 (five characters per digit) with a table of the powers 2^(16·i)
 * in base 58^5: digit j is the sum over limbs of limb_i · digit_j(2^(16·i)) plus the carry from
 * digit j-1. No BigInt, no allocation but the result string. The C++ add-on does the same with
 * 64-bit integers and wider pieces (native/base58.cc). Tested for equality with bs58 on random
 * inputs (base58-encode.test.ts).
 *
 * Exactness: a term is below 2^16 · 58^5 < 2^45.3, a digit sums at most TABLE_LIMBS = 64 terms and
 * a carry below 2^22, so every sum stays below 2^51.3 and is exact in a double. Inputs with more
 * significant bytes than the table covers (never a key, hash or signature) take the schoolbook
 * loop instead: divide by 58^5 over 16-bit limbs, remainder · 2^16 + limb < 2^46.
 */
import { invalidArgument } from '../errors.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const ONE = 0x31; // '1', the digit for a leading zero byte
const DIGIT_BASE = 656_356_768; // 58^5
const LIMB_BASE = 65_536; // 2^16
const PAIR_BASE = 3364; // 58^2

/** Significant bytes (after the leading zeros) the power table covers. */
const TABLE_BYTES = 128;
const TABLE_LIMBS = TABLE_BYTES / 2;

// POWERS[j * TABLE_LIMBS + i] = digit j (least significant first) of 2^(16·i) in base 58^5, laid out
// by digit so that one digit's sum reads one contiguous run. DIGITS_OF[i] = digits of 2^(16·i);
// FIRST_LIMB[j] = the first limb whose power has a digit j (the powers only grow).
const DIGITS_OF = new Int32Array(TABLE_LIMBS);
const powers: number[][] = [];
for (let i = 0, power = [1]; i < TABLE_LIMBS; i++) {
  powers.push(power.slice());
  DIGITS_OF[i] = power.length;
  let carry = 0;
  for (let j = 0; j < power.length; j++) {
    const v = power[j]! * LIMB_BASE + carry; // < 2^46
    carry = Math.floor(v / DIGIT_BASE);
    power[j] = v - carry * DIGIT_BASE;
  }
  if (carry > 0) power.push(carry); // carry < 2^16 < 58^5
}
const MAX_DIGITS = DIGITS_OF[TABLE_LIMBS - 1]! + 1; // one more for the top carry
const POWERS = new Float64Array(MAX_DIGITS * TABLE_LIMBS);
const FIRST_LIMB = new Int32Array(MAX_DIGITS);
for (let j = 0; j < MAX_DIGITS; j++) {
  let i = 0;
  while (i < TABLE_LIMBS && DIGITS_OF[i]! <= j) i++;
  FIRST_LIMB[j] = i;
  for (; i < TABLE_LIMBS; i++) POWERS[j * TABLE_LIMBS + i] = powers[i]![j]!;
}

// Scratch, grown on demand: limbs of the number (least significant first in the table path), its
// base-58^5 digits, and the output characters (a Buffer, for its one-copy latin1 decoder).
let limbs = new Float64Array(TABLE_LIMBS);
const digits = new Int32Array(MAX_DIGITS);
let chars = Buffer.allocUnsafeSlow(256);

// Buffer#latin1Slice is the decoder behind buffer.toString('latin1') without toString's argument
// handling, ~0.1 µs a call less here. Not in Node's typings; toString is the fallback.
interface Latin1Slicer {
  latin1Slice(start: number, end: number): string;
}
const latin1: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Partial<Latin1Slicer>).latin1Slice === 'function'
    ? (buf, start, end) => (buf as unknown as Latin1Slicer).latin1Slice(start, end)
    : (buf, start, end) => buf.toString('latin1', start, end);

/**
 * Base58 text of `bytes[start, end)`, as bs58 would print it (one '1' per leading zero byte).
 * Throws TpError(ArgumentInvalid) unless start and end are integers with 0 <= start <= end <= bytes.length.
 */
export function encodeBase58(bytes: Uint8Array, start = 0, end = bytes.length): string {
  if (!(start >= 0 && start <= end && end <= bytes.length) || start % 1 !== 0 || end % 1 !== 0) {
    throw invalidArgument('start..end', `${start}..${end}`, `base58 range [${start}, ${end}) outside ${bytes.length} bytes`);
  }
  let zeros = 0;
  while (start + zeros < end && bytes[start + zeros] === 0) zeros++;
  const first = start + zeros;
  const n = end - first;
  if (n > TABLE_BYTES) return encodeLong(bytes, first, end, zeros);
  const limbCount = (n + 1) >> 1;
  let digitTotal = limbCount === 0 ? 0 : DIGITS_OF[limbCount - 1]! + 1;
  const maxChars = zeros + digitTotal * 5;
  if (chars.length < maxChars) chars = Buffer.allocUnsafeSlow(maxChars * 2);

  // Limb i is the pair of bytes ending at end - 2i; an odd length leaves the first byte alone on top.
  const pairs = n >> 1;
  for (let i = 0, b = end - 2; i < pairs; i++, b -= 2) limbs[i] = (bytes[b]! << 8) | bytes[b + 1]!;
  if (n & 1) limbs[pairs] = bytes[first]!;

  let carry = 0;
  for (let j = 0; j < digitTotal; j++) {
    let sum = carry;
    const row = j * TABLE_LIMBS;
    for (let i = FIRST_LIMB[j]!; i < limbCount; i++) sum += limbs[i]! * POWERS[row + i]!;
    carry = Math.floor(sum / DIGIT_BASE);
    digits[j] = sum - carry * DIGIT_BASE;
  }
  while (digitTotal > 0 && digits[digitTotal - 1] === 0) digitTotal--;

  // Five characters per digit, written backwards from maxChars: d = hi · 58^2 + lo.
  let pos = maxChars;
  for (let j = 0; j < digitTotal; j++) {
    const d = digits[j]!;
    const hi = (d / PAIR_BASE) | 0;
    const lo = d - hi * PAIR_BASE;
    const lo1 = (lo / 58) | 0;
    const hi1 = (hi / 58) | 0;
    const hi2 = (hi1 / 58) | 0;
    chars[--pos] = ALPHABET_CODES[lo - lo1 * 58]!;
    chars[--pos] = ALPHABET_CODES[lo1]!;
    chars[--pos] = ALPHABET_CODES[hi - hi1 * 58]!;
    chars[--pos] = ALPHABET_CODES[hi1 - hi2 * 58]!;
    chars[--pos] = ALPHABET_CODES[hi2]!;
  }
  return finish(pos, maxChars, zeros);
}

// The top group was padded to 5 digits: drop its leading zero digits, then add one '1' per zero byte.
function finish(pos: number, maxChars: number, zeros: number): string {
  while (pos < maxChars && chars[pos] === ONE) pos++;
  for (let z = 0; z < zeros; z++) chars[--pos] = ONE;
  return latin1(chars, pos, maxChars);
}

/** bytes[first, end): more than TABLE_BYTES bytes, the first not zero, preceded by `zeros` zeros. */
function encodeLong(bytes: Uint8Array, first: number, end: number, zeros: number): string {
  const n = end - first;
  // Digits needed: n · log(256) / log(58) < n · 1.3658 + 1, plus up to 4 of padding in the top group.
  const maxChars = zeros + Math.ceil(n * 1.3658) + 6;
  if (chars.length < maxChars) chars = Buffer.allocUnsafeSlow(maxChars * 2);
  const limbCount = (n + 1) >> 1;
  if (limbs.length < limbCount) limbs = new Float64Array(limbCount * 2);

  // Big-endian 16-bit limbs here; an odd length puts the first byte alone in the top limb.
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
      const cur = rem * LIMB_BASE + limbs[i]!;
      const q = Math.floor(cur / DIGIT_BASE);
      limbs[i] = q;
      rem = cur - q * DIGIT_BASE;
    }
    while (lead < limbCount && limbs[lead] === 0) lead++;
    for (let k = 0; k < 5; k++) {
      const q = Math.floor(rem / 58);
      chars[--pos] = ALPHABET_CODES[rem - q * 58]!;
      rem = q;
    }
  }
  return finish(pos, maxChars, zeros);
}
