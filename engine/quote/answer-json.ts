/**
 * The /quote body of a cache quote, serialized once and written per response as bytes.
 *
 * A memoized quote keeps its body in two UTF-8 parts around the fields that may change with every
 * response: `stateAgeMs`, `contextSlot` and the slippage fields (`slippageBps`, `minOutputAmount`,
 * `maxInputAmount`, which follow the request's tolerance). `head` ends with `"stateAgeMs":`, `tail`
 * starts with the quote closing the maximum input's digits. `QuoteBodyWriter.write` joins them with
 * the per-response values in a reused buffer, so a response builds no string and uWS copies the
 * bytes as they are (a JS string would be converted to UTF-8 on every `end`). The bytes are
 * exactly `JSON.stringify(quoteToJson(q))` for the quote with those values (tested).
 */
import type { Quote, QuoteBodyParts } from './quote-answer.js';
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
const NULL = utf8.encode('null');
const ZERO_CODE = 0x30;
const INITIAL_BYTES = 4096;

/** The constant parts of `q`'s body (its own stateAgeMs, contextSlot and slippage fields are left out). */
export function quoteBodyParts(q: Quote): QuoteBodyParts {
  const json = quoteToJson(q);
  const head = JSON.stringify({
    inputMint: json.inputMint,
    outputMint: json.outputMint,
    swapMode: json.swapMode,
    inputAmount: json.inputAmount,
    outputAmount: json.outputAmount,
    pool: json.pool,
    dex: json.dex,
    priceImpact: json.priceImpact,
    fee: json.fee,
    slot: json.slot,
  });
  return {
    head: utf8.encode(`${head.slice(0, -1)},"stateAgeMs":`),
    tail: utf8.encode(`","source":${JSON.stringify(json.source)},"route":${JSON.stringify(json.route)}}`),
  };
}

/**
 * Writes bodies into one reused buffer. The returned view is valid until the next `write` (uWS
 * copies what it sends before `end` returns). One writer per server; not re-entrant.
 */
export class QuoteBodyWriter {
  private buffer = new Uint8Array(INITIAL_BYTES);
  /** Views of the buffer by length, made once each: a response allocates no view. */
  private views: (Uint8Array | undefined)[] = [];
  private slotText = '';
  private slotBytes = new Uint8Array(0);

  /** The body of `parts` with `stateAgeMs`, `contextSlot` (decimal digits) and the slippage fields. */
  write(parts: QuoteBodyParts, stateAgeMs: number, contextSlot: string, slippage: Slippage): Uint8Array {
    if (contextSlot !== this.slotText) {
      this.slotText = contextSlot;
      this.slotBytes = utf8.encode(contextSlot);
    }
    const minText = slippage.minOutputText;
    const maxText = slippage.maxInputText;
    const most =
      parts.head.length + 24 + CONTEXT_SLOT.length + this.slotBytes.length + SLIPPAGE_BPS.length + 24 + MIN_OUTPUT.length + minText.length +
      MAX_INPUT.length + maxText.length + parts.tail.length;
    if (most > this.buffer.length) this.grow(most);
    const out = this.buffer;
    out.set(parts.head, 0);
    let at = this.writeNumber(stateAgeMs, parts.head.length);
    out.set(CONTEXT_SLOT, at);
    at += CONTEXT_SLOT.length;
    out.set(this.slotBytes, at);
    at += this.slotBytes.length;
    out.set(SLIPPAGE_BPS, at);
    at = this.writeNumber(slippage.bps, at + SLIPPAGE_BPS.length);
    out.set(MIN_OUTPUT, at);
    at = this.writeDigits(minText, at + MIN_OUTPUT.length);
    out.set(MAX_INPUT, at);
    at = this.writeDigits(maxText, at + MAX_INPUT.length);
    out.set(parts.tail, at);
    at += parts.tail.length;
    return this.views[at] ?? (this.views[at] = out.subarray(0, at));
  }

  /** The ASCII digits of a decimal string at `at`, without encoding a copy. Returns the end. */
  private writeDigits(digits: string, at: number): number {
    const out = this.buffer;
    for (let i = 0; i < digits.length; i++) out[at + i] = digits.charCodeAt(i);
    return at + digits.length;
  }

  /** JSON of a number at `at`: digits for a safe integer, else JSON.stringify's text. Returns the end. */
  private writeNumber(value: number, at: number): number {
    const out = this.buffer;
    if (Number.isSafeInteger(value) && value >= 0) {
      let digits = 1;
      for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
      let v = value;
      for (let i = at + digits - 1; i >= at; i--) {
        out[i] = ZERO_CODE + (v % 10);
        v = Math.floor(v / 10);
      }
      return at + digits;
    }
    // Negative, fractional or huge (a clock that went back, a fake clock): the general path.
    const text = Number.isFinite(value) ? utf8.encode(String(value)) : NULL;
    out.set(text, at);
    return at + text.length;
  }

  private grow(bytes: number): void {
    let size = this.buffer.length;
    while (size < bytes) size *= 2;
    this.buffer = new Uint8Array(size);
    this.views = [];
  }
}
