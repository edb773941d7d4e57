/**
 * The built-in signal model (source `trend`): per pool, an online logistic regression that learns
 * from the pool's own price history whether the price will be higher one horizon from now, and
 * says so when it is confident enough.
 *
 * Inputs, per pool_update event (its `data.price` and `timestamp`; other events are ignored):
 * - the price of the pool's token in its quote mint (a pool whose token A is one of `quoteMints`
 *   and token B is not is read the other way round, 1 / price);
 * - features at time t, with H the horizon and σ the running root mean square of H-returns:
 *     x1 = r(H/4) / σ, x2 = r(H) / σ, x3 = r(4H) / σ   (r(L): log price now − log price at t − L)
 *     x4 = (log price − its exponential average over 4H) / σ
 *   each clipped to ±5; a pool needs 4H of history and a σ before it has features.
 * Learning: every H/8 at most, the features are kept as a sample; one horizon later it is labelled
 * by the move since (up 1, down 0; no move, no label) and the model takes one step on it. Its hit
 * rate counts the labelled samples predicted after the warm-up.
 * Output: after `warmupSamples` (50) labelled samples, and while the pool's predictions were right
 * at least `minHitRate` (0.6) of the time over its last `hitWindow` (400) scored samples (at least
 * 100), at most one signal per pool every `minIntervalMs` (default H): `buy` with confidence p
 * when p = σ(w·x + b) ≥ `minConfidence` (0.55),
 * `sell` with confidence 1 − p when 1 − p ≥ it. The signal's id derives from the event's, its
 * createdAt is the event's timestamp, its details carry the features, p and the model's figures.
 *
 * Everything is a function of the events in order (never the wall clock), so a replay gives the
 * same signals. The model is small on purpose: it shows the plumbing and learns real structure
 * (momentum or mean reversion), not an edge; replace it with your own (signal-model.ts).
 */
import { deterministicUuid, type MarketEvent, type TradeSignal } from '../messages/index.js';
import { OnlineLogistic } from './online-logistic.js';
import { PriceHistory } from './price-history.js';
import type { SignalModel } from './signal-model.js';

export interface TrendModelOptions {
  source?: string;
  horizonMs?: number;
  warmupSamples?: number;
  minConfidence?: number;
  minIntervalMs?: number;
  /** The pool's hit rate over its last `hitWindow` (default 400, at least 100 scored) predictions a signal needs; default 0.6. */
  minHitRate?: number;
  hitWindow?: number;
  /** Mints that are the quote side of a pair (USDC, wrapped SOL…). */
  quoteMints?: readonly string[];
  learningRate?: number;
  l2?: number;
}

const FEATURES = 4;
const CLIP = 5;
const MAX_PENDING = 1_024;
const MIN_SCORED = 100;
/** Weight of the newest H-return in σ². */
const VOL_WEIGHT = 0.05;

interface Sample {
  at: number;
  logPrice: number;
  x: number[];
  /** The model's p when the sample was taken after the warm-up. */
  p?: number;
}

interface PoolModel {
  token: string;
  quoteMint: string;
  invert: boolean;
  history: PriceHistory;
  model: OnlineLogistic;
  pending: Sample[];
  variance: number;
  slow?: { at: number; value: number };
  lastSampleAt: number;
  lastSignalAt: number;
  /** The last `hitWindow` scored predictions, 1 = right. */
  recent: number[];
  recentHits: number;
}

export class TrendModel implements SignalModel {
  readonly source: string;
  private readonly horizon: number;
  private readonly warmup: number;
  private readonly threshold: number;
  private readonly interval: number;
  private readonly minHitRate: number;
  private readonly hitWindow: number;
  private readonly quoteMints: ReadonlySet<string>;
  private readonly pools = new Map<string, PoolModel>();
  private hits = 0;
  private scored = 0;
  private emitted = 0;

  constructor(private readonly options: TrendModelOptions = {}) {
    this.source = options.source ?? 'trend';
    this.horizon = options.horizonMs ?? 60_000;
    this.warmup = options.warmupSamples ?? 50;
    this.threshold = options.minConfidence ?? 0.55;
    this.interval = options.minIntervalMs ?? this.horizon;
    this.minHitRate = options.minHitRate ?? 0.6;
    this.hitWindow = options.hitWindow ?? 400;
    this.quoteMints = new Set(options.quoteMints ?? []);
  }

  observe(event: MarketEvent): TradeSignal[] {
    if (event.type !== 'pool_update') return [];
    const raw = event.data['price'];
    if (typeof raw !== 'number' || !(raw > 0)) return [];
    const pool = this.poolOf(event);
    const price = pool.invert ? 1 / raw : raw;
    const t = event.timestamp;
    if (!pool.history.add(t, price)) return [];
    const logPrice = pool.history.latestLog()!;
    this.label(pool, t);
    const x = this.features(pool, t, logPrice);
    if (x === undefined) return [];
    const warm = pool.model.samples >= this.warmup;
    const p = warm ? pool.model.predict(x) : undefined;
    if (t - pool.lastSampleAt >= this.horizon / 8) {
      pool.lastSampleAt = t;
      pool.pending.push(p === undefined ? { at: t, logPrice, x } : { at: t, logPrice, x, p });
      if (pool.pending.length > MAX_PENDING) pool.pending.shift();
    }
    if (p === undefined || t - pool.lastSignalAt < this.interval || !this.trusted(pool)) return [];
    const direction = p >= this.threshold ? 'buy' : 1 - p >= this.threshold ? 'sell' : undefined;
    if (direction === undefined) return [];
    pool.lastSignalAt = t;
    this.emitted++;
    const confidence = Math.round((direction === 'buy' ? p : 1 - p) * 10_000) / 10_000;
    return [
      {
        version: 1,
        id: deterministicUuid(`${this.source}:${event.id}`),
        source: this.source,
        token: pool.token,
        quoteMint: pool.quoteMint,
        direction,
        confidence,
        horizonMs: this.horizon,
        createdAt: t,
        pool: event.poolAddress,
        details: { p, features: x, samples: pool.model.samples, hitRate: this.hitRate() },
      },
    ];
  }

  stats(): Record<string, number> {
    let samples = 0;
    for (const pool of this.pools.values()) samples += pool.model.samples;
    return { pools: this.pools.size, samples, scored: this.scored, hitRate: this.hitRate(), signals: this.emitted };
  }

  private hitRate(): number {
    return this.scored === 0 ? 0 : this.hits / this.scored;
  }

  private poolOf(event: MarketEvent): PoolModel {
    let pool = this.pools.get(event.poolAddress);
    if (pool === undefined) {
      const invert = this.quoteMints.has(event.tokenA) && !this.quoteMints.has(event.tokenB);
      pool = {
        token: invert ? event.tokenB : event.tokenA,
        quoteMint: invert ? event.tokenA : event.tokenB,
        invert,
        history: new PriceHistory(5 * this.horizon),
        model: new OnlineLogistic({ features: FEATURES, ...(this.options.learningRate === undefined ? {} : { learningRate: this.options.learningRate }), ...(this.options.l2 === undefined ? {} : { l2: this.options.l2 }) }),
        pending: [],
        variance: 0,
        lastSampleAt: Number.NEGATIVE_INFINITY,
        lastSignalAt: Number.NEGATIVE_INFINITY,
        recent: [],
        recentHits: 0,
      };
      this.pools.set(event.poolAddress, pool);
    }
    return pool;
  }

  /** Whether the pool's recent predictions were right often enough to speak (at least 100 scored, or the whole window). */
  private trusted(pool: PoolModel): boolean {
    return pool.recent.length >= Math.min(this.hitWindow, MIN_SCORED) && pool.recentHits / pool.recent.length >= this.minHitRate;
  }

  /** Labels the samples whose horizon has passed by the move since, and learns from them. */
  private label(pool: PoolModel, t: number): void {
    while (pool.pending.length > 0 && pool.pending[0]!.at + this.horizon <= t) {
      const s = pool.pending.shift()!;
      const after = pool.history.logAt(s.at + this.horizon);
      if (after === undefined || after === s.logPrice) continue;
      const up = after > s.logPrice ? 1 : 0;
      if (s.p !== undefined) {
        const hit = (s.p >= 0.5 ? 1 : 0) === up ? 1 : 0;
        this.scored++;
        this.hits += hit;
        pool.recent.push(hit);
        pool.recentHits += hit;
        if (pool.recent.length > this.hitWindow) pool.recentHits -= pool.recent.shift()!;
      }
      pool.model.learn(s.x, up);
    }
  }

  /** The features at `t`, or undefined while the pool lacks 4H of history or a σ. */
  private features(pool: PoolModel, t: number, logPrice: number): number[] | undefined {
    const h = this.horizon;
    const slowWeight = pool.slow === undefined ? 1 : 1 - Math.exp(-(t - pool.slow.at) / (4 * h));
    pool.slow = { at: t, value: pool.slow === undefined ? logPrice : pool.slow.value + slowWeight * (logPrice - pool.slow.value) };
    const atH = pool.history.logAt(t - h);
    if (atH === undefined) return undefined;
    const rH = logPrice - atH;
    pool.variance = pool.variance === 0 ? rH * rH : (1 - VOL_WEIGHT) * pool.variance + VOL_WEIGHT * rH * rH;
    const sigma = Math.sqrt(pool.variance);
    const atQuarter = pool.history.logAt(t - h / 4);
    const at4H = pool.history.logAt(t - 4 * h);
    if (!(sigma > 0) || atQuarter === undefined || at4H === undefined) return undefined;
    const clip = (v: number): number => Math.max(-CLIP, Math.min(CLIP, v / sigma));
    return [clip(logPrice - atQuarter), clip(rH), clip(logPrice - at4H), clip(logPrice - pool.slow.value)];
  }
}
