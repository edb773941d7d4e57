import type { SimToken } from './market-view.js';
import { SimRandom } from './prng.js';

/**
 * The reference prices of the simulated market: each token's USD price follows a mean-reverting
 * random walk in log space (Ornstein-Uhlenbeck, one step per slot) around its genesis price, so
 * prices drift but stay sane. USDC stays at 1. Arbitrage in the flow pulls pools toward these
 * prices. Token-2022 tokens (TOLL) walk on their own stream, so that the others' walks are what
 * the seed gave them before such tokens existed.
 */

/** Per-slot volatility of log price and pull toward the genesis price. */
const SIGMA_PER_SLOT = 0.0006;
const REVERSION_PER_SLOT = 0.001;
const PINNED_SYMBOL = 'USDC';

export class ReferenceOracle {
  private readonly rng: SimRandom;
  /** Per token: its own stream (Token-2022 tokens) or undefined for the shared one. */
  private readonly ownRngs: (SimRandom | undefined)[];
  private readonly genesisLog: Float64Array;
  private readonly logPrices: Float64Array;
  private current: SimToken[];
  private readonly indexByMint = new Map<string, number>();

  constructor(seed: number, private readonly genesis: readonly SimToken[]) {
    this.rng = SimRandom.derive(seed, 'oracle');
    this.ownRngs = genesis.map((t) => (t.programId === undefined ? undefined : SimRandom.derive(seed, `oracle:${t.mint}`)));
    this.genesisLog = Float64Array.from(genesis, (t) => Math.log(t.referencePriceUsd));
    this.logPrices = Float64Array.from(this.genesisLog);
    this.current = genesis.slice();
    genesis.forEach((t, i) => this.indexByMint.set(t.mint, i));
  }

  /** The tokens with their current reference prices (a new array after each step). */
  tokens(): readonly SimToken[] {
    return this.current;
  }

  priceUsd(mint: string): number {
    const i = this.indexByMint.get(mint);
    return i === undefined ? NaN : this.current[i]!.referencePriceUsd;
  }

  /** One slot of the walk. */
  step(): void {
    const next: SimToken[] = new Array<SimToken>(this.genesis.length);
    for (let i = 0; i < this.genesis.length; i++) {
      const token = this.genesis[i]!;
      if (token.symbol === PINNED_SYMBOL) {
        next[i] = token;
        continue;
      }
      const x = this.logPrices[i]!;
      const stepped = x - REVERSION_PER_SLOT * (x - this.genesisLog[i]!) + SIGMA_PER_SLOT * (this.ownRngs[i] ?? this.rng).normal();
      this.logPrices[i] = stepped;
      next[i] = { ...token, referencePriceUsd: Number(Math.exp(stepped).toPrecision(8)) };
    }
    this.current = next;
  }
}
