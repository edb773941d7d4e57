/**
 * One entry of the quote memo (quote-memo.ts), kept in place: the memo makes one per key and
 * rewrites it whenever the key's quote is computed again, so a busy cache replaces no object.
 *
 * Why in place: under pool updates about half the requests recompute their entry. An entry made
 * anew each time (the route, its hops, their bigints, the standing, the slippage bounds: ~1 KB)
 * lived about as long as the pools' update interval, longer than two scavenges, so the scavenger
 * copied and promoted nearly every one and the old generation filled with dead entries; the
 * pauses that made were the busy-cache p99. Here an entry holds
 * - numbers in its own fields (V8 updates a double field in place),
 * - amounts and slots in a BigUint64Array of its own (a write stores 8 bytes, allocates nothing),
 * - strings that outlive it anyway: the cache's interned mints, pool addresses and DEX names
 *   (never a request's own strings),
 * - the body in bytes of its own, rewritten in place when they have room (answer-json.ts).
 * Whatever a reader needs as objects (`route`, the slippage bounds) is built when asked and dies
 * young with the request that asked.
 *
 * It is also the route's standing (cache-route-search.ts HeldRoute): what CacheRouteSearch.stillBest
 * reads to tell, without quoting, that the route is still the answer.
 */
import { NO_ID } from '../cache/index.js';
import { SwapMode } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { CacheRoute, HeldRoute } from './cache-route-search.js';
import type { OwnedBodyParts, RouteHop, RouteQuote } from './quote-answer.js';

/**
 * `MemoEntry.amounts`: hop k's at k × HOP_STRIDE, in, out, fee, slot. The route's own amounts, value
 * and slot follow from them (route-search.ts routeQuoteOf, routeValue).
 */
const IN = 0;
const OUT = 1;
const FEE = 2;
const SLOT = 3;
const HOP_STRIDE = 4;
const MAX_HOPS = 2;

const U64_MAX = (1n << 64n) - 1n;

export class MemoEntry implements HeldRoute {
  readonly ok = true as const;
  /**
   * The route version (CacheRouteSearch.versionOf) at which the entry was last known to hold: when
   * computed, or when a later check found the changed pairs unable to beat it. Written by the memo.
   */
  version = 0;
  /** When the newest pool of any leg read that was not a candidate was stored; -Infinity: none. */
  excludedNewest = -Infinity;
  mode: SwapMode = SwapMode.ExactIn;
  priceImpact = 0;
  hopCount = 0;
  // RouteStanding (cache-route-search.ts).
  position = 0;
  firstPool = NO_ID;
  firstVersion = -1;
  secondPool = NO_ID;
  secondVersion = -1;
  /** Per hop: pool address, DEX name, the mints sold and bought, the mint its fee is counted in. */
  readonly hopPools: string[] = ['', ''];
  readonly hopDexes: string[] = ['', ''];
  readonly hopInputMints: string[] = ['', ''];
  readonly hopOutputMints: string[] = ['', ''];
  readonly hopFeeMints: string[] = ['', ''];
  /** The /quote body around its per-answer fields, in bytes of its own. */
  readonly body: OwnedBodyParts = { bytes: new Uint8Array(0), length: 0, headEnd: 0, revision: 0 };
  private readonly amounts = new BigUint64Array(MAX_HOPS * HOP_STRIDE);

  /** Takes `found`'s route and standing (the route's strings must be the cache's own). */
  hold(found: CacheRoute, version: number): void {
    const route = found.route;
    const standing = found.standing;
    const hops = route.hops;
    if (hops.length > MAX_HOPS) throw new TpError(ErrorCode.Internal, `a memoized route has at most ${MAX_HOPS} hops, got ${hops.length}`);
    const a = this.amounts;
    this.version = version;
    this.excludedNewest = found.excludedNewest;
    this.mode = route.mode;
    this.priceImpact = route.priceImpact;
    this.hopCount = hops.length;
    this.position = standing.position;
    this.firstPool = standing.firstPool;
    this.firstVersion = standing.firstVersion;
    this.secondPool = standing.secondPool;
    this.secondVersion = standing.secondVersion;
    for (let k = 0; k < hops.length; k++) {
      const hop = hops[k]!;
      this.hopPools[k] = hop.pool;
      this.hopDexes[k] = hop.dex;
      this.hopInputMints[k] = hop.inputMint;
      this.hopOutputMints[k] = hop.outputMint;
      this.hopFeeMints[k] = hop.feeMint;
      const at = k * HOP_STRIDE;
      a[at + IN] = u64(hop.inAmount);
      a[at + OUT] = u64(hop.outAmount);
      a[at + FEE] = u64(hop.fee);
      a[at + SLOT] = u64(hop.slot);
    }
  }

  /** The cache's own string of the mint the route sells ('' before the entry holds a route). */
  get inputMint(): string {
    return this.hopInputMints[0]!;
  }

  /** The cache's own string of the mint the route buys ('' before the entry holds a route). */
  get outputMint(): string {
    return this.hopCount === 0 ? '' : this.hopOutputMints[this.hopCount - 1]!;
  }

  /** What the route sells: its first hop's input. */
  get inputAmount(): bigint {
    return this.hopInAmount(0);
  }

  /** What the route buys: its last hop's output. */
  get outputAmount(): bigint {
    return this.hopOutAmount(this.hopCount - 1);
  }

  /** RouteStanding: the route's value (route-search.ts routeValue): exact in its output, exact out its input. */
  get value(): bigint {
    return this.mode === SwapMode.ExactIn ? this.outputAmount : this.inputAmount;
  }

  /** HeldRoute: what hop `k` sold. */
  hopInAmount(k: number): bigint {
    return this.amounts[k * HOP_STRIDE + IN]!;
  }

  /** HeldRoute: what hop `k` bought. */
  hopOutAmount(k: number): bigint {
    return this.amounts[k * HOP_STRIDE + OUT]!;
  }

  /** The priced route, built now (a new object each call: keep it as long as you like). */
  get route(): RouteQuote {
    const a = this.amounts;
    const hops: RouteHop[] = [];
    let slot = 0n;
    for (let k = 0; k < this.hopCount; k++) {
      const at = k * HOP_STRIDE;
      const hopSlot = a[at + SLOT]!;
      hops.push({
        pool: this.hopPools[k]!,
        dex: this.hopDexes[k]!,
        inputMint: this.hopInputMints[k]!,
        outputMint: this.hopOutputMints[k]!,
        inAmount: a[at + IN]!,
        outAmount: a[at + OUT]!,
        fee: a[at + FEE]!,
        feeMint: this.hopFeeMints[k]!,
        slot: hopSlot,
      });
      // The oldest state the route used (route-search.ts routeQuoteOf).
      if (k === 0 || hopSlot < slot) slot = hopSlot;
    }
    return {
      mode: this.mode,
      inputMint: this.inputMint,
      outputMint: this.outputMint,
      inputAmount: hops[0]!.inAmount,
      outputAmount: hops[hops.length - 1]!.outAmount,
      priceImpact: this.priceImpact,
      hops,
      slot,
    };
  }
}

function u64(value: bigint): bigint {
  if (value < 0n || value > U64_MAX) throw new TpError(ErrorCode.Internal, `a memoized amount is not a u64: ${value}`);
  return value;
}
