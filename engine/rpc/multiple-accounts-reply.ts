/**
 * A getMultipleAccounts reply read from its bytes: no UTF-8 decode of the body and no JSON.parse of
 * it. A reply is mostly base64 account data (tick and bin arrays are ~10 KB each, so a call of a
 * few concentrated pools is hundreds of kilobytes); the text path decoded all of it to a string,
 * parsed it into a tree of strings, then scanned it again for exact lamports. Here a walk over the
 * bytes finds the few fields it needs, skips the data strings with a byte search, and base64-decodes
 * each data string straight from its slice. On a 300 KB reply that is about a quarter of the
 * main-thread time of the text path.
 *
 * The walk understands JSON (any field order, whitespace, unknown fields of any shape) but takes
 * only the shape a node sends for a successful call: `result.context.slot` and `result.value`, an
 * array of `null` or `{data: [base64, "base64"], owner, lamports, executable, ...}` with unsigned
 * integers and unescaped strings where it reads them. Anything else (an `error` reply, an escape
 * inside a string it reads, a number it cannot take exactly, a count that differs, bytes that are
 * not JSON) gives `undefined`, and the caller parses the text instead, which answers with the
 * right result or the typed error. So the byte path never decides that a reply is bad.
 */
import { ErrorCode, TpError } from '../errors.js';
import type { AccountData, MultipleAccountsResult } from './rpc-client.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
/** Nesting of unknown values the walk skips over. */
const MAX_SKIP_DEPTH = 64;

/** Thrown inside the walk when the reply is not the shape it takes; caught at the top (made once: identity, not a stack, is what counts). */
const NOT_TAKEN = new TpError(ErrorCode.EntryMalformed, 'not the expected getMultipleAccounts shape', { context: { record: 'getMultipleAccounts reply' } });

/** A cursor over the reply's bytes. Every method throws NOT_TAKEN rather than guess. */
class Walk {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  ws(): void {
    const b = this.buf;
    let p = this.pos;
    while (p < b.length) {
      const c = b[p]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      p++;
    }
    this.pos = p;
  }

  /** Skips whitespace and the byte `c`. */
  expect(c: number): void {
    this.ws();
    if (this.buf[this.pos] !== c) throw NOT_TAKEN;
    this.pos++;
  }

  /** Whitespace, then true and past `c` if it is next. */
  take(c: number): boolean {
    this.ws();
    if (this.buf[this.pos] !== c) return false;
    this.pos++;
    return true;
  }

  /**
   * A string: returns [start, end) of its bytes and moves past its closing quote. Only strings whose
   * value is their bytes are taken: no escape, no control character, nothing outside ASCII
   * (`checked` false leaves the last two to the caller, for the long data strings).
   */
  rawString(checked = true): [number, number] {
    this.expect(QUOTE);
    const b = this.buf;
    const start = this.pos;
    const end = b.indexOf(QUOTE, start);
    if (end < 0) throw NOT_TAKEN;
    // Bounded to the string (an unbounded search would scan the rest of the reply each time).
    if (b.subarray(start, end).indexOf(BACKSLASH) !== -1) throw NOT_TAKEN;
    if (checked) for (let p = start; p < end; p++) if (b[p]! < 0x20 || b[p]! > 0x7e) throw NOT_TAKEN;
    this.pos = end + 1;
    return [start, end];
  }

  /** An object key, then the colon. */
  key(): string {
    const [s, e] = this.rawString();
    this.expect(COLON);
    return this.buf.toString('latin1', s, e);
  }

  /** An unsigned integer not above u64 (no sign, fraction, exponent or leading zero). */
  u64(): bigint {
    this.ws();
    const b = this.buf;
    const start = this.pos;
    let p = start;
    while (p < b.length && b[p]! >= DIGIT_0 && b[p]! <= DIGIT_9) p++;
    const n = p - start;
    if (n === 0 || n > 20 || (n > 1 && b[start] === DIGIT_0)) throw NOT_TAKEN;
    const c = b[p];
    if (c === 0x2e || c === 0x65 || c === 0x45) throw NOT_TAKEN;
    this.pos = p;
    const v = BigInt(b.toString('latin1', start, p));
    if (v > U64_MAX) throw NOT_TAKEN;
    return v;
  }

  /** `true`, `false` or `null` if it is next. */
  literal(text: string): boolean {
    this.ws();
    const b = this.buf;
    for (let i = 0; i < text.length; i++) if (b[this.pos + i] !== text.charCodeAt(i)) return false;
    this.pos += text.length;
    return true;
  }

  /** Skips one JSON value of any kind, checking that it is JSON. */
  skip(depth = 0): void {
    if (depth > MAX_SKIP_DEPTH) throw NOT_TAKEN;
    this.ws();
    const c = this.buf[this.pos];
    if (c === QUOTE) {
      this.rawString();
    } else if (c === OPEN_BRACE) {
      this.object(() => this.skip(depth + 1));
    } else if (c === OPEN_BRACKET) {
      this.pos++;
      if (this.take(CLOSE_BRACKET)) return;
      do this.skip(depth + 1);
      while (this.take(COMMA));
      this.expect(CLOSE_BRACKET);
    } else if (!(this.literal('true') || this.literal('false') || this.literal('null'))) {
      this.number();
    }
  }

  /** A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(): void {
    const b = this.buf;
    let p = this.pos;
    const digits = (): number => {
      const from = p;
      while (p < b.length && b[p]! >= DIGIT_0 && b[p]! <= DIGIT_9) p++;
      return p - from;
    };
    if (b[p] === 0x2d) p++;
    const first = p;
    const n = digits();
    if (n === 0 || (n > 1 && b[first] === DIGIT_0)) throw NOT_TAKEN;
    if (b[p] === 0x2e) {
      p++;
      if (digits() === 0) throw NOT_TAKEN;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (digits() === 0) throw NOT_TAKEN;
    }
    this.pos = p;
  }

  /** Calls `member(key)` for each member of an object; `member` consumes the value. */
  object(member: (key: string) => void): void {
    this.expect(OPEN_BRACE);
    if (this.take(CLOSE_BRACE)) return;
    do member(this.key());
    while (this.take(COMMA));
    this.expect(CLOSE_BRACE);
  }
}

/** `key` seen a second time: JSON.parse would keep the last, a walk the first; not taken. */
function once(seen: Set<string>, key: string): void {
  if (seen.has(key)) throw NOT_TAKEN;
  seen.add(key);
}

/**
 * The reply's result, or undefined when the bytes are not a successful reply of the shape above
 * with exactly `expected` accounts (the caller then parses the text).
 */
export function readMultipleAccountsReply(bytes: Uint8Array, expected: number): MultipleAccountsResult | undefined {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const w = new Walk(buf);
  try {
    let slot: bigint | undefined;
    let raw: RawAccount[] | undefined;
    const top = new Set<string>();
    w.object((key) => {
      if (key === 'error') throw NOT_TAKEN; // the text path reports it with its code
      if (key !== 'result') return w.skip();
      once(top, key);
      const result = new Set<string>();
      w.object((k) => {
        if (k === 'context') {
          once(result, k);
          const context = new Set<string>();
          w.object((c) => {
            if (c !== 'slot') return w.skip();
            once(context, c);
            slot = w.u64();
          });
        } else if (k === 'value') {
          once(result, k);
          raw = readValue(w, expected);
        } else {
          w.skip();
        }
      });
    });
    w.ws();
    if (w.pos !== buf.length || slot === undefined || raw === undefined) return undefined;
    const accounts = new Array<AccountData | null>(expected);
    for (let i = 0; i < expected; i++) {
      const r = raw[i]!;
      if (r === null) {
        accounts[i] = null;
        continue;
      }
      const decoded = decodeBase64(buf, r.dataStart, r.dataEnd);
      accounts[i] = {
        data: new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength),
        owner: r.owner,
        lamports: r.lamports,
        executable: r.executable,
        slot,
      };
    }
    return { slot, accounts };
  } catch (err) {
    if (err === NOT_TAKEN) return undefined;
    throw err;
  }
}

/**
 * Base64 of buf[start, end), padded to a multiple of four characters. The decoder skips characters
 * outside the alphabet, so any such byte (a control character, a non-ASCII byte, which the text
 * path would refuse or read otherwise) leaves the output shorter than the length says: not taken.
 */
function decodeBase64(buf: Buffer, start: number, end: number): Buffer {
  const n = end - start;
  if (n % 4 !== 0) throw NOT_TAKEN;
  const pad = n === 0 ? 0 : buf[end - 1] === 0x3d ? (buf[end - 2] === 0x3d ? 2 : 1) : 0;
  const decoded = Buffer.from(buf.toString('latin1', start, end), 'base64');
  if (decoded.length !== (n / 4) * 3 - pad) throw NOT_TAKEN;
  return decoded;
}

/** An account as found in the walk: its data still base64 bytes in the reply. */
type RawAccount = { dataStart: number; dataEnd: number; owner: string; lamports: bigint; executable: boolean } | null;

function readValue(w: Walk, expected: number): RawAccount[] {
  const out: RawAccount[] = [];
  w.expect(OPEN_BRACKET);
  if (w.take(CLOSE_BRACKET)) {
    if (expected !== 0) throw NOT_TAKEN;
    return out;
  }
  do {
    if (out.length === expected) throw NOT_TAKEN;
    if (w.literal('null')) {
      out.push(null);
      continue;
    }
    let data: [number, number] | undefined;
    let owner: string | undefined;
    let lamports: bigint | undefined;
    let executable: boolean | undefined;
    const seen = new Set<string>();
    w.object((key) => {
      switch (key) {
        case 'data': {
          once(seen, key);
          w.expect(OPEN_BRACKET);
          data = w.rawString(false); // checked by its decode
          w.expect(COMMA);
          const [s, e] = w.rawString();
          if (w.buf.toString('latin1', s, e) !== 'base64') throw NOT_TAKEN;
          w.expect(CLOSE_BRACKET);
          break;
        }
        case 'owner': {
          once(seen, key);
          const [s, e] = w.rawString();
          owner = w.buf.toString('latin1', s, e);
          break;
        }
        case 'lamports':
          once(seen, key);
          lamports = w.u64();
          break;
        case 'executable':
          once(seen, key);
          if (w.literal('true')) executable = true;
          else if (w.literal('false')) executable = false;
          else throw NOT_TAKEN;
          break;
        default:
          w.skip();
      }
    });
    if (data === undefined || owner === undefined || lamports === undefined) throw NOT_TAKEN;
    out.push({ dataStart: data[0], dataEnd: data[1], owner, lamports, executable: executable === true });
  } while (w.take(COMMA));
  w.expect(CLOSE_BRACKET);
  if (out.length !== expected) throw NOT_TAKEN;
  return out;
}
