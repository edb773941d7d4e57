/**
 * The external upstream quote service's gRPC side (spec 01, default :50053):
 * `tidepool.v1.QuoteService.StreamBatchQuotes` answered from the ExternalPoller's results.
 *
 * - Requests are validated by the local service's rules (engine/quote/quote-stream-request.ts:
 *   1..1,000 pairs, base58 32-byte mints that differ, 0 < amount ≤ u64, slippage ≤ 10,000,
 *   update_interval 0 → 1,000 ms, < 10 → 10 ms, pairs deduplicated by pairID); a malformed one
 *   ends at once with INVALID_ARGUMENT naming the field.
 * - Each accepted stream is an ExternalSubscription; its pairs are registered with the poller
 *   (refcounted) and released when the stream ends (cancel, error, server close).
 * - close(): every open stream ends with UNAVAILABLE, then tryShutdown, forced past the timeout.
 *   Idempotent.
 * - Each stream is a SERVER span under the caller's W3C trace context (a no-op while tracing is
 *   off), ended when the stream ends.
 */
import * as grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, type Span } from '@opentelemetry/api';

import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/logger.js';
import { grpcMetadataGetter } from '../obs/trace-context.js';
import { rpcAttributes, rpcSpanName, tracer } from '../obs/tracing.js';
import { loadTidepoolProto } from '../proto.js';
import { StreamRequestError, parseStreamRequest, type BatchQuoteRequestMessage } from '../quote/quote-stream-request.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import type { PolledQuote } from './external-quote.js';
import type { ExternalMetrics } from './external-metrics.js';
import type { ExternalPoller } from './external-poller.js';
import { ExternalSubscription } from './external-subscription.js';

export const DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS = 2000;
const STREAM_SPAN = rpcSpanName('QuoteService', 'StreamBatchQuotes');

/**
 * Keepalive: the server pings idle connections so a vanished aggregator frees its streams, and
 * accepts the clients' own pings (the aggregator pings every 10 s).
 */
export const EXTERNAL_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 5_000,
};

export interface ExternalQuoteServerOptions {
  poller: ExternalPoller;
  metrics: ExternalMetrics;
  /** Provider uptime stamped on each quote sent. */
  uptime: () => number | undefined;
  host?: string;
  shutdownTimeoutMs?: number;
  logger?: Logger;
}

type StreamCall = grpc.ServerWritableStream<BatchQuoteRequestMessage, UpstreamQuote>;

export class ExternalQuoteServer {
  private readonly poller: ExternalPoller;
  private readonly metrics: ExternalMetrics;
  private readonly uptime: () => number | undefined;
  private readonly host: string;
  private readonly shutdownTimeoutMs: number;
  private readonly log: Logger | undefined;
  private readonly server: grpc.Server;
  private readonly streams = new Map<ExternalSubscription, StreamCall>();
  private readonly spans = new Map<ExternalSubscription, Span>();
  /** Streams by the pairs they watch. */
  private readonly byPair = new Map<string, Set<ExternalSubscription>>();
  private readonly unlisten: () => void;
  private boundPort = 0;
  private closing = false;
  private closed: Promise<void> | undefined;

  constructor(options: ExternalQuoteServerOptions) {
    this.poller = options.poller;
    this.metrics = options.metrics;
    this.uptime = options.uptime;
    this.host = options.host ?? '127.0.0.1';
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS;
    this.log = options.logger;
    this.server = new grpc.Server(EXTERNAL_SERVER_OPTIONS);
    this.server.addService(loadTidepoolProto().QuoteService.service, {
      StreamBatchQuotes: (call: StreamCall) => this.handleStream(call),
    });
    this.metrics.activeStreams.set(0);
    this.unlisten = this.poller.onResult((pairId, result) => this.pollResult(pairId, result));
  }

  get port(): number {
    return this.boundPort;
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port: number): Promise<number> {
    const address = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${port}`;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
        if (err !== null) {
          reject(new TpError(ErrorCode.Io, `external quote stream cannot listen on ${address}: ${err.message}`, { cause: err }));
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
      for (const [sub, call] of this.streams) {
        this.release(sub);
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'the external quote service is shutting down' });
      }
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
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'the external quote service is shutting down' });
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
    const sub = new ExternalSubscription({
      request,
      sink: call,
      latest: (pairId) => this.poller.latest(pairId),
      uptime: this.uptime,
      metrics: this.metrics,
      ...(this.log === undefined ? {} : { logger: this.log }),
    });
    this.streams.set(sub, call);
    this.spans.set(sub, span);
    for (const pair of request.pairs) {
      this.poller.acquire(pair, request.slippageBps);
      let set = this.byPair.get(pair.pairId);
      if (set === undefined) this.byPair.set(pair.pairId, (set = new Set()));
      set.add(sub);
    }
    this.metrics.activeStreams.set(this.streams.size);
    const release = (): void => this.release(sub);
    call.on('cancelled', release);
    call.on('close', release);
    call.on('error', release);
    this.log?.debug({ pairs: request.pairs.length, intervalMs: request.intervalMs, slippageBps: request.slippageBps }, 'external quote stream opened');
    sub.start();
  }

  /** Frees a stream: its subscription and its references to its pairs. Idempotent. */
  private release(sub: ExternalSubscription): void {
    if (!this.streams.delete(sub)) return;
    sub.close();
    const span = this.spans.get(sub);
    this.spans.delete(sub);
    span?.setAttribute('tidepool.quotes_sent', sub.sent);
    span?.end();
    for (const pairId of sub.pairIds) {
      const set = this.byPair.get(pairId);
      set?.delete(sub);
      if (set?.size === 0) this.byPair.delete(pairId);
      this.poller.release(pairId);
    }
    this.metrics.activeStreams.set(this.streams.size);
    this.log?.debug({ sent: sub.sent }, 'external quote stream closed');
  }

  private pollResult(pairId: string, result: PolledQuote): void {
    const subs = this.byPair.get(pairId);
    if (subs === undefined) return;
    for (const sub of subs) sub.update(pairId, result);
  }
}
