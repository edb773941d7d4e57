import { afterAll, describe, expect, it, vi } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { OwnedBodyParts, QuoteAnswer } from '../quote/quote-answer.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import { slippageOf } from '../quote/slippage.js';
import { ValidatedPubkeys } from '../quote/index.js';
import { SwapApiBodyWriter, swapApiResponseOf } from './swap-api-body.js';
import { isSwapApiError, parseSwapApiQuery } from './swap-api-quote.js';
import { FakeClock, manualSimulator, storePool } from '../quote/testing.js';

const sim = manualSimulator(7);
const mintOf = (symbol: string): string => sim.chain.tokens().find((t) => t.symbol === symbol)!.mint;
afterAll(async () => {
  await sim.close();
});

const decoder = new TextDecoder();

/** The body as the route wrote it before it wrote bytes (a string per answer): the reference. */
function stringBodyOf(answer: QuoteAnswer, timeTakenSeconds: number): string {
  const full = swapApiResponseOf(answer, timeTakenSeconds);
  const j = JSON.stringify;
  const head = `{"inputMint":${j(full.inputMint)},"inAmount":${j(full.inAmount)},"outputMint":${j(full.outputMint)},"outAmount":${j(full.outAmount)},"otherAmountThreshold":"`;
  const mode = `","swapMode":${j(full.swapMode)},"slippageBps":`;
  const tail = `,"platformFee":null,"priceImpactPct":${j(full.priceImpactPct)},"routePlan":${j(full.routePlan)},"contextSlot":`;
  return `${head}${full.otherAmountThreshold}${mode}${answer.slippage.bps}${tail}${Number(answer.contextSlot)},"timeTaken":${JSON.stringify(timeTakenSeconds)}}`;
}

function filledEngine(): QuoteEngine {
  const cache = new PoolCache({ now: new FakeClock().now });
  let slot = 10n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  return new QuoteEngine({ cache, hybridMode: false, clock: () => 0 });
}

/** The cache answer of a swap API query, as the route asks the engine for it. */
function answerOf(engine: QuoteEngine, query: string): QuoteAnswer {
  const request = parseSwapApiQuery(query, 50, new ValidatedPubkeys());
  if (isSwapApiError(request)) throw new Error(`bad query ${query}: ${request.body}`);
  const answer = engine.quote(request);
  if (answer instanceof Promise || !answer.ok) throw new Error(`expected a cache answer to ${query}`);
  return answer;
}

const TIMES = [0, 0.000012345, 1e-7, 2.5, 1 / 3, 12, -0];

describe('SwapApiBodyWriter', () => {
  it('writes a new context slot without encoding it (no ArrayBuffer per slot under pool updates)', () => {
    const engine = filledEngine();
    const writer = new SwapApiBodyWriter();
    const answer = answerOf(engine, `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1234567891`);
    writer.write(answer, 0.001);
    const encode = vi.spyOn(TextEncoder.prototype, 'encode');
    try {
      for (let slot = 1_000_000n; slot < 1_000_050n; slot++) {
        const moved = { ...answer, contextSlot: slot };
        expect(decoder.decode(writer.write(moved, 0.001))).toBe(stringBodyOf(moved, 0.001));
      }
      expect(encode).not.toHaveBeenCalled();
    } finally {
      encode.mockRestore();
    }
  });

  it('writes byte for byte the string form and JSON.stringify(swapApiResponseOf) of every query the route takes', () => {
    const engine = filledEngine();
    const writer = new SwapApiBodyWriter();
    const ANCHOR = mintOf('ANCHOR');
    const CORAL = mintOf('CORAL');
    const queries = [
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1234567891`,
      `inputMint=${USDC_MINT}&outputMint=${WSOL_MINT}&amount=150000001&swapMode=ExactOut`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&slippageBps=0`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&swapMode=ExactOut&slippageBps=10000`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&slippageBps=333&platformFeeBps=3&maxAccounts=20&asLegacyTransaction=true&instructionVersion=V2&foo=bar`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&onlyDirectRoutes=true&restrictIntermediateTokens=false`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&dexes=Raydium+CLMM,Whirlpool&dexes=Meteora%20DLMM`,
      `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000&excludeDexes=Raydium`,
      // Two hops: the market has no ANCHOR/CORAL pool.
      `inputMint=${ANCHOR}&outputMint=${CORAL}&amount=1000000000`,
      `inputMint=${ANCHOR}&outputMint=${CORAL}&amount=1000000&swapMode=ExactOut&slippageBps=75`,
    ];
    let twoHops = 0;
    for (const query of queries) {
      // Twice: the route's parts are made by the first write and kept for the second.
      for (let repeat = 0; repeat < 2; repeat++) {
        const answer = answerOf(engine, query);
        if (answer.quote.hops.length === 2) twoHops++;
        for (const t of TIMES) {
          const text = decoder.decode(writer.write(answer, t));
          expect(text).toBe(stringBodyOf(answer, t));
          expect(text).toBe(JSON.stringify(swapApiResponseOf(answer, t)));
        }
      }
    }
    expect(twoHops).toBe(4);
  });

  it('writes every tolerance and context slot of a memoized route, and an answer without a memo body', () => {
    const engine = filledEngine();
    const writer = new SwapApiBodyWriter();
    for (const mode of ['ExactIn', 'ExactOut']) {
      const answer = answerOf(engine, `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=987654321&swapMode=${mode}`);
      const q = answer.quote;
      for (const bps of [0, 1, 50, 9_999, 10_000]) {
        for (const contextSlot of [0n, 9n, 10n, 123_456_789n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
          const variant: QuoteAnswer = { ...answer, contextSlot, slippage: slippageOf(q.mode, q.inputAmount, q.outputAmount, bps) };
          // An RPC or external answer has no memo body: its parts are made for it.
          for (const a of [variant, { ...variant, body: undefined }]) {
            expect(decoder.decode(writer.write(a, 0.0005))).toBe(stringBodyOf(a, 0.0005));
          }
        }
      }
    }
  });

  it('writes every body into one reused buffer, a view of it, and makes a route`s parts once', () => {
    const engine = filledEngine();
    const writer = new SwapApiBodyWriter();
    const answer = answerOf(engine, `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1234567891`);
    let routeReads = 0;
    const counted: QuoteAnswer = Object.defineProperty({ ...answer }, 'quote', {
      get: () => {
        routeReads++;
        return answer.quote;
      },
    });
    const first = writer.write(counted, 0.25);
    const firstText = decoder.decode(first);
    const second = writer.write(counted, 0.75);
    expect(second).toBeInstanceOf(Uint8Array);
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteOffset).toBe(0);
    // The first view now shows the second body: the bytes were written over, not allocated anew.
    expect(decoder.decode(first)).toBe(decoder.decode(second));
    expect(decoder.decode(second)).toBe(firstText.replace('"timeTaken":0.25}', '"timeTaken":0.75}'));
    expect(routeReads).toBe(1);
  });

  it("makes a memoized route's parts again when the memo rewrites its entry", () => {
    const engine = filledEngine();
    const writer = new SwapApiBodyWriter();
    const answer = answerOf(engine, `inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1234567891`);
    const first = { ...answer };
    const before = decoder.decode(writer.write(first, 0));
    expect(decoder.decode(writer.write(first, 0))).toBe(before);
    // The memo rewrites the entry in place: the same body parts, a new revision, another route.
    const body = first.body as OwnedBodyParts;
    body.revision++;
    const route = first.quote;
    const rewritten = { ...first, quote: { ...route, outputAmount: route.outputAmount - 1n, hops: [{ ...route.hops[0]!, outAmount: route.hops[0]!.outAmount - 1n }] } };
    const after = decoder.decode(writer.write(rewritten, 0));
    expect(after).toBe(JSON.stringify(swapApiResponseOf(rewritten, 0)));
    expect(after).not.toBe(before);
  });
});
