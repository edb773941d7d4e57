/**
 * The external upstream quote service's gRPC side (spec 01, default :50053):
 * `tidepool.v1.QuoteService.StreamBatchQuotes` answered from the ExternalPoller's results.
 *
 * - Requests are validated by the local service's rules (engine/quote-grpc/quote-stream-request.ts:
 *   1..1,000 pairs, base58 32-byte mints that differ, 0 < amount ≤ u64, slippage ≤ 10,000,
 *   update_interval 0 → 1,000 ms, < 10 → 10 ms, pairs deduplicated by pairID); a malformed one
 *   ends at once with INVALID_ARGUMENT naming the field.
 * - Each accepted stream is an ExternalSubscription; its pairs are registered with the poller
 *   (refcounted) and released when the stream ends (cancel, error, server close).
 * - close(): every open stream ends with UNAVAILABLE, then tryShutdown, forced past the timeout.
 *   Idempotent.
 * - Each stream is a SERVER span under the caller's W3C trace context (a no-op while tracing is
 *   off), ended when the stream ends.
 * - The call handling, tracing and shutdown are the local service's (engine/quote-grpc/stream-calls.ts);
 *   what is this service's own is the subscription and the pairs registered with the poller.
 */
import type * as grpc from '@grpc/grpc-js';

import type { GrpcAuth } from '../auth/index.js';
import type { Logger } from '../obs/index.js';
import type { StreamLimits, StreamRequest } from '../quote-grpc/index.js';
import { StreamAdmission, StreamCalls } from '../quote-grpc/index.js';
import type { PolledQuote } from './external-quote.js';
import type { ExternalMetrics } from './external-metrics.js';
import type { ExternalPoller } from './external-poller.js';
import { ExternalSubscription } from './external-subscription.js';

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
  /** JWT bearer auth (engine/auth createGrpcAuth); undefined: off. */
  auth?: GrpcAuth;
  /** Per-client and global stream limits (engine/quote stream-limits.ts); the defaults when absent. */
  limits?: Partial<StreamLimits>;
  /** Serve the gRPC port over TLS with this PEM certificate and key (tls.certFile / tls.keyFile); undefined: plaintext. */
  tls?: { cert: string; key: string } | undefined;
}

export class ExternalQuoteServer {
  private readonly poller: ExternalPoller;
  private readonly calls: StreamCalls<ExternalSubscription>;
  /** Streams by the pairs they watch. */
  private readonly byPair = new Map<string, Set<ExternalSubscription>>();
  private readonly unlisten: () => void;

  constructor(options: ExternalQuoteServerOptions) {
    const { poller, metrics, uptime, logger } = options;
    this.poller = poller;
    this.calls = new StreamCalls({
      serverOptions: EXTERNAL_SERVER_OPTIONS,
      host: options.host ?? '127.0.0.1',
      shutdownTimeoutMs: options.shutdownTimeoutMs,
      name: 'external quote stream',
      shuttingDownDetails: 'the external quote service is shutting down',
      activeStreams: metrics.activeStreams,
      logger,
      auth: options.auth,
      tls: options.tls,
      admission: new StreamAdmission(options.limits),
      // The provider is polled exact in; an exact-out pair is refused, not quoted the wrong way.
      request: { exactOut: false },
      subscribe: (request, call) =>
        new ExternalSubscription({
          request,
          sink: call,
          latest: (pairId) => poller.latest(pairId),
          uptime,
          metrics,
          ...(logger === undefined ? {} : { logger }),
        }),
      opened: (sub, request) => this.opened(sub, request),
      released: (sub) => this.released(sub),
      closing: () => this.unlisten(),
    });
    this.unlisten = poller.onResult((pairId, result) => this.pollResult(pairId, result));
  }

  get port(): number {
    return this.calls.port;
  }

  get activeStreams(): number {
    return this.calls.size;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port: number): Promise<number> {
    return this.calls.start(port);
  }

  /** Ends every stream with UNAVAILABLE, then shuts the server down (forced past the timeout). Idempotent. */
  close(): Promise<void> {
    return this.calls.close();
  }

  /** Registers a new stream's pairs with the poller (refcounted). */
  private opened(sub: ExternalSubscription, request: StreamRequest): void {
    for (const pair of request.pairs) {
      this.poller.acquire(pair, request.slippageBps);
      let set = this.byPair.get(pair.pairId);
      if (set === undefined) this.byPair.set(pair.pairId, (set = new Set()));
      set.add(sub);
    }
  }

  /** Frees a released stream's references to its pairs. */
  private released(sub: ExternalSubscription): void {
    for (const pairId of sub.pairIds) {
      const set = this.byPair.get(pairId);
      set?.delete(sub);
      if (set?.size === 0) this.byPair.delete(pairId);
      this.poller.release(pairId);
    }
  }

  private pollResult(pairId: string, result: PolledQuote): void {
    const subs = this.byPair.get(pairId);
    if (subs === undefined) return;
    for (const sub of subs) sub.update(pairId, result);
  }
}
