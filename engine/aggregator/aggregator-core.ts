/**
 * The aggregator's state and behaviour, below the gRPC and HTTP servers: the two upstream clients,
 * the two quote tables, the pairs clients stream, the unary waits, publication and statistics.
 *
 * Flow: an upstream quote → its table (duplicate or change) → for a pair some stream wants,
 * re-aggregate on change (or when a held quote expires / an upstream drops), encode once per
 * slippage, write the same bytes to every stream of the pair; consider it for publication.
 */
import type * as grpc from '@grpc/grpc-js';
import { context as otelContext, SpanKind, type Context } from '@opentelemetry/api';
import type { ServiceDefinition } from '@grpc/proto-loader';
import type { Logger } from 'pino';

import { ErrorCode, TpError } from '../errors.js';
import { LogThrottle } from '../obs/index.js';
import { tracer } from '../obs/index.js';
import { loadTidepoolProto } from '../proto.js';
import { QuoteSourceName, type LoadSignal, type WireQuote, type WireQuoteError } from '../quote/index.js';
import { aggregate, withSlippage, type SourceSide } from './aggregate.js';
import { GET_AGGREGATED_QUOTE_TIMEOUT_MS, type AggregatorConfig } from './aggregator-config.js';
import { upstreamTargetsOf, type UpstreamTarget } from '../config/index.js';
import type { AggregatorMetrics } from './aggregator-metrics.js';
import { AggregatorStats, RequestKind } from './aggregator-stats.js';
import type { OraclePriceSource, RoutePublisher } from './contracts.js';
import { deadlineError, noQuoteError, unavailableError } from './quote-errors.js';
import { QuoteTable, staleAfterMs, type HeldEntry } from './quote-table.js';
import type { PairKey, ValidBatchRequest } from './request-validation.js';
import { RoutePublication } from './route-publication.js';
import { StreamSubscriber } from './stream-subscriber.js';
import { PAIR_IDLE_DROP_MS, UpstreamClient } from './upstream-client.js';
import { SourceClassName, type WireAggregatedQuote } from './wire-types.js';

/** Price differences above this (percent) are logged at info (throttled per pair). */
export const PRICE_DIFFERENCE_LOG_PCT = 1;
/** Name of the CLIENT span of a GetAggregatedQuote's wait for one upstream. */
export const UPSTREAM_WAIT_SPAN = 'tidepool.aggregator/WaitUpstreamQuote';

type Side = 'local' | 'external';
const SIDES: readonly Side[] = ['local', 'external'];

interface PairState {
  pair: PairKey;
  streams: Set<StreamSubscriber>;
  /** The latest aggregation (slippage 0), undefined before the first quote. */
  current: WireAggregatedQuote | undefined;
  /** `current` encoded, per client slippage. */
  bodies: Map<number, Buffer>;
  /** Which held entries `current` was built from; a change means re-aggregate. */
  usage: string;
}

type WaitOutcome = 'arrived' | 'down' | 'timeout';

/** What a memoized GetAggregatedQuote answer was built from (compared by identity / value). */
interface UnaryMemo {
  local: WireQuote | WireQuoteError | undefined;
  external: WireQuote | WireQuoteError | undefined;
  oracleAtomPrice: number | undefined;
  quote: WireAggregatedQuote;
}

/** Bound of the unary memo (pair × slippage); past it the memo starts over. */
const UNARY_MEMO_MAX_ENTRIES = 10_000;

const shuttingDown = (): TpError => new TpError(ErrorCode.Unavailable, 'the aggregator is shutting down');

export interface AggregatorCoreOptions {
  config: AggregatorConfig;
  logger: Logger;
  publisher: RoutePublisher;
  oracle?: OraclePriceSource | undefined;
  metrics: AggregatorMetrics;
  /** Upstream reconnect backoff (tests shorten it). */
  backoff?: { initialMs: number; maxMs: number };
  /** GetAggregatedQuote's overall deadline; spec 01's 150 ms unless a test on a busy box widens it. */
  unaryDeadlineMs?: number;
  /** While it says overloaded, the streams' interval re-sends are shed (engine/quote load-monitor.ts). */
  load?: LoadSignal;
}

export class AggregatorCore {
  readonly upstreams: Record<Side, UpstreamClient>;
  readonly tables: Record<Side, QuoteTable>;
  readonly stats: AggregatorStats;
  readonly startedAt = Date.now();
  private readonly pairs = new Map<string, PairState>();
  private readonly streams = new Set<StreamSubscriber>();
  private readonly waiters = new Map<string, Set<(o: WaitOutcome) => void>>();
  private readonly publication: RoutePublication;
  private readonly logThrottle = new LogThrottle(10_000);
  private readonly encode: (value: object) => Buffer;
  /**
   * GetAggregatedQuote answers per pair and slippage, reused while they were built from the same
   * held quotes (or errors) and the same oracle price: a client polling a pair gets the quote the
   * aggregator built (its `aggregated_at_unix_ms`) and its encoding, with no new objects.
   */
  private readonly unaryMemo = new Map<string, UnaryMemo>();
  private readonly unaryBodies = new WeakMap<WireAggregatedQuote, Buffer>();
  private readonly staleAfter: number;
  private sweepTimer: NodeJS.Timeout | undefined;
  private cleanupTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: AggregatorCoreOptions) {
    const { config, logger } = options;
    this.staleAfter = staleAfterMs(config.upstreamUpdateInterval);
    this.stats = new AggregatorStats(options.metrics);
    this.publication = new RoutePublication(options.publisher, logger);
    const service = loadTidepoolProto().packageDefinition['tidepool.v1.QuoteAggregatorService'] as ServiceDefinition;
    this.encode = service['StreamAggregatedQuotes']!.responseSerialize as (value: object) => Buffer;
    this.tables = { local: new QuoteTable(this.staleAfter), external: new QuoteTable(this.staleAfter) };
    // TLS per upstream: its address's scheme, else tls.upstream (CA file read once, here).
    const targets = upstreamTargetsOf(config, { localQuoteAddr: config.localQuoteAddr, externalQuoteAddr: config.externalQuoteAddr });
    const upstream = (side: Side, source: typeof QuoteSourceName.Local | typeof QuoteSourceName.External, target: UpstreamTarget, timeoutMs: number): UpstreamClient =>
      new UpstreamClient({
        source,
        address: target.hostPort,
        timeoutMs,
        updateIntervalMs: config.upstreamUpdateInterval,
        staleAfterMs: this.staleAfter,
        logger,
        token: config.upstreamToken,
        tls: target.tls,
        onQuote: (quote, now) => this.onQuote(side, quote, now),
        onStateChange: () => this.onUpstreamState(side),
        ...(options.backoff ? { backoffInitialMs: options.backoff.initialMs, backoffMaxMs: options.backoff.maxMs } : {}),
      });
    this.upstreams = {
      local: upstream('local', QuoteSourceName.Local, targets.localQuoteAddr, config.localTimeout),
      external: upstream('external', QuoteSourceName.External, targets.externalQuoteAddr, config.externalTimeout),
    };
  }

  start(): void {
    for (const side of SIDES) this.upstreams[side].start();
    // Held quotes expire without any event: look for expiries often enough to drop them promptly.
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(10, Math.min(250, this.staleAfter / 4)));
    this.sweepTimer.unref();
    this.cleanupTimer = setInterval(() => this.cleanup(), 60_000);
    this.cleanupTimer.unref();
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  get scoringEnabled(): boolean {
    return this.options.config.enableConfidenceScoring;
  }

  // ---- streams ------------------------------------------------------------------------------

  /** Registers a client stream for its pairs and sends what is already held. */
  openStream(call: grpc.ServerWritableStream<unknown, Buffer>, request: ValidBatchRequest): StreamSubscriber {
    if (this.closed) throw shuttingDown();
    const sub = new StreamSubscriber(call, request.slippageBps, request.updateIntervalMs, request.pairs.map((p) => p.pairId));
    this.streams.add(sub);
    this.stats.countRequest(RequestKind.Stream);
    this.options.metrics.activeStreams.set(this.streams.size);
    const now = Date.now();
    for (const pair of request.pairs) {
      let ps = this.pairs.get(pair.pairId);
      if (ps === undefined) {
        ps = { pair, streams: new Set(), current: undefined, bodies: new Map(), usage: '' };
        this.pairs.set(pair.pairId, ps);
      }
      ps.streams.add(sub);
      this.want(pair, true);
      this.refresh(ps, now, false);
      if (ps.current !== undefined && sub.lastSentAt(pair.pairId) === 0) sub.send(pair.pairId, this.bodyFor(ps, sub.slippageBps), now);
    }
    // "At least every update_interval_ms": check a few times per interval, send what is due.
    const tick = Math.max(10, Math.floor(request.updateIntervalMs / 4));
    const timer = setInterval(() => this.heartbeat(sub, tick), tick);
    timer.unref();
    const done = (): void => {
      clearInterval(timer);
      this.closeStream(sub);
    };
    call.on('cancelled', done);
    call.on('close', done);
    call.on('error', done);
    call.on('finish', done);
    return sub;
  }

  /** Forgets a stream (client gone or server closing). Idempotent. */
  closeStream(sub: StreamSubscriber): void {
    sub.markClosed();
    if (!this.streams.delete(sub)) return;
    this.options.metrics.activeStreams.set(this.streams.size);
    for (const pairId of sub.pairs.keys()) {
      for (const side of SIDES) this.upstreams[side].release(pairId);
      const ps = this.pairs.get(pairId);
      if (ps === undefined) continue;
      ps.streams.delete(sub);
      if (ps.streams.size === 0) this.pairs.delete(pairId);
    }
  }

  /** Interval re-sends skipped while the process was overloaded. */
  shedHeartbeats = 0;

  private heartbeat(sub: StreamSubscriber, tick: number): void {
    if (sub.isClosed) return;
    // Changes still go out as they come (refresh); only the "at least every interval" repeats wait.
    if (this.options.load?.overloaded === true) {
      this.shedHeartbeats++;
      return;
    }
    const now = Date.now();
    for (const pairId of sub.pairs.keys()) {
      if (now - sub.lastSentAt(pairId) + tick <= sub.updateIntervalMs) continue;
      const ps = this.pairs.get(pairId);
      if (ps?.current === undefined) continue;
      sub.send(pairId, this.bodyFor(ps, sub.slippageBps), now);
    }
  }

  private bodyFor(ps: PairState, slippageBps: number): Buffer {
    let body = ps.bodies.get(slippageBps);
    if (body === undefined) {
      body = this.encode(withSlippage(ps.current!, slippageBps));
      ps.bodies.set(slippageBps, body);
    }
    return body;
  }

  // ---- upstream events ----------------------------------------------------------------------

  private onQuote(side: Side, quote: WireQuote, now: number): void {
    const result = this.tables[side].offer(quote, now);
    const quotedAt = Number(quote.quotedAtUnixMs);
    if (quotedAt > 0) this.options.metrics.upstreamLatency.observe({ upstream: side }, Math.max(0, now - quotedAt) / 1000);
    if (result === 'duplicate') this.options.metrics.duplicates.inc({ upstream: side });
    this.resolveWaiters(side, quote.pairId, 'arrived');
    const ps = this.pairs.get(quote.pairId);
    if (ps !== undefined) this.refresh(ps, now, result === 'changed');
  }

  private onUpstreamState(side: Side): void {
    if (this.upstreams[side].isDown()) {
      for (const [key, set] of this.waiters) {
        if (!key.startsWith(`${side}|`)) continue;
        for (const resolve of set) resolve('down');
      }
    }
    this.sweep();
  }

  private sweep(): void {
    const now = Date.now();
    for (const ps of this.pairs.values()) this.refresh(ps, now, false);
  }

  /** Drops table entries nobody has asked for since the upstreams stopped quoting them. */
  private cleanup(): void {
    const cutoff = Date.now() - PAIR_IDLE_DROP_MS;
    for (const side of SIDES) this.tables[side].dropOlderThan(cutoff, (pairId) => this.pairs.has(pairId));
  }

  // ---- aggregation --------------------------------------------------------------------------

  /** A held entry that may be used: fresh, and from a call that streams (the pair's own call before the set takes over). */
  private freshEntry(side: Side, pairId: string, now: number): HeldEntry | undefined {
    return this.tables[side].fresh(pairId, now, this.upstreams[side].isConnected(pairId));
  }

  /** A side's contribution from what is held now. */
  private heldSide(side: Side, pairId: string, now: number): SourceSide {
    const entry = this.freshEntry(side, pairId, now);
    if (entry?.quote !== undefined) return { quote: entry.quote };
    if (entry?.error !== undefined) return { error: entry.error };
    const upstream = this.upstreams[side];
    return { error: unavailableError(side, upstream.isDown() ? 'stream down' : 'no fresh quote for the pair') };
  }

  private usageKey(pairId: string, now: number): string {
    let key = '';
    for (const side of SIDES) {
      const entry = this.freshEntry(side, pairId, now);
      key += entry === undefined ? '-|' : entry.quote !== undefined ? 'q|' : `e:${entry.error?.code}|`;
    }
    return key;
  }

  /**
   * Re-aggregates a streamed pair when a held quote changed or what may be used changed, and
   * pushes the result to its streams. Nothing is pushed before the first quote or error arrives.
   */
  private refresh(ps: PairState, now: number, changed: boolean): void {
    const usage = this.usageKey(ps.pair.pairId, now);
    if (!changed && usage === ps.usage) return;
    ps.usage = usage;
    if (ps.current === undefined && usage === '-|-|') return;
    ps.current = this.build(ps.pair, this.heldSide('local', ps.pair.pairId, now), this.heldSide('external', ps.pair.pairId, now), now);
    ps.bodies.clear();
    for (const sub of ps.streams) sub.send(ps.pair.pairId, this.bodyFor(ps, sub.slippageBps), now);
  }

  /** Aggregates, counts, logs a large price difference and considers publication. */
  private build(pair: PairKey, local: SourceSide, external: SourceSide, now: number, oracle = this.options.oracle?.pairPrice(pair.inputMint, pair.outputMint)): WireAggregatedQuote {
    const { config } = this.options;
    const quote = aggregate({
      pair,
      local,
      external,
      oracle,
      scoring: { scoringEnabled: config.enableConfidenceScoring, defaultProviderUptime: config.defaultProviderUptime },
      now,
    });
    this.stats.countAggregation(quote, config.enableConfidenceScoring);
    if (quote.sourceClass === SourceClassName.Both && Math.abs(quote.priceDifferencePct) > PRICE_DIFFERENCE_LOG_PCT) {
      const suppressed = this.logThrottle.take(pair.pairId);
      if (suppressed >= 0) {
        this.options.logger.info(
          { pairId: pair.pairId, priceDifferencePct: quote.priceDifferencePct, local: quote.localQuote?.outputAmount, external: quote.externalQuote?.outputAmount, suppressed },
          'local and external quotes differ by more than 1%',
        );
      }
    }
    this.publication.consider(quote);
    return quote;
  }

  private want(pair: PairKey, hold: boolean): void {
    for (const side of SIDES) this.upstreams[side].want(pair, hold);
    this.options.oracle?.track([pair.inputMint, pair.outputMint]);
  }

  // ---- unary --------------------------------------------------------------------------------

  /**
   * GetAggregatedQuote: held fresh quotes answer at once; a missing source is waited for up to its
   * timeout, all within 150 ms. Throws TpError (NOT_FOUND, UNAVAILABLE, DEADLINE) when neither
   * source has a quote.
   */
  async getAggregatedQuote(pair: PairKey, slippageBps: number, parent: Context = otelContext.active()): Promise<WireAggregatedQuote> {
    if (this.closed) throw shuttingDown();
    const start = Date.now();
    const deadline = start + (this.options.unaryDeadlineMs ?? GET_AGGREGATED_QUOTE_TIMEOUT_MS);
    this.want(pair, false);
    const [local, external] = await Promise.all(SIDES.map((side) => this.sideWithin(side, pair.pairId, deadline, parent)));
    if (local!.quote === undefined && external!.quote === undefined) {
      this.stats.countRequest(RequestKind.Failed);
      throw noQuoteError(local!.error!, external!.error!);
    }
    const oracle = this.options.oracle?.pairPrice(pair.inputMint, pair.outputMint);
    const key = `${pair.pairId}|${slippageBps}`;
    const memo = this.unaryMemo.get(key);
    if (
      memo !== undefined &&
      memo.local === (local!.quote ?? local!.error) &&
      memo.external === (external!.quote ?? external!.error) &&
      memo.oracleAtomPrice === oracle?.atomPrice
    ) {
      this.stats.countRequest(AggregatorStats.kindOf(memo.quote));
      return memo.quote;
    }
    const quote = withSlippage(this.build(pair, local!, external!, Date.now(), oracle), slippageBps);
    if (this.unaryMemo.size >= UNARY_MEMO_MAX_ENTRIES) this.unaryMemo.clear();
    this.unaryMemo.set(key, { local: local!.quote ?? local!.error, external: external!.quote ?? external!.error, oracleAtomPrice: oracle?.atomPrice, quote });
    this.stats.countRequest(AggregatorStats.kindOf(quote));
    return quote;
  }

  /** getAggregatedQuote's answer encoded as an AggregatedQuote message, once per built quote. */
  async getAggregatedQuoteBody(pair: PairKey, slippageBps: number, parent: Context = otelContext.active()): Promise<Buffer> {
    const quote = await this.getAggregatedQuote(pair, slippageBps, parent);
    let body = this.unaryBodies.get(quote);
    if (body === undefined) {
      body = this.encode(quote);
      this.unaryBodies.set(quote, body);
    }
    return body;
  }

  /** One source for a unary call: held, or awaited up to its timeout (and the 150 ms deadline). */
  private async sideWithin(side: Side, pairId: string, deadline: number, parent: Context): Promise<SourceSide> {
    const upstream = this.upstreams[side];
    const timeoutMs = side === 'local' ? this.options.config.localTimeout : this.options.config.externalTimeout;
    const held = this.freshEntry(side, pairId, Date.now());
    if (held !== undefined) return held.quote !== undefined ? { quote: held.quote } : { error: held.error };
    if (upstream.isDown()) return { error: unavailableError(side, 'stream down') };
    const span = tracer().startSpan(UPSTREAM_WAIT_SPAN, { kind: SpanKind.CLIENT, attributes: { 'tidepool.upstream.source': side, 'tidepool.upstream.address': upstream.address, 'tidepool.pair_id': pairId } }, parent);
    // Cold start (nothing delivered since the aggregator started): the subscription is still
    // opening, so the call waits for it up to its whole deadline (150 ms), not the source's
    // timeout, and says UNAVAILABLE with the reason if it is still not there.
    const cold = !upstream.warm;
    const waitMs = Math.max(0, cold ? deadline - Date.now() : Math.min(timeoutMs, deadline - Date.now()));
    const outcome = await this.waitFor(side, pairId, waitMs);
    span.setAttribute('tidepool.wait.outcome', outcome);
    span.end();
    const entry = this.freshEntry(side, pairId, Date.now());
    if (entry !== undefined) return entry.quote !== undefined ? { quote: entry.quote } : { error: entry.error };
    if (outcome === 'down' || upstream.isDown()) return { error: unavailableError(side, 'stream down') };
    if (cold) return { error: unavailableError(side, `subscription not warm yet: no quote since the aggregator started (waited ${waitMs} ms)`) };
    upstream.countTimeout();
    return { error: deadlineError(side, timeoutMs) };
  }

  private waitFor(side: Side, pairId: string, ms: number): Promise<WaitOutcome> {
    const key = `${side}|${pairId}`;
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(key, set);
      }
      const finish = (outcome: WaitOutcome): void => {
        clearTimeout(timer);
        set!.delete(finish);
        if (set!.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
        resolve(outcome);
      };
      const timer = setTimeout(() => finish('timeout'), ms);
      set.add(finish);
    });
  }

  private resolveWaiters(side: Side, pairId: string, outcome: WaitOutcome): void {
    const set = this.waiters.get(`${side}|${pairId}`);
    if (set === undefined) return;
    for (const resolve of [...set]) resolve(outcome);
  }

  /**
   * The held view of a pair (GetConfidenceBreakdown by pair_id): built from fresh held quotes;
   * undefined when neither source holds one.
   */
  heldAggregation(pairId: string): WireAggregatedQuote | undefined {
    const now = Date.now();
    const local = this.heldSide('local', pairId, now);
    const external = this.heldSide('external', pairId, now);
    const any = local.quote ?? external.quote;
    if (any === undefined) return undefined;
    const pair: PairKey = { pairId, inputMint: any.inputMint, outputMint: any.outputMint, amount: BigInt(any.inputAmount) };
    return aggregate({
      pair,
      local,
      external,
      oracle: this.options.oracle?.pairPrice(pair.inputMint, pair.outputMint),
      scoring: { scoringEnabled: this.scoringEnabled, defaultProviderUptime: this.options.config.defaultProviderUptime },
      now,
    });
  }

  /** Ends every stream, stops the timers and closes the upstream channels. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    clearInterval(this.cleanupTimer);
    for (const sub of [...this.streams]) {
      sub.end();
      this.closeStream(sub);
    }
    for (const [, set] of this.waiters) for (const resolve of [...set]) resolve('down');
    for (const side of SIDES) this.upstreams[side].close();
  }
}
