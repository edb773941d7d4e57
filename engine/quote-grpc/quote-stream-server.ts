/**
 * The local upstream quote service (spec 01, default :50052): gRPC
 * `tidepool.v1.QuoteService.StreamBatchQuotes` served from the quote service's pool cache with the
 * engine's exact swap math, through the quote engine GET /quote uses (quote-engine.ts: the cache
 * path behind the circuit breaker and memo, the RPC fallback).
 *
 * - A malformed request ends at once with INVALID_ARGUMENT naming the field (quote-stream-request.ts).
 * - Each accepted stream is a QuoteSubscription (quote-subscription.ts): every pair quoted at once,
 *   pushed again when a pool of the pair changes or its interval passes, error quotes for pairs
 *   that cannot be quoted, bounded backpressure, within its client's quote budget (stream-budget.ts).
 * - Pool changes reach the streams through `QuoteEngine.onPoolChange` (PoolCache.onChange), which
 *   fires on every store that moves a pair version (bus updates, the in-process scanner's sink, the
 *   refresher, RPC write-backs, context updates, evictions). The listener only flags; one
 *   setImmediate per burst then lets every stream compare the state versions of its pairs.
 * - Each stream is a SERVER span (`tidepool.v1.QuoteService/StreamBatchQuotes`) under the caller's
 *   W3C trace context from the call metadata; a no-op while tracing is off.
 * - close(): every open stream ends with UNAVAILABLE ("shutting down"), then tryShutdown, and
 *   forceShutdown past `shutdownTimeoutMs`. Idempotent.
 * - The call handling, tracing and shutdown are shared with the external service (stream-calls.ts);
 *   what is this service's own is the subscription and the pool-change fan-out.
 */
import type * as grpc from '@grpc/grpc-js';

import type { GrpcAuth } from '../auth/index.js';
import type { Logger } from '../obs/index.js';
import { type QuoteEngine, acquireLoadMonitor, releaseLoadMonitor, type LoadSignal, type LoadThresholds } from '../quote/index.js';
import { QuoteSubscription } from './quote-subscription.js';
import { quoteUnaryHandlers } from './quote-unary-calls.js';
import { StreamCalls } from './stream-calls.js';
import { StreamAdmission, type StreamLimits } from './stream-limits.js';
import { StreamPacer } from './stream-pacer.js';

/**
 * Keepalive: the server pings every connection every 10 s (5 s to answer), so a dead TCP path (an
 * aggregator gone without a FIN) fails and frees its streams. grpc-js servers enforce no minimum
 * interval on the clients' own pings, so the aggregator's keepalive needs no permit here.
 */
/** Spec 01: the local upstream quote service's gRPC port (StreamBatchQuotes). */
export const DEFAULT_GRPC_PORT = 50052;

export const QUOTE_STREAM_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

export interface QuoteStreamServerOptions {
  /** The quote engine every stream quotes through (shared with GET /quote); its metrics too. */
  engine: QuoteEngine;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Serve TLS with this PEM certificate and key; undefined: plaintext. */
  tls?: { cert: string; key: string } | undefined;
  shutdownTimeoutMs?: number;
  logger?: Logger;
  /** JWT bearer auth (engine/auth createGrpcAuth); undefined: off. */
  auth?: GrpcAuth;
  /** Stream limits (stream-limits.ts); the defaults when absent. */
  limits?: Partial<StreamLimits>;
  /** When interval pushes are shed (load-monitor.ts). */
  shed?: LoadThresholds;
  /** Stream work per event-loop turn, ms (stream-pacer.ts). */
  sliceMs?: number;
  /** What says the process is overloaded; default the process's LoadMonitor (tests inject one). */
  load?: LoadSignal;
  /** Monotonic ms clock of the clients' quote budgets; default performance.now (tests inject one). */
  budgetClock?: () => number;
}

export class QuoteStreamServer {
  private readonly calls: StreamCalls<QuoteSubscription>;
  private readonly unlisten: () => void;
  private changePending = false;
  /** Admission of new streams: per client, in all, pairs, interval. */
  readonly admission: StreamAdmission;
  /** Shares the event loop between the streams' work and everything else. */
  readonly pacer: StreamPacer;
  private monitorHeld: boolean;

  constructor(options: QuoteStreamServerOptions) {
    const { engine, logger } = options;
    const metrics = engine.metrics;
    this.admission = new StreamAdmission(options.limits, options.budgetClock);
    this.monitorHeld = options.load === undefined;
    const load = options.load ?? acquireLoadMonitor(options.shed);
    this.pacer = new StreamPacer({ load, ...(options.sliceMs === undefined ? {} : { sliceMs: options.sliceMs }) });
    const pacer = this.pacer;
    this.calls = new StreamCalls({
      serverOptions: QUOTE_STREAM_SERVER_OPTIONS,
      host: options.host ?? '127.0.0.1',
      tls: options.tls,
      shutdownTimeoutMs: options.shutdownTimeoutMs,
      name: 'quote stream',
      shuttingDownDetails: 'the quote service is shutting down',
      activeStreams: metrics.streamActiveStreams,
      logger,
      auth: options.auth,
      admission: this.admission,
      subscribe: (request, call, budget) =>
        new QuoteSubscription({ request, sink: call, engine, pacer, budget, ...(logger === undefined ? {} : { logger }) }),
      closing: () => {
        this.unlisten();
        if (this.monitorHeld) {
          this.monitorHeld = false;
          releaseLoadMonitor();
        }
      },
      // GetQuote / GetQuotes: unary adapters over the same engine (quote-unary-calls.ts).
      unary: quoteUnaryHandlers(engine),
    });
    this.unlisten = engine.onPoolChange(() => this.poolsChanged());
  }

  /** The bound port (after start). */
  get port(): number {
    return this.calls.port;
  }

  /** Streams open now. */
  get activeStreams(): number {
    return this.calls.size;
  }

  /** Interval pushes shed under load by the open streams. */
  get shedPushes(): number {
    let n = 0;
    for (const sub of this.calls.subscriptions()) n += sub.shed;
    return n;
  }

  /** Pushes asked for pairs still waiting for their client's quote budget (coalesced into those). */
  get coalescedPushes(): number {
    let n = 0;
    for (const sub of this.calls.subscriptions()) n += sub.coalesced;
    return n;
  }

  /** Quotes written by the open streams. */
  get quotesSent(): number {
    let n = 0;
    for (const sub of this.calls.subscriptions()) n += sub.sent;
    return n;
  }

  /** Open streams waiting for their client's quote budget. */
  get streamsAwaitingBudget(): number {
    let n = 0;
    for (const sub of this.calls.subscriptions()) if (sub.awaitingBudget) n++;
    return n;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port = DEFAULT_GRPC_PORT): Promise<number> {
    return this.calls.start(port);
  }

  /** Ends every stream with UNAVAILABLE, then shuts the server down (forced past the timeout). Idempotent. */
  close(): Promise<void> {
    return this.calls.close();
  }

  /** A pool change: flag, and let the streams look once the current burst of stores is done. */
  private poolsChanged(): void {
    if (this.changePending || this.calls.size === 0) return;
    this.changePending = true;
    setImmediate(() => {
      this.changePending = false;
      for (const sub of this.calls.subscriptions()) sub.poolsChanged();
    });
  }
}
