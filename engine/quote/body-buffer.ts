/**
 * The one reused byte buffer a body writer assembles its responses in (GET /quote's QuoteBodyWriter
 * in answer-json.ts, GET /swap/v1/quote's SwapApiBodyWriter in engine/quote-http): a response
 * copies its preformatted parts and writes its per-answer fields here, then hands uWS a view of the
 * bytes, which uWS copies as they are (a JS string would be converted to UTF-8 on every `end`).
 *
 * A view is valid until the writer's next body. Single-threaded, not re-entrant: one per writer.
 */

const INITIAL_BYTES = 4096;
const ZERO_CODE = 0x30;

export class BodyBuffer {
  /** The bytes; replaced, not copied, when `room` grows them. */
  bytes = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  /** Views of the bytes by length, made once each: a response allocates no view. */
  private views: (Uint8Array | undefined)[] = [];

  /** The bytes, at least `size` of them. Growing loses what was written: call it before a body. */
  room(size: number): Buffer {
    if (size > this.bytes.length) {
      let grown = this.bytes.length;
      while (grown < size) grown *= 2;
      this.bytes = Buffer.allocUnsafeSlow(grown);
      this.views = [];
    }
    return this.bytes;
  }

  /** The body written, `[0, length)` of the bytes. */
  view(length: number): Uint8Array {
    return this.views[length] ?? (this.views[length] = this.bytes.subarray(0, length));
  }

  /** ASCII text (decimal digits, keys) at `at`, without encoding a copy. Returns the end. */
  ascii(text: string, at: number): number {
    const out = this.bytes;
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
    return at + text.length;
  }

  /** JSON of a number at `at` (JSON.stringify's text): digits for a safe integer, else its String. Returns the end. */
  number(value: number, at: number): number {
    if (Number.isSafeInteger(value) && value >= 0) {
      const out = this.bytes;
      let digits = 1;
      for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
      let v = value;
      for (let i = at + digits - 1; i >= at; i--) {
        out[i] = ZERO_CODE + (v % 10);
        v = Math.floor(v / 10);
      }
      return at + digits;
    }
    // Negative, fractional or huge: the general path (a number's String is ASCII; JSON has no NaN or Infinity).
    return this.ascii(Number.isFinite(value) ? String(value) : 'null', at);
  }
}
