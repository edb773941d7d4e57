/** engine/sim/price-api: the simulator's reference prices in the Price API v3 shape (`GET /price/v3`). */
export { PriceApi, mountPriceApi, parsePriceIds, MAX_PRICE_IDS, PRICE_API_PATHS, type PriceApiOptions, type PriceEntry, type PriceResponse } from './price-api.js';
