/**
 * The local upstream quote service (spec 01, default :50052): gRPC
 * `tidepool.v1.QuoteService.StreamBatchQuotes` served from the quote service's pool cache with the
 * engine's exact swap math, through the same paths as GET /quote (QuoteHttpServer's cache path
 * behind the circuit breaker, its RPC fallback).
 *
 * - A malformed request ends at once with INVALID_ARGUMENT naming the field (quote-stream-request.ts).
 * - Each accepted stream is a QuoteSubscription (quote-subscription.ts): every pair quoted at once,
 *   pushed again when a pool of the pair changes or its interval passes, error quotes for pairs
 *   that cannot be quoted, bounded backpressure.
 * - Pool changes reach the streams through `PoolCache.onChange`, which fires on every store that
 *   moves a pair version (bus updates, the in-process scanner's sink, the refresher, RPC
 *   write-backs, context updates, evictions). The listener only flags; one setImmediate per burst
 *   then lets every stream compare the versions of its pairs.
 * - Each stream is a SERVER span (`tidepool.v1.QuoteService/StreamBatchQuotes`) under the caller's
 *   W3C trace context from the call metadata; a no-op while tracing is off.
 * - close(): every open stream ends with UNAVAILABLE ("shutting down"), then tryShutdown, and
 *   forceShutdown past `shutdownTimeoutMs`. Idempotent.
 */
import * as grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, type Span } from '@opentelemetry/api';

import type { PoolCache } from '../cache/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/logger.js';
import type { QuoteMetrics } from '../obs/quote-metrics.js';
import { grpcMetadataGetter } from '../obs/trace-context.js';
import { rpcAttributes, rpcSpanName, tracer } from '../obs/tracing.js';
import { loadTidepoolProto } from '../proto.js';
import { DEFAULT_GRPC_PORT } from './quote-config.js';
import { StreamRequestError, parseStreamRequest, type BatchQuoteRequestMessage } from './quote-stream-request.js';
import { QuoteSubscription, type StreamQuotePaths } from './quote-subscription.js';
import type { UpstreamQuote } from './quote-wire.js';

const STREAM_SPAN = rpcSpanName('QuoteService', 'StreamBatchQuotes');

/** How long close() lets streams finish before forcing the connections shut. */
export const DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS = 2000;

/**
 * Keepalive: the server pings every connection every 10 s (5 s to answer), so a dead TCP path (an
 * aggregator gone without a FIN) fails and frees its streams. grpc-js servers enforce no minimum
 * interval on the clients' own pings, so the aggregator's keepalive needs no permit here.
 */
export const QUOTE_STREAM_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

export interface QuoteStreamServerOptions {
  cache: PoolCache;
  /** The quote paths of GET /quote (the QuoteHttpServer). */
  paths: StreamQuotePaths;
  metrics: QuoteMetrics;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  shutdownTimeoutMs?: number;
  logger?: Logger;
}

type StreamCall = grpc.ServerWritableStream<BatchQuoteRequestMessage, UpstreamQuote>;

export class QuoteStreamServer {
  private readonly cache: PoolCache;
  private readonly paths: StreamQuotePaths;
  private readonly metrics: QuoteMetrics;
  private readonly host: string;
  private readonly shutdownTimeoutMs: number;
  private readonly log: Logger | undefined;
  private readonly server: grpc.Server;
  private readonly streams = new Map<QuoteSubscription, StreamCall>();
  /** Each open stream's SERVER span, ended when the stream is released. */
  private readonly spans = new Map<QuoteSubscription, Span>();
  private readonly unlisten: () => void;
  private changePending = false;
  private boundPort = 0;
  private closing = false;
  private closed: Promise<void> | undefined;

  constructor(options: QuoteStreamServerOptions) {
    this.cache = options.cache;
    this.paths = options.paths;
    this.metrics = options.metrics;
    this.host = options.host ?? '127.0.0.1';
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS;
    this.log = options.logger;
    this.server = new grpc.Server(QUOTE_STREAM_SERVER_OPTIONS);
    this.server.addService(loadTidepoolProto().QuoteService.service, {
      StreamBatchQuotes: (call: StreamCall) => this.handleStream(call),
    });
    this.metrics.streamActiveStreams.set(0);
    this.unlisten = this.cache.onChange(() => this.poolsChanged());
  }

  /** The bound port (after start). */
  get port(): number {
    return this.boundPort;
  }

  /** Streams open now. */
  get activeStreams(): number {
    return this.streams.size;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port = DEFAULT_GRPC_PORT): Promise<number> {
    const address = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${port}`;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
        if (err !== null) {
          reject(new TpError(ErrorCode.Io, `quote stream cannot listen on ${address}: ${err.message}`, { cause: err }));
          return;
        }
        this.boundPort = bound;
        resolve(bound);
      });
    });
  }

  /** Ends every stream with UNAVAILABLE, then shuts the server down (forced past the timeout). Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.unlisten();
      for (const [sub, call] of this.streams) this.endStream(sub, call, { code: grpc.status.UNAVAILABLE, details: 'the quote service is shutting down' });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.server.forceShutdown();
          resolve();
        }, this.shutdownTimeoutMs);
        this.server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    })();
    return this.closed;
  }

  private handleStream(call: StreamCall): void {
    if (this.closing) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'the quote service is shutting down' });
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, call.metadata, grpcMetadataGetter);
    const span = tracer().startSpan(STREAM_SPAN, { kind: SpanKind.SERVER, attributes: rpcAttributes('QuoteService', 'StreamBatchQuotes') }, parent);
    let request;
    try {
      request = parseStreamRequest(call.request);
    } catch (err) {
      const details = err instanceof StreamRequestError ? err.message : 'invalid request';
      span.setAttribute('rpc.grpc.status_code', grpc.status.INVALID_ARGUMENT);
      span.setStatus({ code: SpanStatusCode.ERROR, message: details });
      span.end();
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details });
      return;
    }
    span.setAttribute('tidepool.pair_count', request.pairs.length);
    const sub = new QuoteSubscription({
      request,
      sink: call,
      cache: this.cache,
      paths: this.paths,
      metrics: this.metrics,
      ...(this.log === undefined ? {} : { logger: this.log }),
    });
    this.streams.set(sub, call);
    this.spans.set(sub, span);
    this.metrics.streamActiveStreams.set(this.streams.size);
    const release = (): void => this.release(sub);
    call.on('cancelled', release);
    call.on('close', release);
    call.on('error', release);
    this.log?.debug({ pairs: sub.pairCount, intervalMs: request.intervalMs, slippageBps: request.slippageBps }, 'quote stream opened');
    sub.start();
  }

  private endStream(sub: QuoteSubscription, call: StreamCall, status: { code: grpc.status; details: string }): void {
    this.release(sub);
    call.emit('error', status);
  }

  /** Frees a stream's subscription (client cancel, server end). Idempotent. */
  private release(sub: QuoteSubscription): void {
    if (!this.streams.delete(sub)) return;
    sub.close();
    const span = this.spans.get(sub);
    this.spans.delete(sub);
    span?.setAttribute('tidepool.quotes_sent', sub.sent);
    span?.end();
    this.metrics.streamActiveStreams.set(this.streams.size);
    this.log?.debug({ sent: sub.sent }, 'quote stream closed');
  }

  /** PoolCache.onChange: flag, and let the streams look once the current burst of stores is done. */
  private poolsChanged(): void {
    if (this.changePending || this.streams.size === 0) return;
    this.changePending = true;
    setImmediate(() => {
      this.changePending = false;
      for (const sub of this.streams.keys()) sub.poolsChanged();
    });
  }
}
