/**
 * The market as a routing graph: for every pair of mints, the pools that trade it, and for every
 * mint, the mints it trades with. Built once from `market.pools()` and rebuilt only when the set of
 * pools changes; a new array of the same pools (fresh states each slot) just replaces the views, so
 * quotes always read the current state without rebuilding anything.
 */
import type { MarketView, SimPoolView } from '../market-view.js';

/** One pool of a pair, with what routing needs precomputed. */
export interface GraphPool {
  /** Index into `PoolGraph.views`, which always holds the current view. */
  index: number;
  /** The label in lower case, for the dexes / excludeDexes filters. */
  labelKey: string;
}

const NO_POOLS: readonly GraphPool[] = Object.freeze([]);
const NO_MINTS: ReadonlySet<string> = new Set();

function pairKey(x: string, y: string): string {
  return x < y ? `${x} ${y}` : `${y} ${x}`;
}

export class PoolGraph {
  private readonly byPair = new Map<string, GraphPool[]>();
  private readonly neighbours = new Map<string, Set<string>>();
  private current: readonly SimPoolView[] = [];
  private builds = 0;

  constructor(private readonly market: MarketView) {}

  /** The pools' current views, as of the last `sync()`. */
  get views(): readonly SimPoolView[] {
    return this.current;
  }

  /** How many times the graph was (re)built: for tests and stats. */
  get buildCount(): number {
    return this.builds;
  }

  /**
   * Brings the graph up to date with the market. Cheap when nothing changed: the same array is a
   * reference check, a new array of the same pools an address-by-address comparison.
   */
  sync(): void {
    const pools = this.market.pools();
    if (pools === this.current) return;
    if (!samePools(pools, this.current)) this.rebuild(pools);
    this.current = pools;
  }

  /** The pools trading x against y, in the market's order. */
  poolsFor(x: string, y: string): readonly GraphPool[] {
    return this.byPair.get(pairKey(x, y)) ?? NO_POOLS;
  }

  /** The mints some pool trades `mint` against. */
  neighboursOf(mint: string): ReadonlySet<string> {
    return this.neighbours.get(mint) ?? NO_MINTS;
  }

  private rebuild(pools: readonly SimPoolView[]): void {
    this.byPair.clear();
    this.neighbours.clear();
    for (let index = 0; index < pools.length; index++) {
      const view = pools[index]!;
      const { tokenA, tokenB } = view.pool;
      if (tokenA === tokenB) continue;
      const key = pairKey(tokenA, tokenB);
      let list = this.byPair.get(key);
      if (list === undefined) this.byPair.set(key, (list = []));
      list.push({ index, labelKey: view.label.toLowerCase() });
      this.link(tokenA, tokenB);
      this.link(tokenB, tokenA);
    }
    this.builds++;
  }

  private link(from: string, to: string): void {
    let set = this.neighbours.get(from);
    if (set === undefined) this.neighbours.set(from, (set = new Set()));
    set.add(to);
  }
}

/** Same pools at the same places (same addresses, labels and mints). */
function samePools(a: readonly SimPoolView[], b: readonly SimPoolView[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (x.address !== y.address || x.label !== y.label || x.pool.tokenA !== y.pool.tokenA || x.pool.tokenB !== y.pool.tokenB) {
      return false;
    }
  }
  return true;
}
