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
});
