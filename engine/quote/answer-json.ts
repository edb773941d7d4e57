/**
 * The /quote body of a cache quote, serialized once and written per response as bytes.
 *
 * A memoized quote keeps its body as its UTF-8 bytes in an array buffer of its own (QuoteBodyParts), split at `headEnd` around the fields
 * that may change with every response: `stateAgeMs`, `contextSlot` and the slippage fields
 * (`slippageBps`, `minOutputAmount`, `maxInputAmount`, which follow the request's tolerance). The
 * head ends with `"stateAgeMs":`, the tail starts with the quote closing the maximum input's digits. `QuoteBodyWriter.write` joins them with
 * the per-response values in a reused buffer, so a response builds no string and uWS copies the
 * bytes as they are (a JS string would be converted to UTF-8 on every `end`). The bytes are
 * exactly `JSON.stringify(quoteToJson(q))` for the quote with those values (tested).
 */
import type { OwnedBodyParts, Quote, QuoteBodyParts, QuoteSource, RouteHop, RouteQuote } from './quote-answer.js';
import { BodyBuffer } from './body-buffer.js';
import type { Slippage } from './slippage.js';

/**
 * Quote JSON: camelCase, u64 amounts and slots as decimal strings. The field order is the body's
 * (`QuoteBodyWriter` below writes the per-answer fields, stateAgeMs to maxInputAmount, between two parts).
 */
export function quoteToJson(q: Quote): Record<string, unknown> {
  return {
    inputMint: q.inputMint,
    outputMint: q.outputMint,
    swapMode: q.swapMode,
    inputAmount: q.inputAmount.toString(),
    outputAmount: q.outputAmount.toString(),
    pool: q.pool,
    dex: q.dex,
    priceImpact: q.priceImpact,
    fee: q.fee.toString(),
    slot: q.slot.toString(),
    stateAgeMs: q.stateAgeMs,
    contextSlot: q.contextSlot.toString(),
    slippageBps: q.slippageBps,
    minOutputAmount: q.minOutputAmount.toString(),
    maxInputAmount: q.maxInputAmount.toString(),
    source: q.source,
    route: q.route.map((h) => ({
      pool: h.pool,
      dex: h.dex,
      inputMint: h.inputMint,
      outputMint: h.outputMint,
      inAmount: h.inAmount.toString(),
      outAmount: h.outAmount.toString(),
      fee: h.fee.toString(),
      feeMint: h.feeMint,
    })),
  };
}

const utf8 = new TextEncoder();
const CONTEXT_SLOT = utf8.encode(',"contextSlot":"');
const SLIPPAGE_BPS = utf8.encode('","slippageBps":');
const MIN_OUTPUT = utf8.encode(',"minOutputAmount":"');
const MAX_INPUT = utf8.encode('","maxInputAmount":"');
const INITIAL_BYTES = 4096;
/** JSON string literals kept encoded at most (`JsonScratch.string`); at that count the table starts over. */
const MAX_LITERALS = 8192;
/** Below this a u64 is exact as a double: its digits are written from a number, not BigInt.toString. */
const EXACT_DOUBLE = 2n ** 53n;

/**
 * JSON written straight into one reused scratch buffer: the body of a memoized quote is built
 * without the strings and objects of `JSON.stringify(quoteToJson(q))` (they were ~2.5 KB of garbage
 * per recomputation), then copied into the body's own bytes. Strings that need no escaping (mints, pool addresses,
 * DEX names: ASCII) are copied char by char; any other goes through JSON.stringify, so the bytes
 * are JSON.stringify's (answer-json.test.ts). Single-threaded, not re-entrant.
 */
class JsonScratch {
  buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  at = 0;
  /**
   * The JSON literal (quotes included) of each string written before: a body repeats a few strings
   * (the cache's interned mints, pool addresses, DEX names) in every recomputation, so each is
   * checked for escapes and encoded once and then copied as bytes.
   */
  private readonly literals = new Map<string, Uint8Array>();

  /** Room for `bytes` more. */
  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    let size = this.buffer.length;
    while (size < this.at + bytes) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  /** Text known to be ASCII needing no escape (keys, punctuation, digits). */
  raw(text: string): void {
    this.room(text.length);
    const out = this.buffer;
    let at = this.at;
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    this.at = at;
  }

  /** A JSON string literal of `text`, quotes included (encoded once per distinct string: `literals`). */
  string(text: string): void {
    let literal = this.literals.get(text);
    if (literal === undefined) {
      const at = this.at;
      this.encodeString(text);
      literal = new Uint8Array(this.buffer.subarray(at, this.at));
      if (this.literals.size >= MAX_LITERALS) this.literals.clear();
      this.literals.set(text, literal);
      return;
    }
    this.room(literal.length);
    this.buffer.set(literal, this.at);
    this.at += literal.length;
  }

  private encodeString(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) {
        const escaped = Buffer.from(JSON.stringify(text));
        this.room(escaped.length);
        escaped.copy(this.buffer, this.at);
        this.at += escaped.length;
        return;
      }
    }
    this.room(text.length + 2);
    const out = this.buffer;
    let at = this.at;
    out[at++] = 0x22;
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    out[at++] = 0x22;
    this.at = at;
  }

  /**
   * A u64 as a JSON string of its decimal digits. Below 2^53 the digits come from a double (exact
   * there), written backwards: no string is made (BigInt.toString allocates one per amount, eight
   * to sixteen a body).
   */
  amount(value: bigint): void {
    if (value < 0n || value >= EXACT_DOUBLE) {
      this.raw('"');
      this.raw(value.toString());
      this.raw('"');
      return;
    }
    let n = Number(value);
    let digits = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.room(digits + 2);
    const out = this.buffer;
    const at = this.at;
    out[at] = 0x22;
    for (let i = at + digits; i > at; i--) {
      const q = Math.floor(n / 10);
      out[i] = 0x30 + (n - q * 10);
      n = q;
    }
    out[at + digits + 1] = 0x22;
    this.at = at + digits + 2;
  }

  /**
   * The bytes written so far as a body: with `into` (the memo entry's own parts), written there, in
   * its bytes when they have room; else in new bytes with room to spare (a quarter more, in 256-byte
   * steps).
   */
  take(headEnd: number, into: OwnedBodyParts | undefined): QuoteBodyParts {
    const length = this.at;
    this.at = 0;
    const bytes = into !== undefined && into.bytes.length >= length ? into.bytes : new Uint8Array((length + (length >> 2) + 255) & ~255);
    bytes.set(length === this.buffer.length ? this.buffer : this.buffer.subarray(0, length));
    if (into === undefined) return { bytes, length, headEnd, revision: 0 };
    into.bytes = bytes;
    into.length = length;
    into.headEnd = headEnd;
    into.revision++;
    return into;
  }
}

const scratch = new JsonScratch();

/** The constant parts of `q`'s body (its own stateAgeMs, contextSlot and slippage fields are left out). */
export function quoteBodyParts(q: Quote): QuoteBodyParts {
  return bodyParts(q.inputMint, q.outputMint, q.swapMode, q.inputAmount, q.outputAmount, q.pool, q.dex, q.priceImpact, q.fee, q.slot, q.source, q.route);
}

/**
 * `quoteBodyParts` of the quote of `route` from `source` (quoteOfAnswer's fields), without building
 * that quote. With `into`, written there (in its bytes when they have room) and returned: `into`
 * is then no longer the body it was (the memo passes its entry's own, being rewritten).
 */
export function routeBodyParts(route: RouteQuote, source: QuoteSource, into?: OwnedBodyParts): QuoteBodyParts {
  const first = route.hops[0]!;
  return bodyParts(route.inputMint, route.outputMint, route.mode, route.inputAmount, route.outputAmount, first.pool, first.dex, route.priceImpact, first.fee, route.slot, source, route.hops, into);
}

function bodyParts(
  inputMint: string,
  outputMint: string,
  swapMode: string,
  inputAmount: bigint,
  outputAmount: bigint,
  pool: string,
  dex: string,
  priceImpact: number,
  fee: bigint,
  slot: bigint,
  source: string,
  hops: readonly RouteHop[],
  into?: OwnedBodyParts,
): QuoteBodyParts {
  const w = scratch;
  w.at = 0;
  w.raw('{"inputMint":');
  w.string(inputMint);
  w.raw(',"outputMint":');
  w.string(outputMint);
  w.raw(',"swapMode":');
  w.string(swapMode);
  w.raw(',"inputAmount":');
  w.amount(inputAmount);
  w.raw(',"outputAmount":');
  w.amount(outputAmount);
  w.raw(',"pool":');
  w.string(pool);
  w.raw(',"dex":');
  w.string(dex);
  w.raw(',"priceImpact":');
  w.raw(JSON.stringify(priceImpact));
  w.raw(',"fee":');
  w.amount(fee);
  w.raw(',"slot":');
  w.amount(slot);
  w.raw(',"stateAgeMs":');
  const headEnd = w.at;
  w.raw('","source":');
  w.string(source);
  w.raw(',"route":[');
  for (let i = 0; i < hops.length; i++) {
    const h = hops[i]!;
    w.raw(i === 0 ? '{"pool":' : ',{"pool":');
    w.string(h.pool);
    w.raw(',"dex":');
    w.string(h.dex);
    w.raw(',"inputMint":');
    w.string(h.inputMint);
    w.raw(',"outputMint":');
    w.string(h.outputMint);
    w.raw(',"inAmount":');
    w.amount(h.inAmount);
    w.raw(',"outAmount":');
    w.amount(h.outAmount);
    w.raw(',"fee":');
    w.amount(h.fee);
    w.raw(',"feeMint":');
    w.string(h.feeMint);
    w.raw('}');
  }
  w.raw(']}');
  return w.take(headEnd, into);
}

/**
 * Writes bodies into one reused buffer (body-buffer.ts). The returned view is valid until the next
 * `write` (uWS copies what it sends before `end` returns). One writer per server; not re-entrant.
 */
export class QuoteBodyWriter {
  private readonly out = new BodyBuffer();

  /** The body of `parts` with `stateAgeMs`, `contextSlot` (decimal digits) and the slippage fields. */
  write(parts: QuoteBodyParts, stateAgeMs: number, contextSlot: string, slippage: Slippage): Uint8Array {
    // The context slot's digits are copied as they are: encoding them (TextEncoder) made an
    // ArrayBuffer per new slot, thousands a second under pool updates, each one swept by the
    // next scavenge.
    const minText = slippage.minOutputText;
    const maxText = slippage.maxInputText;
    const most =
      parts.headEnd + 24 + CONTEXT_SLOT.length + contextSlot.length + SLIPPAGE_BPS.length + 24 + MIN_OUTPUT.length + minText.length +
      MAX_INPUT.length + maxText.length + (parts.length - parts.headEnd);
    // The stored bytes are parked past the body's room and moved into place with copyWithin: a
    // partial copy would need a subarray, a view allocated per response. The whole of `bytes` is
    // copied, its spare room too (one memcpy).
    const stored = parts.bytes;
    const stage = most;
    const w = this.out;
    const out = w.room(stage + stored.length);
    out.set(stored, stage);
    out.copyWithin(0, stage, stage + parts.headEnd);
    let at = w.number(stateAgeMs, parts.headEnd);
    out.set(CONTEXT_SLOT, at);
    at += CONTEXT_SLOT.length;
    at = w.ascii(contextSlot, at);
    out.set(SLIPPAGE_BPS, at);
    at = w.number(slippage.bps, at + SLIPPAGE_BPS.length);
    out.set(MIN_OUTPUT, at);
    at = w.ascii(minText, at + MIN_OUTPUT.length);
    out.set(MAX_INPUT, at);
    at = w.ascii(maxText, at + MAX_INPUT.length);
    out.copyWithin(at, stage + parts.headEnd, stage + parts.length);
    at += parts.length - parts.headEnd;
    return w.view(at);
  }
}
