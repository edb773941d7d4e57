/**
 * Turns successive states of a pool into spec 03's MarketEvents and PriceUpdates.
 *
 * For each new state of a pool (a newer slot than the last one seen; older or equal ones are
 * ignored, the scanner's slot rule) against the previous one:
 *
 * | type               | when                                                                                   |
 * |--------------------|----------------------------------------------------------------------------------------|
 * | `pool_update`      | always                                                                                 |
 * | `large_swap`       | the reserves moved in opposite directions (a swap) and the input is at least            |
 * |                    | `largeSwapBps` of the input side's reserve before it (default 100 bps = 1%)             |
 * | `liquidity_change` | the reserves moved in the same direction (a deposit or a withdrawal) by at least        |
 * |                    | `liquidityChangeBps` of either reserve (default 50 bps), or a concentrated pool's active |
 * |                    | liquidity changed by that much while its price did not move                             |
 *
 * The first state of a pool only gives `pool_update` (nothing to compare with). Several swaps in one
 * slot show as their net effect: the scanner reads the account once per transaction batch.
 *
 * `data` per type (amounts decimal strings, prices raw: token B atoms per token A atom):
 * - pool_update: `signature`, `reserveA`, `reserveB`, `price`, `fee`, and `liquidity` (CL pools);
 * - large_swap: `signature`, `inputMint`, `outputMint`, `amountIn`, `amountOut`, `shareBps` (input
 *   as a share of its reserve), `priceBefore`, `priceAfter`, `priceChangeBps`;
 * - liquidity_change: `signature`, `kind` (`add` | `remove`), `reserveA`/`reserveB` before and after,
 *   `liquidityBefore`/`liquidityAfter` (CL pools), `changeBps`.
 *
 * Volume: every swap seen (any size) adds its two legs to the rolling 24 h volume of each token
 * (hourly buckets) and of the pool (in token B atoms, the PriceUpdate's `volume24h`).
 */
import type { MarketEvent, MarketEventType, PriceSource, PriceUpdate } from '../messages/index.js';
import type { PoolObservation } from './pool-observation.js';

export interface DeriverThresholds {
  largeSwapBps: number;
  liquidityChangeBps: number;
}

export const DEFAULT_THRESHOLDS: DeriverThresholds = Object.freeze({ largeSwapBps: 100, liquidityChangeBps: 50 });

const HOUR_MS = 3_600_000;
const DAY_HOURS = 24;

/** Rolling 24 h sum and count in hourly buckets. */
class RollingVolume {
  private readonly sums = new Array<bigint>(DAY_HOURS).fill(0n);
  private readonly counts = new Array<number>(DAY_HOURS).fill(0);
  private readonly hours = new Array<number>(DAY_HOURS).fill(-1);

  add(amount: bigint, now: number): void {
    const hour = Math.floor(now / HOUR_MS);
    const i = hour % DAY_HOURS;
    if (this.hours[i] !== hour) {
      this.hours[i] = hour;
      this.sums[i] = 0n;
      this.counts[i] = 0;
    }
    this.sums[i]! += amount;
    this.counts[i]! += 1;
  }

  total(now: number): { volume: bigint; count: number } {
    const hour = Math.floor(now / HOUR_MS);
    let volume = 0n;
    let count = 0;
    for (let i = 0; i < DAY_HOURS; i++) {
      if (this.hours[i]! > hour - DAY_HOURS) {
        volume += this.sums[i]!;
        count += this.counts[i]!;
      }
    }
    return { volume, count };
  }
}

export interface Derived {
  events: MarketEvent[];
  prices: PriceUpdate[];
  /** Tokens whose 24 h volume changed, with their totals (for the `volume:` keys). */
  volumes: { token: string; volume: bigint; averageTradeSize: bigint }[];
}

function bps(part: bigint, whole: bigint): number {
  if (whole <= 0n) return part > 0n ? Number.POSITIVE_INFINITY : 0;
  return Number((part * 1_000_000n) / whole) / 100;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

export class MarketEventDeriver {
  private readonly last = new Map<string, PoolObservation>();
  private readonly tokenVolume = new Map<string, RollingVolume>();
  private readonly poolVolume = new Map<string, RollingVolume>();

  constructor(private readonly thresholds: DeriverThresholds = DEFAULT_THRESHOLDS) {}

  /** The events of `obs` (caused by transaction `signature`, empty when unknown). */
  observe(obs: PoolObservation, signature: string): Derived {
    const prev = this.last.get(obs.address);
    const out: Derived = { events: [], prices: [], volumes: [] };
    if (prev !== undefined && obs.slot <= prev.slot) return out;
    this.last.set(obs.address, obs);
    const now = obs.seenAt;
    const event = (type: MarketEventType, data: Record<string, unknown>): MarketEvent => ({
      version: 1,
      id: `${obs.address}:${obs.slot}:${signature === '' ? '-' : signature}:${type}`,
      type,
      protocol: obs.dex,
      poolAddress: obs.address,
      tokenA: obs.tokenA,
      tokenB: obs.tokenB,
      timestamp: now,
      slot: obs.slot.toString(),
      data,
    });
    const update: Record<string, unknown> = { signature, reserveA: obs.reserveA.toString(), reserveB: obs.reserveB.toString(), price: obs.price, fee: obs.fee };
    if (obs.liquidity !== undefined) update['liquidity'] = obs.liquidity.toString();
    out.events.push(event('pool_update', update));

    if (prev !== undefined) {
      const dA = obs.reserveA - prev.reserveA;
      const dB = obs.reserveB - prev.reserveB;
      if ((dA > 0n && dB < 0n) || (dA < 0n && dB > 0n)) {
        const aIn = dA > 0n;
        const amountIn = aIn ? dA : dB;
        const amountOut = aIn ? -dB : -dA;
        const reserveIn = aIn ? prev.reserveA : prev.reserveB;
        this.addVolume(obs.tokenA, abs(dA), now, out);
        this.addVolume(obs.tokenB, abs(dB), now, out);
        this.volumeOf(this.poolVolume, obs.address).add(abs(dB), now);
        const shareBps = bps(amountIn, reserveIn);
        if (shareBps >= this.thresholds.largeSwapBps) {
          out.events.push(
            event('large_swap', {
              signature,
              inputMint: aIn ? obs.tokenA : obs.tokenB,
              outputMint: aIn ? obs.tokenB : obs.tokenA,
              amountIn: amountIn.toString(),
              amountOut: amountOut.toString(),
              shareBps,
              priceBefore: prev.price,
              priceAfter: obs.price,
              priceChangeBps: prev.price > 0 ? ((obs.price - prev.price) / prev.price) * 10_000 : 0,
            }),
          );
        }
      } else if (dA !== 0n || dB !== 0n) {
        const changeBps = Math.max(bps(abs(dA), prev.reserveA), bps(abs(dB), prev.reserveB));
        if (changeBps >= this.thresholds.liquidityChangeBps) out.events.push(event('liquidity_change', this.liquidityData(prev, obs, signature, dA + dB > 0n ? 'add' : 'remove', changeBps)));
      } else if (obs.liquidity !== undefined && prev.liquidity !== undefined && obs.liquidity !== prev.liquidity && obs.price === prev.price) {
        const changeBps = bps(abs(obs.liquidity - prev.liquidity), prev.liquidity);
        if (changeBps >= this.thresholds.liquidityChangeBps) out.events.push(event('liquidity_change', this.liquidityData(prev, obs, signature, obs.liquidity > prev.liquidity ? 'add' : 'remove', changeBps)));
      }
    }
    const a = this.priceUpdate(obs.tokenA, obs.tokenB, now);
    if (a !== undefined) out.prices.push(a);
    const b = this.priceUpdate(obs.tokenB, obs.tokenA, now);
    if (b !== undefined) out.prices.push(b);
    return out;
  }

  private liquidityData(prev: PoolObservation, obs: PoolObservation, signature: string, kind: 'add' | 'remove', changeBps: number): Record<string, unknown> {
    const data: Record<string, unknown> = {
      signature,
      kind,
      reserveABefore: prev.reserveA.toString(),
      reserveAAfter: obs.reserveA.toString(),
      reserveBBefore: prev.reserveB.toString(),
      reserveBAfter: obs.reserveB.toString(),
      changeBps,
    };
    if (prev.liquidity !== undefined && obs.liquidity !== undefined) {
      data['liquidityBefore'] = prev.liquidity.toString();
      data['liquidityAfter'] = obs.liquidity.toString();
    }
    return data;
  }

  private volumeOf(map: Map<string, RollingVolume>, key: string): RollingVolume {
    let v = map.get(key);
    if (v === undefined) map.set(key, (v = new RollingVolume()));
    return v;
  }

  private addVolume(token: string, amount: bigint, now: number, out: Derived): void {
    const v = this.volumeOf(this.tokenVolume, token);
    v.add(amount, now);
    const { volume, count } = v.total(now);
    out.volumes.push({ token, volume, averageTradeSize: count === 0 ? 0n : volume / BigInt(count) });
  }

  /** `token` priced in `quote` over every pool of the pair seen so far. */
  private priceUpdate(token: string, quote: string, now: number): PriceUpdate | undefined {
    const sources: (PriceSource & { fee: number; slot: bigint })[] = [];
    for (const p of this.last.values()) {
      let price: number;
      let tokenReserve: bigint;
      let quoteReserve: bigint;
      if (p.tokenA === token && p.tokenB === quote) {
        price = p.price;
        tokenReserve = p.reserveA;
        quoteReserve = p.reserveB;
      } else if (p.tokenB === token && p.tokenA === quote) {
        price = p.price > 0 ? 1 / p.price : 0;
        tokenReserve = p.reserveB;
        quoteReserve = p.reserveA;
      } else continue;
      if (!(price > 0) || !Number.isFinite(price)) continue;
      const poolVolumeB = this.poolVolume.get(p.address)?.total(now).volume ?? 0n;
      // pool volume is kept in token B atoms; in quote atoms it is that, or that at the price when quote is A.
      const volume24h = p.tokenB === quote ? Number(poolVolumeB) : Number(poolVolumeB) * p.price ** -1;
      sources.push({ dex: p.dex, pool: p.address, price, liquidity: Number(quoteReserve) + Number(tokenReserve) * price, volume24h, fee: p.fee, slot: p.slot });
    }
    if (sources.length === 0) return undefined;
    let bestBid = 0;
    let bestAsk = Number.POSITIVE_INFINITY;
    let slot = 0n;
    for (const s of sources) {
      bestBid = Math.max(bestBid, s.price * (1 - s.fee));
      bestAsk = Math.min(bestAsk, s.price * (1 + s.fee));
      if (s.slot > slot) slot = s.slot;
    }
    const mid = (bestAsk + bestBid) / 2;
    return {
      version: 1,
      token,
      quoteToken: quote,
      sources: sources.map(({ dex, pool, price, liquidity, volume24h }) => ({ dex, pool, price, liquidity, volume24h })),
      bestBid,
      bestAsk,
      spread: mid > 0 ? (bestAsk - bestBid) / mid : 0,
      timestamp: now,
      slot: slot.toString(),
    };
  }
}
