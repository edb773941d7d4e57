import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { decodeMarketEvent, decodePriceUpdate, encodeMarketEvent, encodePriceUpdate, marketEventSubject, priceUpdateSubject, type MarketEvent, type PriceUpdate } from './market-event.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

const event: MarketEvent = {
  version: 1, id: `${POOL}:10:sig:pool_update`, type: 'pool_update', protocol: 'dexa_amm', poolAddress: POOL,
  tokenA: SOL, tokenB: USDC, timestamp: 1_700_000_000_000, slot: '10', data: { reserveA: '1', reserveB: '2' },
};
const price: PriceUpdate = {
  version: 1, token: SOL, quoteToken: USDC, sources: [{ dex: 'dexa_amm', pool: POOL, price: 150, liquidity: 3e6, volume24h: 0 }],
  bestBid: 149.625, bestAsk: 150.375, spread: (150.375 - 149.625) / 150, timestamp: 1, slot: '10',
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isTpError(err) ? err.code : 'other';
  }
  return undefined;
}

describe('MarketEvent and PriceUpdate v1', () => {
  it('round-trip and name their subjects', () => {
    expect(decodeMarketEvent(encodeMarketEvent(event))).toEqual(event);
    expect(decodePriceUpdate(encodePriceUpdate(price))).toEqual(price);
    expect(marketEventSubject('dexa_amm', 'large_swap')).toBe('market.events.dexa_amm.large_swap');
    expect(priceUpdateSubject(SOL, 'T_')).toBe(`T_market.events.prices.${SOL}`);
  });

  it('refuse what breaks the schema or the spread rule', () => {
    expect(code(() => encodeMarketEvent({ ...event, type: 'big' as never }))).toBe(ErrorCode.MessageInvalid);
    expect(code(() => encodeMarketEvent({ ...event, slot: 10 as never }))).toBe(ErrorCode.MessageInvalid);
    expect(code(() => decodeMarketEvent('not json'))).toBe(ErrorCode.MessageInvalid);
    expect(code(() => encodePriceUpdate({ ...price, spread: 0.5 }))).toBe(ErrorCode.MessageInvalid);
    expect(code(() => encodePriceUpdate({ ...price, sources: [] }))).toBe(ErrorCode.MessageInvalid);
  });

  it('refuse the fields the market scanner writes when they are not what they say: a negative reserve, a price that is no number', () => {
    const decode = (data: Record<string, unknown>, type = 'pool_update') => code(() => decodeMarketEvent(JSON.stringify({ ...event, type, data })));
    expect(decode({ reserveA: '-5', reserveB: '2' })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ reserveA: '1', reserveB: '18446744073709551616000' })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ reserveA: '1', reserveB: '2', price: 'NaN' })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ reserveA: '1', reserveB: '2', price: null })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ reserveA: '1', reserveB: '2', price: -1 })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ reserveA: '1', reserveB: '2', fee: 2 })).toBe(ErrorCode.MessageInvalid);
    expect(decode({ amountIn: '-1', amountOut: '2' }, 'large_swap')).toBe(ErrorCode.MessageInvalid);
    expect(decode({ inputMint: 'not a key' }, 'large_swap')).toBe(ErrorCode.MessageInvalid);
    expect(decode({ kind: 'drain', changeBps: 5 }, 'liquidity_change')).toBe(ErrorCode.MessageInvalid);
    // Good values and fields of its own still pass: data stays free-form.
    expect(decode({ reserveA: '1', reserveB: '2', price: 150.5, fee: 0.0025, liquidity: '340282366920938463463374607431768211455', note: 'x' })).toBeUndefined();
    expect(decode({ amountIn: '5', amountOut: '7', priceBefore: 1, priceAfter: 2, priceChangeBps: -30, shareBps: 12 }, 'large_swap')).toBeUndefined();
  });
});
