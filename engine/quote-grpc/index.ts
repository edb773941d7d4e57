/**
 * engine/quote-grpc: the quote engine over gRPC (tidepool.v1.QuoteService: StreamBatchQuotes,
 * GetQuote, GetQuotes), and the stream admission, pacing and budgets that the external quote
 * service and the aggregator reuse for their own streams.
 */
export { DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS } from './stream-calls.js';
export { DEFAULT_GRPC_PORT, QUOTE_STREAM_SERVER_OPTIONS, QuoteStreamServer, type QuoteStreamServerOptions } from './quote-stream-server.js';
export { QuoteSubscription, type QuoteSink } from './quote-subscription.js';
export {
  DEFAULT_STREAM_INTERVAL_MS,
  MAX_STREAM_PAIRS,
  MIN_STREAM_INTERVAL_MS,
  StreamRequestError,
  parseStreamRequest,
  quoteErrorOf,
  type StreamPair,
  type StreamRequest,
} from './quote-stream-request.js';
export { StreamCalls } from './stream-calls.js';
export { DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT } from './stream-budget.js';
export {
  DEFAULT_MAX_PAIRS_PER_STREAM,
  DEFAULT_MAX_STREAMS,
  DEFAULT_MAX_STREAMS_PER_CLIENT,
  DEFAULT_MIN_STREAM_INTERVAL_MS,
  DEFAULT_STREAM_LIMITS,
  StreamAdmission,
  checkStreamShape,
  clientOfPeer,
  streamClientKey,
  isStreamRefusal,
  type StreamLimits,
  type StreamRefusal,
  type StreamTicket,
} from './stream-limits.js';
export { StreamPacer, type PacedWork } from './stream-pacer.js';
