import { describe, expect, it, vi } from 'vitest';

import { Prng } from '../dex/testing/prng.js';
import { SwapMode } from '../dex/index.js';
import { QuoteSource, quoteOfAnswer, type OwnedBodyParts, type Quote, type RouteQuote } from './quote-answer.js';
import { QuoteBodyWriter, quoteBodyParts, quoteToJson, routeBodyParts } from './answer-json.js';
import { slippageOf, type Slippage } from './slippage.js';

const U64_MAX = 0xffff_ffff_ffff_ffffn;

function randomQuote(rng: Prng): Quote {
  // Edges of the digit writers: one digit, powers of ten, and around 2^53 (digits from a double below it).
  const edges = [0n, 1n, 9n, 10n, 99n, 100n, 10n ** 15n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 10n ** 16n, 10n ** 19n, U64_MAX];
  const amount = (): bigint => (rng.chance(0.2) ? rng.pick(edges) : rng.bits(rng.int(1, 64)));
  const inputAmount = amount();
  const outputAmount = amount();
  const fee = amount();
  const pool = rng.pick(['7ugSdR8kNY4CfmF5ELFywiq2WoEn2B2MLSYTMGYRtnSX', 'pool with "quotes" and \\ and é', '']);
  const dex = rng.pick(['dexa_amm', 'dexa_clmm', 'dexb_dlmm', 'dexc_whirlpool']);
  const slot = amount();
  return {
    inputMint: 'So11111111111111111111111111111111111111112',
    outputMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    swapMode: rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut,
    inputAmount,
    outputAmount,
    pool,
    dex,
    priceImpact: rng.pick([0, 1e-12, 0.5, rng.float(), 1 / 3, 123.456, Number.NaN]),
    fee,
    slot,
    stateAgeMs: 0,
    contextSlot: 0n,
    slippageBps: 0,
    minOutputAmount: 0n,
    maxInputAmount: 0n,
    source: 'cache',
    route: [{ pool, dex, inputMint: 'So11111111111111111111111111111111111111112', outputMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', inAmount: inputAmount, outAmount: outputAmount, fee, feeMint: 'So11111111111111111111111111111111111111112', slot }],
  };
}

/** `q` with its per-answer fields as the writer is given them. */
function answered(q: Quote, stateAgeMs: number, contextSlot: bigint, s: Slippage): Quote {
  return { ...q, stateAgeMs, contextSlot, slippageBps: s.bps, minOutputAmount: s.minOutputAmount, maxInputAmount: s.maxInputAmount };
}

describe('QuoteBodyWriter', () => {
  it('writes exactly JSON.stringify(quoteToJson(q)) for any age, context slot and slippage, both modes', () => {
    const rng = new Prng(7);
    const writer = new QuoteBodyWriter();
    const decoder = new TextDecoder();
    const ages = [0, 1, 9, 10, 99_999, 2 ** 53 - 1, 2 ** 53, -5, 0.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -0];
    for (let i = 0; i < 400; i++) {
      const q = randomQuote(rng);
      const parts = quoteBodyParts(q);
      for (let k = 0; k < 3; k++) {
        const stateAgeMs = rng.chance(0.5) ? rng.pick(ages) : rng.int(0, 10_000_000);
        const contextSlot = rng.chance(0.1) ? U64_MAX : rng.bits(rng.int(1, 40));
        const bps = rng.pick([0, 1, 50, 9_999, 10_000, rng.int(0, 10_000)]);
        const slippage = slippageOf(q.swapMode, q.inputAmount, q.outputAmount, bps);
        const bytes = writer.write(parts, stateAgeMs, contextSlot.toString(), slippage);
        expect(decoder.decode(bytes)).toBe(JSON.stringify(quoteToJson(answered(q, stateAgeMs, contextSlot, slippage))));
      }
    }
  });

  it('grows for a body larger than its buffer and reuses one view per length', () => {
    const writer = new QuoteBodyWriter();
    const q = randomQuote(new Prng(1));
    const big = { ...q, pool: 'x'.repeat(10_000) };
    const s = slippageOf(q.swapMode, q.inputAmount, q.outputAmount, 50);
    const text = new TextDecoder().decode(writer.write(quoteBodyParts(big), 5, '77', s));
    expect(text).toBe(JSON.stringify(quoteToJson(answered(big, 5, 77n, s))));
    const parts = quoteBodyParts(q);
    expect(writer.write(parts, 5, '77', s)).toBe(writer.write(parts, 6, '77', s));
  });

  it('writes a new context slot without encoding it (no ArrayBuffer per slot under pool updates)', () => {
    const writer = new QuoteBodyWriter();
    const q = randomQuote(new Prng(3));
    const parts = quoteBodyParts(q);
    const s = slippageOf(q.swapMode, q.inputAmount, q.outputAmount, 50);
    const encode = vi.spyOn(TextEncoder.prototype, 'encode');
    try {
      for (let slot = 1_000_000n; slot < 1_000_050n; slot++) {
        const text = new TextDecoder().decode(writer.write(parts, 3, slot.toString(), s));
        expect(text).toBe(JSON.stringify(quoteToJson(answered(q, 3, slot, s))));
      }
      expect(encode).not.toHaveBeenCalled();
    } finally {
      encode.mockRestore();
    }
  });
});

describe('routeBodyParts', () => {
  it('writes the body of the route\'s quote, one and two hops, as quoteBodyParts of quoteOfAnswer does', () => {
    const rng = new Prng(11);
    const writer = new QuoteBodyWriter();
    const decoder = new TextDecoder();
    for (let i = 0; i < 200; i++) {
      const q = randomQuote(rng);
      const hop = q.route[0]!;
      const hops = rng.chance(0.5) ? [hop] : [hop, { ...hop, pool: 'second "hop" é', inputMint: hop.outputMint, outputMint: 'mint2', feeMint: 'mint2' }];
      const route: RouteQuote = {
        mode: q.swapMode,
        inputMint: q.inputMint,
        outputMint: hops[hops.length - 1]!.outputMint,
        inputAmount: q.inputAmount,
        outputAmount: q.outputAmount,
        priceImpact: q.priceImpact,
        hops,
        slot: q.slot,
      };
      const slippage = slippageOf(route.mode, route.inputAmount, route.outputAmount, 50);
      const answer = { ok: true as const, quote: route, source: QuoteSource.Cache, stateAgeMs: 3, contextSlot: 99n, slippage, body: undefined };
      const parts = routeBodyParts(route, QuoteSource.Cache);
      expect(decoder.decode(writer.write(parts, 3, '99', slippage))).toBe(JSON.stringify(quoteToJson(quoteOfAnswer(answer))));
      const direct = quoteBodyParts(quoteOfAnswer(answer));
      expect(parts.length).toBe(direct.length);
      expect(parts.bytes.subarray(0, parts.length)).toEqual(direct.bytes.subarray(0, direct.length));
    }
  });

  it('writes a body into the bytes of the one it replaces when they have room, else into new bytes', () => {
    const rng = new Prng(5);
    const writer = new QuoteBodyWriter();
    const decoder = new TextDecoder();
    const q = randomQuote(rng);
    const hop = q.route[0]!;
    const route = (pool: string): RouteQuote => ({
      mode: q.swapMode,
      inputMint: q.inputMint,
      outputMint: hop.outputMint,
      inputAmount: q.inputAmount,
      outputAmount: q.outputAmount,
      priceImpact: q.priceImpact,
      hops: [{ ...hop, pool }],
      slot: q.slot,
    });
    const slippage = slippageOf(q.swapMode, q.inputAmount, q.outputAmount, 50);
    const owned: OwnedBodyParts = { bytes: new Uint8Array(0), length: 0, headEnd: 0, revision: 0 };
    const first = routeBodyParts(route('a'.repeat(40)), QuoteSource.Cache, owned);
    expect(first).toBe(owned); // written into the owner's parts
    expect(first.revision).toBe(1);
    expect(first.bytes.length).toBeGreaterThan(first.length);
    const firstBytes = first.bytes;
    // A body of the same size or smaller: the same bytes, the new body's JSON.
    const smaller = route('b'.repeat(30));
    const second = routeBodyParts(smaller, QuoteSource.Cache, owned);
    expect(second.bytes).toBe(firstBytes);
    const answer = { ok: true as const, quote: smaller, source: QuoteSource.Cache, stateAgeMs: 3, contextSlot: 99n, slippage, body: undefined };
    expect(decoder.decode(writer.write(second, 3, '99', slippage))).toBe(JSON.stringify(quoteToJson(quoteOfAnswer(answer))));
    // Larger than the room: new bytes, the replaced ones untouched.
    const before = Uint8Array.from(firstBytes);
    const third = routeBodyParts(route('c'.repeat(firstBytes.length)), QuoteSource.Cache, owned);
    expect(third.bytes).not.toBe(firstBytes);
    expect(firstBytes).toEqual(before);
    // Without an owner: new parts each time.
    expect(routeBodyParts(smaller, QuoteSource.Cache)).not.toBe(routeBodyParts(smaller, QuoteSource.Cache));
  });
});
