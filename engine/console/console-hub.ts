/**
 * The console's live state and its fan-out: it polls each source at its own pace, keeps the newest
 * value of each panel, and tells its listeners (the WebSocket clients) about every change.
 *
 * Messages (JSON, one per WebSocket frame):
 *   {type:"snapshot", state}                  at connect: every panel
 *   {type:"services", services}               health / readiness changed
 *   {type:"pools", pools}                     a pool's state, slot or freshness changed (not its age alone:
 *                                             the page ages the rows itself from the ages sent)
 *   {type:"latency", point}                   a new chart point (every metrics interval)
 *   {type:"opportunity", opportunity}         one published opportunity
 *   {type:"platform", platform}               trades, paper trades, wallets, transfers changed
 * A quiet pool table is not resent at every poll: ages grow on their own, so only a change of
 * anything else (a new state, a pool turning stale) sends the table again.
 */
import type { Logger } from '../obs/index.js';
import { IntervalQuantiles, type LatencyPoint, type LatencySeriesSource } from './latency-window.js';
import { EMPTY_PLATFORM_VIEW, readPlatformView, type PlatformFeedOptions, type PlatformView } from './platform-feed.js';
import type { OpportunityRow } from './opportunity-feed.js';
import type { PoolRow, PoolRowSource } from './pool-rows.js';
import { checkServices, type ServiceProbe, type ServiceStatus } from './service-probes.js';

export const OPPORTUNITIES_KEPT = 200;
/** Least time between two change-driven reads of the pools (a busy chain changes them constantly). */
export const MIN_CHANGE_POLL_MS = 50;

export interface ConsoleState {
  services: ServiceStatus[];
  pools: PoolRow[];
  latency: LatencyPoint[];
  opportunities: OpportunityRow[];
  /** 'off' (no bus configured), or the feed's status. */
  opportunityFeed: string;
  platform: PlatformView;
}

export type ConsoleMessage =
  | { type: 'snapshot'; state: ConsoleState }
  | { type: 'services'; services: ServiceStatus[] }
  | { type: 'pools'; pools: PoolRow[] }
  | { type: 'latency'; point: LatencyPoint }
  | { type: 'opportunity'; opportunity: OpportunityRow; feed: string }
  | { type: 'platform'; platform: PlatformView };

export interface ConsoleHubOptions {
  services: readonly ServiceProbe[];
  pools: PoolRowSource;
  /** Quote latency (p50 / p99) and stream → cache latency sources; absent: that chart stays empty. */
  latency: { quote?: LatencySeriesSource; stream?: LatencySeriesSource };
  platform?: PlatformFeedOptions;
  logger: Logger;
  /** Poll intervals, ms. */
  servicesMs?: number;
  poolsMs?: number;
  metricsMs?: number;
  platformMs?: number;
  /** How far back the latency charts go. Default 10 minutes. */
  windowMs?: number;
}

export class ConsoleHub {
  private readonly state: ConsoleState = { services: [], pools: [], latency: [], opportunities: [], opportunityFeed: 'off', platform: EMPTY_PLATFORM_VIEW };
  private readonly listeners = new Set<(m: ConsoleMessage) => void>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly sent = new Map<string, string>();
  private readonly quoteLatency: IntervalQuantiles | undefined;
  private readonly streamLatency: IntervalQuantiles | undefined;
  private closed = false;
  private offChange: (() => void) | undefined;
  private poolPoll: Promise<void> | undefined;
  private poolChangeTimer: NodeJS.Timeout | undefined;
  private lastPoolPoll = 0;

  constructor(private readonly options: ConsoleHubOptions) {
    this.quoteLatency = options.latency.quote === undefined ? undefined : new IntervalQuantiles(options.latency.quote);
    this.streamLatency = options.latency.stream === undefined ? undefined : new IntervalQuantiles(options.latency.stream);
  }

  snapshot(): ConsoleState {
    return this.state;
  }

  subscribe(listener: (m: ConsoleMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes one published opportunity (from the OpportunityFeed). */
  addOpportunity(row: OpportunityRow, feed: string): void {
    this.state.opportunities.unshift(row);
    if (this.state.opportunities.length > OPPORTUNITIES_KEPT) this.state.opportunities.length = OPPORTUNITIES_KEPT;
    this.state.opportunityFeed = feed;
    this.emit({ type: 'opportunity', opportunity: row, feed });
  }

  setOpportunityFeed(status: string): void {
    this.state.opportunityFeed = status;
  }

  /** Runs every poll once (so the first snapshot is complete), then on its interval. */
  async start(): Promise<void> {
    const o = this.options;
    await Promise.all([this.pollServices(), this.pollPools(), this.pollMetrics(), this.pollPlatform()]);
    this.every('services', o.servicesMs ?? 1_000, () => this.pollServices());
    this.every('pools', o.poolsMs ?? 200, () => this.pollPools());
    // A source that reports changes (the in-process pool cache) is read again soon after each one,
    // at most once per MIN_CHANGE_POLL_MS: a swap shows without waiting for the interval.
    this.offChange = o.pools.onChange?.(() => this.poolsChanged());
    this.every('metrics', o.metricsMs ?? 2_000, () => this.pollMetrics());
    this.every('platform', o.platformMs ?? 2_000, () => this.pollPlatform());
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offChange?.();
    clearTimeout(this.poolChangeTimer);
    for (const t of this.timers.values()) clearTimeout(t);
    this.listeners.clear();
  }

  /** Runs `poll` every `ms` after the previous run ended (never two at once). */
  private every(name: string, ms: number, poll: () => Promise<void>): void {
    const run = (): void => {
      if (this.closed) return;
      const t = setTimeout(() => {
        poll()
          .catch((err: unknown) => this.options.logger.warn({ err }, 'console poll failed'))
          .finally(run);
      }, ms);
      t.unref();
      this.timers.set(name, t);
    };
    run();
  }

  private emit(message: ConsoleMessage): void {
    for (const l of this.listeners) {
      try {
        l(message);
      } catch (err) {
        this.options.logger.warn({ err }, 'console listener failed');
      }
    }
  }

  /** Emits `message` only when `key`'s content differs from what was sent last. */
  private emitChanged(key: string, content: unknown, message: ConsoleMessage): void {
    const text = JSON.stringify(content);
    if (this.sent.get(key) === text) return;
    this.sent.set(key, text);
    this.emit(message);
  }

  private async pollServices(): Promise<void> {
    const services = await checkServices(this.options.services);
    this.state.services = services;
    // checkedAt and probe latency change every time: compare what the panel shows.
    this.emitChanged(
      'services',
      services.map((s) => [s.name, s.health.state, s.health.status, s.health.detail, s.ready?.state, s.ready?.status]),
      { type: 'services', services },
    );
  }

  /** Flags a pool change (called on the cache's hot path): schedules one read, never runs it here. */
  private poolsChanged(): void {
    if (this.poolChangeTimer !== undefined || this.closed) return;
    const wait = Math.max(0, this.lastPoolPoll + MIN_CHANGE_POLL_MS - Date.now());
    this.poolChangeTimer = setTimeout(() => {
      this.poolChangeTimer = undefined;
      // After a read in flight (which may have looked before the change), a read of its own.
      (this.poolPoll ?? Promise.resolve())
        .catch(() => undefined)
        .then(() => this.pollPools())
        .catch((err: unknown) => this.options.logger.warn({ err }, 'console poll failed'));
    }, wait);
    this.poolChangeTimer.unref();
  }

  /** One read of the pools at a time: a read asked for while one runs joins it. */
  private pollPools(): Promise<void> {
    this.poolPoll ??= this.readPools().finally(() => (this.poolPoll = undefined));
    return this.poolPoll;
  }

  private async readPools(): Promise<void> {
    this.lastPoolPoll = Date.now();
    const pools = await this.options.pools.rows();
    this.state.pools = pools;
    this.emitChanged(
      'pools',
      pools.map((p) => ({ ...p, ageMs: null })),
      { type: 'pools', pools },
    );
  }

  private async pollMetrics(): Promise<void> {
    const scrape = async (q: IntervalQuantiles | undefined): Promise<[number | null, number | null]> => {
      if (q === undefined) return [null, null];
      try {
        const res = await fetch(q.source.url, { signal: AbortSignal.timeout(1_500) });
        return q.next(res.ok ? await res.text() : undefined);
      } catch {
        return q.next(undefined);
      }
    };
    const [[quoteP50, quoteP99], [streamP50, streamP99]] = await Promise.all([scrape(this.quoteLatency), scrape(this.streamLatency)]);
    const point: LatencyPoint = { t: Date.now(), quoteP50, quoteP99, streamP50, streamP99 };
    const cutoff = point.t - (this.options.windowMs ?? 600_000);
    const latency = this.state.latency;
    latency.push(point);
    while (latency.length > 0 && latency[0]!.t < cutoff) latency.shift();
    this.emit({ type: 'latency', point });
  }

  private async pollPlatform(): Promise<void> {
    if (this.options.platform === undefined) return;
    const platform = await readPlatformView(this.options.platform);
    this.state.platform = platform;
    this.emitChanged('platform', platform, { type: 'platform', platform });
  }
}
