/** Planners (spec 03): arbitrage, grid and DCA opportunities, and the TradeOpportunity message. */
export * from './trade-opportunity.js';
