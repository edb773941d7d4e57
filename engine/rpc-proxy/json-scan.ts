/**
 * Finding the raw bytes of JSON values without decoding them.
 *
 * The proxy forwards `params`, `result` and `id` values byte for byte: decoding them with
 * JSON.parse and encoding them again would round every integer above 2^53 (u64 lamports, slots in
 * some params, large ids). These functions walk UTF-8 JSON bytes with an offset, as a small state
 * machine, and report where values start and end. They check structure (brackets, strings, commas,
 * colons) and every bound before reading; scalars are delimited, not validated, so callers that
 * need full validation run JSON.parse on the same text first. Every function answers -1 or null
 * for bytes that are not the shape it expects, and never reads out of bounds.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** [start, end) of a value in the scanned bytes. */
export interface Span {
  start: number;
  end: number;
}

export interface Member {
  /** The key, decoded (escapes resolved). */
  key: string;
  value: Span;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export function skipSpace(buf: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(buf[i]!)) i++;
  return i;
}

/** The index after the string starting at `i` (a `"`), or -1. */
function skipString(buf: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const b = buf[i]!;
    if (b === QUOTE) return i + 1;
    if (b === BACKSLASH) i++;
    else if (b < 0x20) return -1;
  }
  return -1;
}

/**
 * The index after the JSON value that starts at `i` (no leading space), or -1. Nested arrays and
 * objects are walked with an explicit depth count, not recursion, so deep nesting cannot overflow
 * the stack.
 */
export function skipValue(buf: Uint8Array, i: number, end: number): number {
  if (i >= end) return -1;
  const first = buf[i]!;
  if (first === QUOTE) return skipString(buf, i, end);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A scalar: number, true, false, null; ends at a delimiter.
    let j = i;
    while (j < end) {
      const b = buf[j]!;
      if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) break;
      if (b === QUOTE || b === OPEN_BRACE || b === OPEN_BRACKET || b === COLON) return -1;
      j++;
    }
    return j > i ? j : -1;
  }
  // Brackets must match: remember the open ones in a byte stack.
  const stack: number[] = [];
  for (let j = i; j < end; j++) {
    const b = buf[j]!;
    if (b === QUOTE) {
      j = skipString(buf, j, end);
      if (j < 0) return -1;
      j--;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      stack.push(b);
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      const open = stack.pop();
      if (open !== (b === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) return -1;
      if (stack.length === 0) return j + 1;
    }
  }
  return -1;
}

const utf8 = new TextDecoder('utf-8');

function decodeKey(buf: Uint8Array, start: number, end: number): string {
  // start/end include the quotes.
  for (let k = start + 1; k < end - 1; k++) {
    if (buf[k] === BACKSLASH) return JSON.parse(utf8.decode(buf.subarray(start, end))) as string;
  }
  return utf8.decode(buf.subarray(start + 1, end - 1));
}

/**
 * The members of the object at [start, end) (leading and trailing space allowed), in order, or
 * null when the bytes are not one object. With `stopAt`, returns as soon as a member with one of
 * those keys has been read (the rest is not walked).
 */
export function objectMembers(buf: Uint8Array, start: number, end: number, stopAt?: ReadonlySet<string>): Member[] | null {
  let i = skipSpace(buf, start, end);
  if (buf[i] !== OPEN_BRACE) return null;
  const members: Member[] = [];
  i = skipSpace(buf, i + 1, end);
  if (buf[i] === CLOSE_BRACE) return skipSpace(buf, i + 1, end) === end ? members : null;
  for (;;) {
    if (buf[i] !== QUOTE) return null;
    const keyEnd = skipString(buf, i, end);
    if (keyEnd < 0) return null;
    const key = decodeKey(buf, i, keyEnd);
    i = skipSpace(buf, keyEnd, end);
    if (buf[i] !== COLON) return null;
    const valueStart = skipSpace(buf, i + 1, end);
    const valueEnd = skipValue(buf, valueStart, end);
    if (valueEnd < 0) return null;
    members.push({ key, value: { start: valueStart, end: valueEnd } });
    if (stopAt?.has(key)) return members;
    i = skipSpace(buf, valueEnd, end);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1, end);
      continue;
    }
    if (buf[i] === CLOSE_BRACE) return skipSpace(buf, i + 1, end) === end ? members : null;
    return null;
  }
}

/** The items of the array at [start, end) (leading and trailing space allowed), or null. */
export function arrayItems(buf: Uint8Array, start: number, end: number): Span[] | null {
  let i = skipSpace(buf, start, end);
  if (buf[i] !== OPEN_BRACKET) return null;
  const items: Span[] = [];
  i = skipSpace(buf, i + 1, end);
  if (buf[i] === CLOSE_BRACKET) return skipSpace(buf, i + 1, end) === end ? items : null;
  for (;;) {
    const itemEnd = skipValue(buf, i, end);
    if (itemEnd < 0) return null;
    items.push({ start: i, end: itemEnd });
    i = skipSpace(buf, itemEnd, end);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1, end);
      continue;
    }
    if (buf[i] === CLOSE_BRACKET) return skipSpace(buf, i + 1, end) === end ? items : null;
    return null;
  }
}

/**
 * Whether a JSON-RPC reply object carries a `result` or an `error`, read from its first members
 * only (nodes write `jsonrpc`, then `result` or `error`, so this reads a few bytes, whatever the
 * size of the result). null when the bytes are not a reply object.
 */
export function replyKind(buf: Uint8Array): 'result' | 'error' | null {
  let i = skipSpace(buf, 0, buf.length);
  if (buf[i] !== OPEN_BRACE) return null;
  const end = buf.length;
  i = skipSpace(buf, i + 1, end);
  while (i < end && buf[i] === QUOTE) {
    const keyEnd = skipString(buf, i, end);
    if (keyEnd < 0) return null;
    const key = decodeKey(buf, i, keyEnd);
    if (key === 'result' || key === 'error') return key;
    i = skipSpace(buf, keyEnd, end);
    if (buf[i] !== COLON) return null;
    const valueStart = skipSpace(buf, i + 1, end);
    const valueEnd = skipValue(buf, valueStart, end);
    if (valueEnd < 0) return null;
    i = skipSpace(buf, valueEnd, end);
    if (buf[i] !== COMMA) return null;
    i = skipSpace(buf, i + 1, end);
  }
  return null;
}

/** The value of member `key`, the last one when the key repeats (as JSON.parse keeps), or undefined. */
export function member(members: readonly Member[], key: string): Span | undefined {
  for (let k = members.length - 1; k >= 0; k--) if (members[k]!.key === key) return members[k]!.value;
  return undefined;
}

/** Nesting beyond this is left to JSON.parse (validValueEnd answers -1). */
const MAX_VALIDATED_DEPTH = 64;

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x39;
}

function isHex(b: number | undefined): boolean {
  return b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));
}

function literalEnd(buf: Uint8Array, i: number, end: number, word: string): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (buf[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/** The index after the ASCII JSON string at `i` (a `"`), every escape checked; -1 otherwise. */
export function validStringEnd(buf: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const b = buf[i]!;
    if (b === QUOTE) return i + 1;
    if (b < 0x20 || b >= 0x80) return -1;
    if (b !== BACKSLASH) continue;
    const e = buf[++i];
    if (e === 0x75) {
      // \uXXXX
      if (!isHex(buf[i + 1]) || !isHex(buf[i + 2]) || !isHex(buf[i + 3]) || !isHex(buf[i + 4])) return -1;
      i += 4;
    } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
      return -1;
    }
  }
  return -1;
}

function validNumberEnd(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === 0x2d) i++;
  if (i >= end) return -1;
  if (buf[i] === 0x30) i++;
  else if (buf[i]! >= 0x31 && buf[i]! <= 0x39) while (i < end && isDigit(buf[i])) i++;
  else return -1;
  if (buf[i] === 0x2e) {
    i++;
    if (!isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i++;
  }
  if (buf[i] === 0x65 || buf[i] === 0x45) {
    i++;
    if (buf[i] === 0x2b || buf[i] === 0x2d) i++;
    if (!isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i++;
  }
  return i;
}

/**
 * The index after the JSON value at `i` (no leading space) when it is valid JSON made of ASCII
 * bytes only, checked in full as JSON.parse checks it (strings and their escapes, numbers,
 * literals, brackets); -1 otherwise, and for anything it does not vouch for (non-ASCII bytes,
 * nesting deeper than 64): the caller then falls back to JSON.parse. Used to read a single call
 * without decoding its params.
 */
export function validValueEnd(buf: Uint8Array, i: number, end: number, depth = 0): number {
  if (i >= end) return -1;
  const b = buf[i]!;
  if (b === QUOTE) return validStringEnd(buf, i, end);
  if (b === 0x2d || isDigit(b)) return validNumberEnd(buf, i, end);
  if (b === 0x74) return literalEnd(buf, i, end, 'true');
  if (b === 0x66) return literalEnd(buf, i, end, 'false');
  if (b === 0x6e) return literalEnd(buf, i, end, 'null');
  if (depth >= MAX_VALIDATED_DEPTH) return -1;
  if (b === OPEN_BRACKET) {
    i = skipSpace(buf, i + 1, end);
    if (buf[i] === CLOSE_BRACKET) return i + 1;
    for (;;) {
      i = validValueEnd(buf, i, end, depth + 1);
      if (i < 0) return -1;
      i = skipSpace(buf, i, end);
      if (buf[i] === CLOSE_BRACKET) return i + 1;
      if (buf[i] !== COMMA) return -1;
      i = skipSpace(buf, i + 1, end);
    }
  }
  if (b === OPEN_BRACE) {
    i = skipSpace(buf, i + 1, end);
    if (buf[i] === CLOSE_BRACE) return i + 1;
    for (;;) {
      if (buf[i] !== QUOTE) return -1;
      i = validStringEnd(buf, i, end);
      if (i < 0) return -1;
      i = skipSpace(buf, i, end);
      if (buf[i] !== COLON) return -1;
      i = validValueEnd(buf, skipSpace(buf, i + 1, end), end, depth + 1);
      if (i < 0) return -1;
      i = skipSpace(buf, i, end);
      if (buf[i] === CLOSE_BRACE) return i + 1;
      if (buf[i] !== COMMA) return -1;
      i = skipSpace(buf, i + 1, end);
    }
  }
  return -1;
}
