import { describe, expect, it } from 'vitest';

import { hopFeeInInputUnits, parseErrorBody, parseQuoteResponse, ProviderResponseError, type ProviderHop } from './provider-response.js';
import { BONK, POOL_A, POOL_B, USDC, WSOL } from './testing/fake-provider.js';

const asked = { inputMint: WSOL, outputMint: BONK, amount: 1_000_000_000n };

function body(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    inputMint: WSOL,
    inAmount: '1000000000',
    outputMint: BONK,
    outAmount: '5000000',
    otherAmountThreshold: '4975000',
    swapMode: 'ExactIn',
    slippageBps: 50,
    platformFee: null,
    priceImpactPct: '0.0031',
    routePlan: [
      { swapInfo: { ammKey: POOL_A, label: 'Whirlpool', inputMint: WSOL, outputMint: USDC, inAmount: '1000000000', outAmount: '150000000', feeAmount: '400000', feeMint: WSOL }, percent: 100, bps: 10000 },
      { swapInfo: { ammKey: POOL_B, label: 'Raydium CLMM', inputMint: USDC, outputMint: BONK, inAmount: '150000000', outAmount: '5000000' }, percent: null, bps: 10000 },
    ],
    contextSlot: 312345678,
    timeTaken: 0.002,
    ...over,
  };
}

const parse = (b: unknown, raw?: string) => parseQuoteResponse(raw ?? JSON.stringify(b), asked);

describe('parseQuoteResponse', () => {
  it('reads a two-hop answer, fees optional', () => {
    const q = parse(body());
    expect(q).toMatchObject({ inAmount: 1_000_000_000n, outAmount: 5_000_000n, otherAmountThreshold: 4_975_000n, priceImpact: 0.0031, contextSlot: 312_345_678n });
    expect(q.hops.map((h) => [h.ammKey, h.label, h.feeAmount])).toEqual([[POOL_A, 'Whirlpool', 400_000n], [POOL_B, 'Raydium CLMM', undefined]]);
  });

  it('keeps u64 amounts and a contextSlot above 2^53 exact', () => {
    const raw = JSON.stringify(body({ outAmount: '18446744073709551615' })).replace('312345678', '9007199254740993');
    const q = parse(undefined, raw);
    expect(q.outAmount).toBe(18_446_744_073_709_551_615n);
    expect(q.contextSlot).toBe(9_007_199_254_740_993n);
  });

  it('reads a missing contextSlot as 0', () => {
    const b = body();
    delete b['contextSlot'];
    expect(parse(b).contextSlot).toBe(0n);
  });

  it.each([
    ['not JSON', undefined, '{"inputMint":', /not JSON/],
    ['an array', undefined, '[]', /not an object/],
    ['a numeric outAmount', body({ outAmount: 5000000 }), undefined, /outAmount/],
    ['a negative amount', body({ otherAmountThreshold: '-1' }), undefined, /otherAmountThreshold/],
    ['an amount above u64', body({ outAmount: '18446744073709551616' }), undefined, /outAmount is above/],
    ['a bad priceImpactPct', body({ priceImpactPct: 'abc' }), undefined, /priceImpactPct/],
    ['another pair', body({ outputMint: USDC }), undefined, /another pair/],
    ['another amount', body({ inAmount: '1' }), undefined, /not the amount asked/],
    ['an empty routePlan', body({ routePlan: [] }), undefined, /routePlan/],
    ['a swapInfo without ammKey', body({ routePlan: [{ swapInfo: { label: 'x', inputMint: WSOL, outputMint: BONK, inAmount: '1', outAmount: '1' } }] }), undefined, /ammKey/],
    ['a plan ending elsewhere', body({ routePlan: [body()['routePlan'] as unknown[]][0]!.slice(0, 1) }), undefined, /end at outputMint/],
    ['a bad contextSlot', body({ contextSlot: -5 }), undefined, /contextSlot/],
  ])('refuses %s', (_name, b, raw, why) => {
    expect(() => parse(b, raw)).toThrow(ProviderResponseError);
    expect(() => parse(b, raw)).toThrow(why as RegExp);
  });
});

describe('hopFeeInInputUnits', () => {
  const hop: ProviderHop = { ammKey: POOL_A, label: 'Raydium CLMM', inputMint: WSOL, outputMint: USDC, inAmount: 1000n, outAmount: 1800n };
  it('is the fee as given when charged in the input mint (or when feeMint is absent)', () => {
    expect(hopFeeInInputUnits({ ...hop, feeAmount: 3n, feeMint: WSOL })).toBe(3n);
    expect(hopFeeInInputUnits({ ...hop, feeAmount: 3n })).toBe(3n);
  });
  it('converts a fee charged in the output mint at the hop\'s own rate', () => {
    // 200 of the 2,000 gross output went to the fee: a tenth of the input, 100.
    expect(hopFeeInInputUnits({ ...hop, feeAmount: 200n, feeMint: USDC })).toBe(100n);
  });
  it('is 0 when unknown', () => {
    expect(hopFeeInInputUnits(hop)).toBe(0n);
    expect(hopFeeInInputUnits({ ...hop, feeAmount: 5n, feeMint: BONK })).toBe(0n);
  });
});

describe('parseErrorBody', () => {
  it('reads the provider\'s error body and survives anything else', () => {
    expect(parseErrorBody('{"error":"Could not find any route","errorCode":"COULD_NOT_FIND_ANY_ROUTE"}')).toEqual({ errorCode: 'COULD_NOT_FIND_ANY_ROUTE', message: 'Could not find any route' });
    expect(parseErrorBody('<html>bad gateway</html>')).toEqual({ errorCode: '', message: '<html>bad gateway</html>' });
    expect(parseErrorBody('null')).toEqual({ errorCode: '', message: 'null' });
  });
});
