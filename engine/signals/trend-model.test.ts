import { describe, expect, it } from 'vitest';

import type { MarketEvent, TradeSignal } from '../messages/index.js';
import { decodeTradeSignal, encodeTradeSignal } from '../messages/index.js';
import { TrendModel } from './trend-model.js';

/** The built-in model on scripted price paths: it learns structure where there is some, and only then speaks. */

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const H = 60_000;
const START = 1_800_000_000_000;

function event(i: number, price: number, over: Partial<MarketEvent> = {}): MarketEvent {
  return { version: 1, id: `${POOL}:${i}:sig:pool_update`, type: 'pool_update', protocol: 'dexa_amm', poolAddress: POOL, tokenA: SOL, tokenB: USDC, timestamp: START + i * (H / 16), slot: String(i), data: { price }, ...over };
}

/** A price oscillating around 150 with a period of 8 horizons, one event every H/16. */
function sinePath(n: number): MarketEvent[] {
  return Array.from({ length: n }, (_, i) => event(i, 150 * Math.exp(0.02 * Math.sin((2 * Math.PI * i) / 128))));
}

/** A seeded random walk (xorshift), the same every run. */
function randomWalk(n: number, seed = 7): MarketEvent[] {
  let s = seed;
  let logP = Math.log(150);
  return Array.from({ length: n }, (_, i) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    logP += ((s >>> 0) / 2 ** 32 - 0.5) * 0.004;
    return event(i, Math.exp(logP));
  });
}

function run(model: TrendModel, events: MarketEvent[]): TradeSignal[] {
  return events.flatMap((e) => model.observe(e));
}

describe('trend model', () => {
  it('learns a cyclical price: its hit rate rises well above chance and its signals say where the price goes', () => {
    const model = new TrendModel({ horizonMs: H, quoteMints: [USDC] });
    const events = sinePath(128 * 40);
    const signals = run(model, events);
    const stats = model.stats();
    expect(stats['samples']).toBeGreaterThan(500);
    expect(stats['hitRate']).toBeGreaterThan(0.75);
    expect(signals.length).toBeGreaterThan(100);
    expect(new Set(signals.map((s) => s.direction))).toEqual(new Set(['buy', 'sell']));
    // each signal against the price one horizon after it
    const priceAt = (t: number): number => events.filter((e) => e.timestamp <= t).at(-1)!.data['price'] as number;
    const lastTime = events.at(-1)!.timestamp;
    const judged = signals.filter((s) => s.createdAt + H <= lastTime);
    const right = judged.filter((s) => (priceAt(s.createdAt + H) > priceAt(s.createdAt)) === (s.direction === 'buy'));
    expect(right.length / judged.length).toBeGreaterThan(0.75);
    for (const s of signals.slice(0, 5)) {
      expect(decodeTradeSignal(encodeTradeSignal(s))).toEqual(s);
      expect(s).toMatchObject({ source: 'trend', token: SOL, quoteMint: USDC, horizonMs: H, pool: POOL });
      expect(s.confidence).toBeGreaterThanOrEqual(0.55);
    }
    // at most one signal per pool per horizon
    for (let i = 1; i < signals.length; i++) expect(signals[i]!.createdAt - signals[i - 1]!.createdAt).toBeGreaterThanOrEqual(H);
  });

  it('stays near chance on a random walk and then says (almost) nothing; it is silent before its warm-up', () => {
    const model = new TrendModel({ horizonMs: H });
    const events = randomWalk(128 * 40);
    const signals = run(model, events);
    const stats = model.stats();
    expect(stats['hitRate']).toBeGreaterThan(0.4);
    expect(stats['hitRate']).toBeLessThan(0.6);
    expect(signals.length).toBeLessThan(10); // the cyclical path of the same length gives about 300
    // warm-up: 4H of history, then 100 scored predictions (sampled every H/8) before the first signal
    const sine = run(new TrendModel({ horizonMs: H }), sinePath(128 * 40));
    expect(sine[0]!.createdAt - START).toBeGreaterThanOrEqual(4 * H + (50 + 100) * (H / 8));
  });

  it('is a function of the events alone: two runs give the same signals; it reads a pool quoted in its token A the other way round', () => {
    const events = sinePath(128 * 10);
    expect(run(new TrendModel({ horizonMs: H }), events)).toEqual(run(new TrendModel({ horizonMs: H }), events));
    const flipped = events.map((e) => ({ ...e, tokenA: USDC, tokenB: SOL, data: { price: 1 / (e.data['price'] as number) } }));
    const a = run(new TrendModel({ horizonMs: H, quoteMints: [USDC] }), events);
    const b = run(new TrendModel({ horizonMs: H, quoteMints: [USDC] }), flipped);
    expect(b.map((s) => [s.token, s.quoteMint, s.direction, s.createdAt])).toEqual(a.map((s) => [s.token, s.quoteMint, s.direction, s.createdAt]));
    expect(run(new TrendModel({ horizonMs: H }), events.map((e) => ({ ...e, type: 'large_swap' as const })))).toEqual([]);
  });
});
