/**
 * engine/swap-builder: ready-to-sign swaps from the public swap API's quotes (Jupiter Swap API v1
 * `POST /swap`, `POST /swap-instructions`), built on the pools' state read again and re-validated
 * against the quote. The HTTP paths are engine/quote-http's; engine/quote-service wires a builder.
 */
export { DEFAULT_MAX_QUOTE_AGE_SLOTS, SwapBuilder, type BuiltSwap, type SwapBuilderOptions } from './swap-builder.js';
