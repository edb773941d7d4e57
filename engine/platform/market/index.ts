/** Market data (spec 03): MarketEvent and PriceUpdate messages, the market scanner. */
export * from './market-event.js';
