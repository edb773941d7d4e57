/**
 * The body of a successful `GET /swap/v1/quote` (engine/swap-api `QuoteResponse`, Jupiter's shape),
 * written as GET /quote writes its own (engine/quote answer-json.ts): as bytes into one reused
 * buffer, from parts preformatted once per memoized route, so a response builds no string and uWS
 * sends the bytes as they are.
 *
 * A body is `head` threshold `mode` slippageBps `tail` contextSlot `,"timeTaken":` seconds `}`:
 * the per-answer fields (threshold and slippage follow the request's tolerance, the slot and time
 * the moment) are written per response, the rest once per route. The bytes are exactly
 * `JSON.stringify(swapApiResponseOf(answer, seconds))` (swap-api-body.test.ts).
 */
import { BodyBuffer, type QuoteAnswer, type QuoteBodyParts, type RouteQuote } from '../quote/index.js';
import { formatFraction, labelOfDex, type QuoteResponse, type RoutePlanStep } from '../swap-api/index.js';

/** The swap API body of an answer as data; `timeTakenSeconds` is the engine's time. */
export function swapApiResponseOf(answer: QuoteAnswer, timeTakenSeconds: number, q: RouteQuote = answer.quote): QuoteResponse {
  const routePlan: RoutePlanStep[] = new Array(q.hops.length);
  for (let i = 0; i < q.hops.length; i++) {
    const h = q.hops[i]!;
    routePlan[i] = {
      swapInfo: {
        ammKey: h.pool,
        label: labelOfDex(h.dex),
        inputMint: h.inputMint,
        outputMint: h.outputMint,
        inAmount: h.inAmount.toString(),
        outAmount: h.outAmount.toString(),
        feeAmount: h.fee.toString(),
        feeMint: h.feeMint,
      },
      percent: 100,
      bps: 10_000,
    };
  }
  const exactIn = q.mode === 'ExactIn';
  return {
    inputMint: q.inputMint,
    inAmount: q.inputAmount.toString(),
    outputMint: q.outputMint,
    outAmount: q.outputAmount.toString(),
    otherAmountThreshold: exactIn ? answer.slippage.minOutputText : answer.slippage.maxInputText,
    swapMode: q.mode,
    slippageBps: answer.slippage.bps,
    platformFee: null,
    priceImpactPct: formatFraction(q.priceImpact),
    routePlan,
    contextSlot: Number(answer.contextSlot),
    timeTaken: timeTakenSeconds,
  };
}

const utf8 = new TextEncoder();
/** `mode` of an exact-in and of an exact-out route. */
const EXACT_IN_MODE = utf8.encode('","swapMode":"ExactIn","slippageBps":');
const EXACT_OUT_MODE = utf8.encode('","swapMode":"ExactOut","slippageBps":');
const TIME_TAKEN = utf8.encode(',"timeTaken":');
const CLOSE_BRACE = 0x7d;
/** Room for a JSON number (slippage basis points, seconds): String of a double is at most 24 characters. */
const NUMBER_ROOM = 24;

/**
 * The parts of a route's body that only the route decides, UTF-8. One per memo body, rewritten in
 * place when the memo entry is (its bytes reused when the new text fits), as the memo body is.
 */
interface SwapApiBodyParts {
  /** The memo body's revision they hold (QuoteBodyParts.revision). */
  revision: number;
  /** The route's mode is ExactIn (its threshold is the minimum output). */
  exactIn: boolean;
  /** `{"inputMint":…,"inAmount":…,"outputMint":…,"outAmount":…,"otherAmountThreshold":"` in [0, headLength), spare room after. */
  head: Uint8Array;
  headLength: number;
  /** `,"platformFee":null,"priceImpactPct":…,"routePlan":[…],"contextSlot":` in [0, tailLength), spare room after. */
  tail: Uint8Array;
  tailLength: number;
}

const NO_BYTES = new Uint8Array(0);

/**
 * `text` as UTF-8 at the start of `bytes` when it fits, else of new bytes with room to spare (a
 * quarter more, as a memo body's own bytes, engine/quote answer-json.ts); the bytes and the length
 * written. Sized by the text's UTF-8 length, not its worst case (3 bytes a UTF-16 unit): the texts
 * are ASCII (mints, digits, JSON), and the worst case kept ~1.7 KB more than needed per memoized
 * route (the quote suite's 1,568 routes: ~2.7 MB).
 */
function encodeReusing(text: string, bytes: Uint8Array): [Uint8Array, number] {
  const done = utf8.encodeInto(text, bytes);
  if (done.read === text.length) return [bytes, done.written];
  const length = Buffer.byteLength(text, 'utf8');
  const grown = new Uint8Array(length + (length >> 2) + 64);
  return [grown, utf8.encodeInto(text, grown).written];
}

/**
 * By the memo entry's body parts, which stay with their key while the entry is rewritten in place
 * (engine/quote/memo-entry.ts): the revision tells whether they still hold the route. Answers
 * without a body (RPC, external) are formatted whole each time.
 */
const bodyParts = new WeakMap<QuoteBodyParts, SwapApiBodyParts>();

/** The parts of `answer`'s route: kept ones when its memo body still holds that route, else written now. */
function partsOf(answer: QuoteAnswer): SwapApiBodyParts {
  const body = answer.body;
  const known = body === undefined ? undefined : bodyParts.get(body);
  if (known !== undefined && known.revision === body!.revision) return known;
  // Read once: a cache answer builds its route on every read.
  const q = answer.quote;
  const full = swapApiResponseOf(answer, 0, q);
  const j = JSON.stringify;
  const exactIn = q.mode === 'ExactIn';
  const parts = known ?? { revision: -1, exactIn, head: NO_BYTES, headLength: 0, tail: NO_BYTES, tailLength: 0 };
  parts.revision = body?.revision ?? -1;
  parts.exactIn = exactIn;
  [parts.head, parts.headLength] = encodeReusing(
    `{"inputMint":${j(full.inputMint)},"inAmount":${j(full.inAmount)},"outputMint":${j(full.outputMint)},"outAmount":${j(full.outAmount)},"otherAmountThreshold":"`,
    parts.head,
  );
  [parts.tail, parts.tailLength] = encodeReusing(`,"platformFee":null,"priceImpactPct":${j(full.priceImpactPct)},"routePlan":${j(full.routePlan)},"contextSlot":`, parts.tail);
  if (body !== undefined && known === undefined) bodyParts.set(body, parts);
  return parts;
}

/**
 * Writes swap API bodies into one reused buffer. The returned view is valid until the next `write`
 * (uWS copies what it sends before `end` returns). One writer per server; not re-entrant.
 */
export class SwapApiBodyWriter {
  private readonly out = new BodyBuffer();

  /** The body of `answer`; `timeTakenSeconds` is the engine's time. */
  write(answer: QuoteAnswer, timeTakenSeconds: number): Uint8Array {
    const p = partsOf(answer);
    const slippage = answer.slippage;
    const threshold = p.exactIn ? slippage.minOutputText : slippage.maxInputText;
    const mode = p.exactIn ? EXACT_IN_MODE : EXACT_OUT_MODE;
    const w = this.out;
    const out = w.room(p.head.length + threshold.length + mode.length + NUMBER_ROOM + p.tail.length + NUMBER_ROOM + TIME_TAKEN.length + NUMBER_ROOM + 1);
    // Each part is copied whole, its spare room too (one memcpy, no view per response); what
    // follows it is written over that room.
    out.set(p.head, 0);
    let at = w.ascii(threshold, p.headLength);
    out.set(mode, at);
    at = w.number(slippage.bps, at + mode.length);
    out.set(p.tail, at);
    at += p.tailLength;
    // A JSON number, as the API writes it (swapApiResponseOf's `Number`), in digits: no string per slot.
    at = w.number(Number(answer.contextSlot), at);
    out.set(TIME_TAKEN, at);
    at = w.number(timeTakenSeconds, at + TIME_TAKEN.length);
    out[at++] = CLOSE_BRACE;
    return w.view(at);
  }
}
