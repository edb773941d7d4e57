/**
 * One upstream quote service (spec 01: local :50052 or external :50053) behind one grpc-js channel
 * with keepalive, and ONE persistent StreamBatchQuotes call carrying every subscribed pair (sharded
 * into more calls only past 1,000 pairs, the request limit of quote.proto).
 *
 * - Adding pairs: additions within one tick are coalesced; a new call with the union is opened and
 *   the old one is cancelled only once every call of the new set has delivered (make-before-break),
 *   so quotes never stop while the set grows. A new set that has not delivered yet is never
 *   cancelled because more pairs arrived: they wait (marked dirty) and the next union is opened as
 *   soon as that set takes over or fails, with everything that arrived meanwhile. (Cancelling it
 *   instead starves: with a new pair faster than the upstream's first answer nothing ever takes
 *   over.) Only a new set stalled for PENDING_STALL_MS (doubling) is replaced.
 * - Pairs nobody has wanted for 5 minutes (no stream holds them, no unary call touched them) are
 *   left out at the next resubscribe, and of the pairs no stream holds only the MAX_UNARY_PAIRS
 *   most recently wanted are kept.
 * - Quotes are keyed by the pairID recomputed from their mints and input amount (the upstream's
 *   `pair_id` is not trusted); a quote for a pair its call did not ask for is dropped (an error).
 * - Stream error or end: state RECONNECTING, exponential backoff with jitter (100 ms doubling to
 *   10 s, reset once a stream delivers), then a new call with the full set.
 * - Upstreams are always asked with slippage 0: the aggregator applies each client's slippage
 *   itself with quote.proto's formula, so one upstream quote serves every client of the pair.
 *
 * Every received quote is normalised before it leaves: `source` overwritten with this connection's
 * source, `receivedAtUnixMs` set, `routeHash` computed from its hops.
 */
import { Backoff } from '../common/index.js';
import type { UpstreamTls } from '../config/index.js';
import * as grpc from '@grpc/grpc-js';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Logger } from 'pino';

import { LogThrottle } from '../obs/index.js';
import { setBearerToken } from '../auth/index.js';
import { grpcMetadataSetter } from '../obs/index.js';
import { rpcAttributes, rpcSpanName, tracer } from '../obs/index.js';
import { loadTidepoolProto } from '../proto.js';
import { pairId, type QuoteSourceName, type WireQuote } from '../quote/index.js';
import { MAX_PAIRS_PER_REQUEST, type PairKey } from './request-validation.js';
import { routeHash } from './swap-route-event.js';
import { UpstreamStateName, type WireUpstreamStatus } from './wire-types.js';

/** Spec 01: pairs idle this long are dropped at the next resubscribe. */
export const PAIR_IDLE_DROP_MS = 5 * 60_000;
/** How often idle pairs are looked for when nothing else triggers a resubscribe. */
export const PAIR_IDLE_SWEEP_MS = 60_000;
/**
 * At most this many pairs that no client stream holds (pairs only GetAggregatedQuote named) stay
 * subscribed; past it the least recently wanted are left out at the next resubscribe.
 */
export const MAX_UNARY_PAIRS = 1_000;
/**
 * A new call set that has delivered nothing for this long is stalled: the next new pair replaces it
 * (the bound doubles at each replacement and resets once a set takes over, so a slow upstream is
 * never starved by a steady stream of new pairs).
 */
export const PENDING_STALL_MS = 5_000;
export const BACKOFF_INITIAL_MS = 100;
export const BACKOFF_MAX_MS = 10_000;
/**
 * Spec 01: gRPC keepalive on the upstream connections. Pings only while a call is open (the stream
 * is what must not die silently); servers that police ping rates see nothing while idle.
 */
export const UPSTREAM_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 0,
  'grpc.initial_reconnect_backoff_ms': BACKOFF_INITIAL_MS,
  'grpc.max_reconnect_backoff_ms': BACKOFF_MAX_MS,
};
export const STREAM_BATCH_QUOTES_SPAN = rpcSpanName('QuoteService', 'StreamBatchQuotes');

export interface UpstreamClientOptions {
  source: typeof QuoteSourceName.Local | typeof QuoteSourceName.External;
  address: string;
  /** The per-quote timeout of this source (-local-timeout / -external-timeout), for status only. */
  timeoutMs: number;
  /** update_interval_ms asked of the upstream. */
  updateIntervalMs: number;
  /** A held quote older than this no longer counts (and the upstream is unhealthy past it). */
  staleAfterMs: number;
  logger: Logger;
  /** JWT sent as `authorization: Bearer` on every call (auth-on upstreams); empty/undefined: none. */
  token?: string | undefined;
  /** Connect over TLS (trusting `ca`, else the system roots); undefined: plaintext. */
  tls?: UpstreamTls | undefined;
  /** Every quote as received, normalised. */
  onQuote(quote: WireQuote, receivedAtMs: number): void;
  /** The stream failed (state is now RECONNECTING) or recovered. */
  onStateChange?(): void;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  idleDropMs?: number;
  /** How often to look for idle pairs and resubscribe without them; default 1 minute. */
  idleSweepMs?: number;
  /** Cap on the pairs no stream holds; default MAX_UNARY_PAIRS. */
  maxUnaryPairs?: number;
  /** When a new call set that has not delivered counts as stalled; default PENDING_STALL_MS. */
  pendingStallMs?: number;
  now?: () => number;
}

interface Subscription {
  pair: PairKey;
  /** Open client streams that want this pair; while > 0 it is never idle. */
  refs: number;
  lastWantedAt: number;
}

interface CallHandle {
  call: grpc.ClientReadableStream<WireQuote>;
  span: Span;
  /** The pairs this call asked for: a quote for any other pair is dropped. */
  pairIds: Set<string>;
  /** `inputMint:outputMint:amount` (the pairID preimage) → pairID, of the pairs asked for. */
  byPreimage: Map<string, string>;
  delivered: boolean;
  /** Cancelled by us (or ended): its CANCELLED error is expected, not a failure. */
  cancelled: boolean;
}

interface Generation {
  calls: CallHandle[];
  pairIds: Set<string>;
  openedAt: number;
}

export class UpstreamClient {
  readonly source: UpstreamClientOptions['source'];
  readonly address: string;
  private readonly client: grpc.Client;
  private readonly subs = new Map<string, Subscription>();
  private current: Generation | undefined;
  private pending: Generation | undefined;
  private state: UpstreamStateName = UpstreamStateName.Connecting;
  private resubscribeScheduled = false;
  /** Pairs were added (or idle ones are due out) since the last set was opened. */
  private dirty = false;
  private pendingStallMs: number;
  private readonly logThrottle = new LogThrottle(10_000);
  private retryTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private backoffMs = 0;
  private readonly reconnectBackoff: Backoff;
  private readonly stallBackoff: Backoff;
  private closed = false;
  private readonly now: () => number;

  // counters (UpstreamStatus)
  private quotesReceived = 0;
  private errors = 0;
  private timeouts = 0;
  private reconnects = 0;
  private lastLatencyMs = 0;
  private latencySumMs = 0;
  private latencyCount = 0;
  private connectedSince = 0;
  private lastQuoteAt = 0;
  private lastError = '';

  constructor(private readonly options: UpstreamClientOptions) {
    this.source = options.source;
    this.address = options.address;
    this.now = options.now ?? Date.now;
    this.reconnectBackoff = Backoff.doubling(options.backoffInitialMs ?? BACKOFF_INITIAL_MS, options.backoffMaxMs ?? BACKOFF_MAX_MS);
    // A stalled resubscribe waits longer each time, up to 60× the first wait (5 min by default).
    const stallMs = options.pendingStallMs ?? PENDING_STALL_MS;
    this.stallBackoff = Backoff.doubling(stallMs, 60 * stallMs);
    this.pendingStallMs = this.stallBackoff.next();
    const Ctor = loadTidepoolProto().QuoteService;
    const credentials = options.tls === undefined ? grpc.credentials.createInsecure() : grpc.credentials.createSsl(options.tls.ca === undefined ? null : Buffer.from(options.tls.ca));
    this.client = new Ctor(options.address, credentials, UPSTREAM_CHANNEL_OPTIONS);
  }

  /**
   * Subscribes `pair` (or refreshes its interest). `hold` counts an open client stream that keeps
   * the pair wanted until `release`.
   */
  want(pair: PairKey, hold = false): void {
    if (this.closed) return;
    let sub = this.subs.get(pair.pairId);
    if (sub === undefined) {
      sub = { pair, refs: 0, lastWantedAt: this.now() };
      this.subs.set(pair.pairId, sub);
    }
    sub.lastWantedAt = this.now();
    if (hold) sub.refs++;
    if (!this.isSubscribed(pair.pairId)) this.requestResubscribe();
  }

  /** Ends one stream's hold on a pair; the pair stays subscribed until idle for 5 minutes. */
  release(pairId: string): void {
    const sub = this.subs.get(pairId);
    if (sub === undefined) return;
    if (sub.refs > 0) sub.refs--;
    sub.lastWantedAt = this.now();
  }

  /** Whether the pair is in the call set that delivers (or is about to). */
  isSubscribed(pairId: string): boolean {
    return this.current?.pairIds.has(pairId) === true || this.pending?.pairIds.has(pairId) === true;
  }

  /**
   * False until the upstream has delivered its first quote since start: its subscriptions are not
   * warm yet, so a unary call waits for them up to its whole deadline rather than the source's
   * timeout (issue 11 item 10).
   */
  get warm(): boolean {
    return this.lastQuoteAt > 0;
  }

  /** Counts a quote that missed its timeout (GetAggregatedQuote). */
  countTimeout(): void {
    this.timeouts++;
  }

  /** True while the upstream cannot be asked: its stream is down and waiting out the backoff. */
  isDown(): boolean {
    if (this.state === UpstreamStateName.Reconnecting) return true;
    if (this.subs.size === 0) return this.channelState(true) === grpc.connectivityState.TRANSIENT_FAILURE;
    return false;
  }

  /** Streaming and its last quote is not older than the staleness window. */
  isHealthy(now = this.now()): boolean {
    if (this.current === undefined) {
      // No pair to stream: nothing to wait for, so a ready channel is a healthy upstream.
      // (Asking also wakes a channel that went idle, so the next check sees it connected.)
      return this.subs.size === 0 && this.pending === undefined && this.channelState(true) === grpc.connectivityState.READY;
    }
    return this.state === UpstreamStateName.Streaming && now - this.lastQuoteAt <= this.options.staleAfterMs;
  }

  /**
   * True when the stream is up (quotes from it may be used). With `pairId`, also true before the
   * new set has taken over (cold start, reconnect) once the call carrying that pair has delivered:
   * a set of several calls (past 1,000 pairs) takes over only when all have, and a quote of a call
   * that streams is usable meanwhile.
   */
  isConnected(pairId?: string): boolean {
    if (this.state === UpstreamStateName.Streaming) return true;
    if (pairId === undefined || this.pending === undefined || !this.pending.pairIds.has(pairId)) return false;
    for (const handle of this.pending.calls) {
      if (handle.pairIds.has(pairId)) return handle.delivered && !handle.cancelled;
    }
    return false;
  }

  status(now = this.now()): WireUpstreamStatus {
    const idle = this.current === undefined && this.pending === undefined && this.subs.size === 0;
    let state = this.state;
    if (idle && state !== UpstreamStateName.Reconnecting) {
      const ch = this.channelState(true);
      state = ch === grpc.connectivityState.READY ? UpstreamStateName.Streaming : ch === grpc.connectivityState.TRANSIENT_FAILURE ? UpstreamStateName.Reconnecting : UpstreamStateName.Connecting;
    }
    return {
      source: this.source,
      address: this.address,
      state,
      healthy: this.isHealthy(now),
      timeoutMs: this.options.timeoutMs,
      lastLatencyMs: this.lastLatencyMs,
      avgLatencyMs: this.latencyCount === 0 ? 0 : this.latencySumMs / this.latencyCount,
      quotesReceived: String(this.quotesReceived),
      errors: String(this.errors),
      timeouts: String(this.timeouts),
      reconnects: String(this.reconnects),
      backoffMs: this.state === UpstreamStateName.Reconnecting ? Math.round(this.backoffMs) : 0,
      connectedSinceUnixMs: String(this.state === UpstreamStateName.Streaming ? this.connectedSince : 0),
      lastQuoteAtUnixMs: String(this.lastQuoteAt),
      lastError: this.lastError,
    };
  }

  /** Subscribed pair count (for status and tests). */
  get pairCount(): number {
    return this.subs.size;
  }

  /** Open StreamBatchQuotes calls (for tests: one per 1,000 pairs once settled). */
  get openCalls(): number {
    return (this.current?.calls.length ?? 0) + (this.pending?.calls.length ?? 0);
  }

  /** Dials the channel early so health is known before the first pair. */
  start(): void {
    this.channelState(true);
    // Without new pairs nothing would resubscribe: look for idle pairs now and then.
    this.idleTimer = setInterval(() => {
      if (this.hasDroppablePairs()) this.requestResubscribe();
    }, this.options.idleSweepMs ?? PAIR_IDLE_SWEEP_MS);
    this.idleTimer.unref();
  }

  /** Pairs idle past the idle window, or more unary-only pairs than the cap (streams that ended). */
  private hasDroppablePairs(): boolean {
    const cutoff = this.now() - (this.options.idleDropMs ?? PAIR_IDLE_DROP_MS);
    const cap = this.options.maxUnaryPairs ?? MAX_UNARY_PAIRS;
    let unary = 0;
    for (const sub of this.subs.values()) {
      if (sub.refs > 0) continue;
      if (sub.lastWantedAt < cutoff || ++unary > cap) return true;
    }
    return false;
  }

  /** Cancels every call and closes the channel. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearInterval(this.idleTimer);
    this.cancel(this.pending);
    this.cancel(this.current);
    this.pending = undefined;
    this.current = undefined;
    this.client.close();
  }

  private channelState(tryToConnect = false): grpc.connectivityState {
    try {
      return this.client.getChannel().getConnectivityState(tryToConnect);
    } catch {
      return grpc.connectivityState.SHUTDOWN;
    }
  }

  /**
   * The subscribed set must change. Opens the new set on the next tick unless a retry is waiting
   * (it opens the full set) or a new set has not taken over yet: that one is not cancelled (it is
   * what brings the upstream to STREAMING or the latest pairs their quotes); the new union follows
   * when it takes over or fails. Only a set stalled past the stall bound is replaced.
   */
  private requestResubscribe(): void {
    this.dirty = true;
    if (this.retryTimer !== undefined || this.closed) return;
    if (this.pending !== undefined && this.now() - this.pending.openedAt < this.pendingStallMs) return;
    this.scheduleResubscribe();
  }

  private scheduleResubscribe(): void {
    if (this.resubscribeScheduled) return;
    this.resubscribeScheduled = true;
    // One tick: every want() of this turn of the event loop joins the same new call.
    setImmediate(() => {
      this.resubscribeScheduled = false;
      this.resubscribe();
    });
  }

  private resubscribe(): void {
    if (this.closed) return;
    const now = this.now();
    if (this.pending !== undefined) {
      if (now - this.pending.openedAt < this.pendingStallMs) {
        // Never cancel a set that may still deliver: it takes over (or fails) and the union follows.
        this.dirty = true;
        return;
      }
      this.options.logger.warn({ upstream: this.source, address: this.address, stalledMs: now - this.pending.openedAt }, 'upstream resubscribe stalled; replacing it');
      this.pendingStallMs = this.stallBackoff.next();
      this.cancel(this.pending);
      this.pending = undefined;
    }
    this.dirty = false;
    this.dropUnwanted(now);
    if (this.subs.size === 0) {
      this.cancel(this.current);
      this.current = undefined;
      return;
    }
    if (this.current !== undefined && this.current.pairIds.size === this.subs.size && [...this.subs.keys()].every((id) => this.current!.pairIds.has(id))) {
      return; // the current set is exactly what is wanted
    }
    // Pairs the current call lacks go first: the upstream quotes a request in order, and a unary
    // call is waiting (10 ms by default) for exactly those.
    const added: PairKey[] = [];
    const known: PairKey[] = [];
    for (const sub of this.subs.values()) (this.current?.pairIds.has(sub.pair.pairId) === true ? known : added).push(sub.pair);
    const pairs = added.concat(known);
    const generation: Generation = { calls: [], pairIds: new Set(pairs.map((p) => p.pairId)), openedAt: now };
    this.pending = generation;
    for (let i = 0; i < pairs.length; i += MAX_PAIRS_PER_REQUEST) {
      generation.calls.push(this.openCall(generation, pairs.slice(i, i + MAX_PAIRS_PER_REQUEST)));
    }
  }

  /**
   * Leaves out the pairs idle past the idle window, then, of the pairs no stream holds, all but the
   * `maxUnaryPairs` most recently wanted (pairs streams hold are never dropped here).
   */
  private dropUnwanted(now: number): void {
    const idleMs = this.options.idleDropMs ?? PAIR_IDLE_DROP_MS;
    const unary: Subscription[] = [];
    for (const [id, sub] of this.subs) {
      if (sub.refs > 0) continue;
      if (now - sub.lastWantedAt > idleMs) this.subs.delete(id);
      else unary.push(sub);
    }
    const cap = this.options.maxUnaryPairs ?? MAX_UNARY_PAIRS;
    if (unary.length <= cap) return;
    unary.sort((a, b) => a.lastWantedAt - b.lastWantedAt);
    const excess = unary.length - cap;
    for (let i = 0; i < excess; i++) this.subs.delete(unary[i]!.pair.pairId);
    this.options.logger.debug({ upstream: this.source, dropped: excess, cap }, 'unary-only pairs over the cap: least recently wanted left out');
  }

  private openCall(generation: Generation, pairs: PairKey[]): CallHandle {
    const span = tracer().startSpan(STREAM_BATCH_QUOTES_SPAN, {
      kind: SpanKind.CLIENT,
      attributes: {
        ...rpcAttributes('QuoteService', 'StreamBatchQuotes'),
        'tidepool.upstream.source': this.source,
        'tidepool.upstream.address': this.address,
        'tidepool.upstream.pair_count': pairs.length,
      },
    });
    const metadata = new grpc.Metadata();
    propagation.inject(trace.setSpan(context.active(), span), metadata, grpcMetadataSetter);
    setBearerToken(metadata, this.options.token);
    const request = {
      pairs: pairs.map((p) => ({ inputMint: p.inputMint, outputMint: p.outputMint, amount: p.amount.toString() })),
      slippageBps: 0,
      updateIntervalMs: this.options.updateIntervalMs,
    };
    const call = (this.client as unknown as { StreamBatchQuotes(r: object, m: grpc.Metadata): grpc.ClientReadableStream<WireQuote> }).StreamBatchQuotes(request, metadata);
    const handle: CallHandle = {
      call,
      span,
      pairIds: new Set(pairs.map((p) => p.pairId)),
      byPreimage: new Map(pairs.map((p) => [`${p.inputMint}:${p.outputMint}:${p.amount}`, p.pairId])),
      delivered: false,
      cancelled: false,
    };
    call.on('data', (quote: WireQuote) => this.onData(generation, handle, quote));
    call.on('error', (err: grpc.ServiceError) => this.onCallEnd(generation, handle, err));
    call.on('end', () => this.onCallEnd(generation, handle, undefined));
    return handle;
  }

  private onData(generation: Generation, handle: CallHandle, quote: WireQuote): void {
    if (handle.cancelled || this.closed) return;
    // The table is keyed by pairID: recompute it from what the quote is for, never trust the label,
    // and drop a quote for a pair this call did not ask for (it would land on another pair's key or
    // on one nobody asked for).
    const id = handle.byPreimage.get(`${quote.inputMint}:${quote.outputMint}:${quote.inputAmount}`) ?? quotePairId(quote);
    if (id === undefined || !handle.pairIds.has(id)) {
      this.errors++;
      this.lastError = `quote for a pair not subscribed (${quote.inputMint}:${quote.outputMint}:${quote.inputAmount}, pair_id ${quote.pairId})`;
      const suppressed = this.logThrottle.take('unsubscribed');
      if (suppressed >= 0) this.options.logger.warn({ upstream: this.source, address: this.address, pairId: quote.pairId, inputMint: quote.inputMint, outputMint: quote.outputMint, inputAmount: quote.inputAmount, suppressed }, 'upstream quote for a pair not subscribed; dropped');
      return;
    }
    quote.pairId = id;
    const now = this.now();
    if (!handle.delivered) {
      handle.delivered = true;
      if (generation === this.pending && generation.calls.every((c) => c.delivered)) this.promote(generation, now);
    }
    this.quotesReceived++;
    this.lastQuoteAt = now;
    const quotedAt = Number(quote.quotedAtUnixMs);
    if (quotedAt > 0) {
      this.lastLatencyMs = Math.max(0, now - quotedAt);
      this.latencySumMs += this.lastLatencyMs;
      this.latencyCount++;
    }
    quote.source = this.source;
    quote.receivedAtUnixMs = String(now);
    quote.routeHash = quote.route.length === 0 ? '' : routeHash(quote.route);
    if (quote.error !== null && quote.error !== undefined) this.errors++;
    this.options.onQuote(quote, now);
  }

  /** Every call of the new set delivered: it becomes current and the old set is cancelled. */
  private promote(generation: Generation, now: number): void {
    const old = this.current;
    this.current = generation;
    this.pending = undefined;
    this.cancel(old);
    this.reconnectBackoff.reset();
    this.backoffMs = 0;
    this.stallBackoff.reset();
    this.pendingStallMs = this.stallBackoff.next();
    if (this.state !== UpstreamStateName.Streaming) {
      this.state = UpstreamStateName.Streaming;
      this.connectedSince = now;
      this.options.logger.info({ upstream: this.source, address: this.address, pairs: generation.pairIds.size }, 'upstream streaming');
      this.options.onStateChange?.();
    }
    // Pairs that arrived while this set was opening: the next union, with all of them.
    if (this.dirty) this.scheduleResubscribe();
  }

  private onCallEnd(generation: Generation, handle: CallHandle, err: grpc.ServiceError | undefined): void {
    if (handle.cancelled) return; // cancelled by us; cancel() ended its span
    handle.cancelled = true; // one end per call
    const message = err === undefined ? 'upstream ended the stream' : `${grpc.status[err.code] ?? err.code}: ${err.details || err.message}`;
    handle.span.setStatus({ code: SpanStatusCode.ERROR, message });
    handle.span.end();
    if (this.closed) return;
    this.errors++;
    this.lastError = message;
    if (generation === this.pending && this.current !== undefined && this.state === UpstreamStateName.Streaming) {
      // The new set failed while the old one still streams: keep the old, retry the union later.
      this.cancel(generation);
      this.pending = undefined;
      this.options.logger.warn({ upstream: this.source, err: message }, 'upstream resubscribe failed; keeping the current stream');
      this.scheduleRetry();
      return;
    }
    if (generation !== this.current && generation !== this.pending) return;
    this.cancel(this.current);
    this.cancel(this.pending);
    this.current = undefined;
    this.pending = undefined;
    this.state = UpstreamStateName.Reconnecting;
    this.connectedSince = 0;
    this.options.logger.warn({ upstream: this.source, address: this.address, err: message }, 'upstream stream lost; reconnecting');
    this.scheduleRetry();
    this.options.onStateChange?.();
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.closed) return;
    const base = this.reconnectBackoff.next();
    this.backoffMs = base * (0.8 + 0.4 * Math.random()); // ±20 % jitter: upstream restarts do not see a thundering herd
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.state === UpstreamStateName.Reconnecting) {
        this.reconnects++;
        this.state = UpstreamStateName.Connecting;
      }
      this.resubscribe();
    }, this.backoffMs);
    this.retryTimer.unref?.();
  }

  private cancel(generation: Generation | undefined): void {
    if (generation === undefined) return;
    for (const handle of generation.calls) {
      if (handle.cancelled) continue;
      handle.cancelled = true;
      handle.span.end();
      handle.call.cancel();
    }
  }
}

/** pairID of what a quote is for (docs/architecture.md §3), or undefined when its input amount is not a u64. */
function quotePairId(quote: WireQuote): string | undefined {
  const text = quote.inputAmount;
  if (typeof text !== 'string' || !/^[0-9]{1,20}$/.test(text)) return undefined;
  return pairId(quote.inputMint, quote.outputMint, BigInt(text));
}
