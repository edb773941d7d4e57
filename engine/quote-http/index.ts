/**
 * engine/quote-http: the quote engine over HTTP (uWebSockets.js): GET /quote, the /v1 REST API,
 * the public swap API's GET /swap/v1/quote, probes; request limits, bearer auth, error bodies.
 */
export { STATUS, httpErrorOf, httpErrorOfFailure, type HttpError } from './http-errors.js';
export { parseQuoteQuery } from './quote-query.js';
export { QuoteHttpServer, type QuoteHttpServerOptions } from './quote-http-server.js';
export { MAX_SWAP_BODY_BYTES, type SwapTransactions } from './swap-api-routes.js';
