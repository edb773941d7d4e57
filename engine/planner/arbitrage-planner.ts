/**
 * The arbitrage planner: keeps the cycles through the pools of its pool cache, and after a pool
 * changes searches every cycle through that pool (`arbitrage-search.ts`) and turns the profitable
 * ones into TradeOpportunities.
 *
 * Rules (spec 03 and where it is silent):
 * - Funding (`arbitrage-funding.ts`): per base mint, a flash loan (input up to what the reserve can
 *   lend) or the worker wallets' own balance (up to the largest free one); a mint neither funds is
 *   not searched, and the input never exceeds `maxInput` either.
 * - Profit = output − input − quoted fees − flash-loan fee (the lender's, only with a flash loan) −
 *   tip; an opportunity is kept only when profit > `minProfitThreshold` (spec: "exceeds").
 * - Quoted fees: one signature (5,000 lamports) plus the priority fee at `computeUnitPrice` for the
 *   route's compute units (each DEX's swap units, `SWAP_COMPUTE_UNITS`, plus `FLASH_LOAN_COMPUTE_UNITS`
 *   with a flash loan).
 * - Tip: `tip`, 5,000 to 6,000 (checked at start).
 * - Costs are in atoms of the cycle's base mint, spec 03's "smallest units" (lamports for wrapped SOL,
 *   the default base).
 * - Only pools fresh by the cache's rule and no older than `maxStateAgeMs` take part; pools whose
 *   mints charge Token-2022 transfer fees are never added (the caller leaves them out).
 * - Of the profitable cycles of one evaluation, the most profitable is kept, then the next that
 *   shares no pool with those kept, and so on: two trades on one pool state cannot both fill.
 */
import { NO_ID, type PoolCache } from '../cache/index.js';
import { SWAP_COMPUTE_UNITS, type Dex } from '../dex/index.js';
import { WSOL_MINT } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { bestCycleInput, enumerateCycles, type ArbPoolState, type Cycle, type CycleResult } from '../trading/index.js';
import { SPEC_FLASH_LOAN_FUNDING, type ArbitrageFunding } from './arbitrage-funding.js';
import { MAX_TIP, MIN_TIP, Strategy, TRADE_OPPORTUNITY_VERSION, newOpportunityId, quotedTransactionFees, type TradeOpportunity } from '../messages/index.js';

/** Compute units a flash loan's borrow and repay instructions add, for the quoted priority fee. */
export const FLASH_LOAN_COMPUTE_UNITS = 80_000;

export interface ArbitrageSettings {
  strategyId: string;
  /** Mints cycles start and end at; default wrapped SOL. */
  baseMints: readonly string[];
  /** Atoms of the base mint; an opportunity needs a profit above it. */
  minProfitThreshold: bigint;
  tip: bigint;
  computeUnitPriceMicroLamports: bigint;
  /** First size tried (and the screen's). */
  screenAmount: bigint;
  /** Largest input, whatever the funding could give. */
  maxInput: bigint;
  maxLegs: 2 | 3;
  /** Opportunity lifetime: expiresAt = createdAt + this. */
  opportunityTtlMs: number;
  /** Pools older than this (and stale by the cache's rule) are left out. */
  maxStateAgeMs: number;
}

export const DEFAULT_ARBITRAGE_SETTINGS: Omit<ArbitrageSettings, 'strategyId'> = Object.freeze({
  baseMints: [WSOL_MINT],
  minProfitThreshold: 10_000n,
  tip: MIN_TIP,
  computeUnitPriceMicroLamports: 0n,
  screenAmount: 1_000_000n,
  maxInput: 1_000_000_000_000n,
  maxLegs: 3,
  opportunityTtlMs: 2_000,
  maxStateAgeMs: 10_000,
});

/** Throws TP_ERR_CONFIG_INVALID naming the first bad setting. */
export function checkArbitrageSettings(s: ArbitrageSettings): void {
  const bad = (setting: string, message: string): never => {
    throw new TpError(ErrorCode.ConfigInvalid, `arbitrage ${setting} ${message}`, { context: { setting } });
  };
  if (s.tip < MIN_TIP || s.tip > MAX_TIP) bad('tip', `must be from ${MIN_TIP} to ${MAX_TIP} (spec 03), got ${s.tip}`);
  if (s.minProfitThreshold < 0n) bad('minProfitThreshold', 'must not be negative');
  if (s.screenAmount < 1n) bad('screenAmount', 'must be at least 1');
  if (s.maxInput < s.screenAmount) bad('maxInput', 'must be at least screenAmount');
  if (s.baseMints.length === 0) bad('baseMints', 'must name at least one mint');
  if (s.maxLegs !== 2 && s.maxLegs !== 3) bad('maxLegs', 'must be 2 or 3');
  if (!(s.opportunityTtlMs > 0)) bad('opportunityTtlMs', 'must be positive');
  if (s.computeUnitPriceMicroLamports < 0n) bad('computeUnitPrice', 'must not be negative');
}

export interface ArbitrageStats {
  evaluations: number;
  cyclesSearched: number;
  quotesEvaluated: number;
  found: number;
  /** Cycles not searched because nothing funds their base mint (or less than screenAmount). */
  unfunded: number;
}

export class ArbitragePlanner {
  private cyclesByPool = new Map<string, Cycle[]>();
  private allCycles: Cycle[] = [];
  private readonly members = new Map<string, { address: string; tokenA: string; tokenB: string }>();
  private dirty = true;
  readonly stats: ArbitrageStats = { evaluations: 0, cyclesSearched: 0, quotesEvaluated: 0, found: 0, unfunded: 0 };

  constructor(
    private readonly cache: PoolCache,
    readonly settings: ArbitrageSettings,
    private readonly now: () => number = Date.now,
    private readonly funding: ArbitrageFunding = SPEC_FLASH_LOAN_FUNDING,
  ) {
    checkArbitrageSettings(settings);
  }

  /** Adds a pool to the cycle graph (its state lives in the cache). Cycles are rebuilt lazily. */
  addPool(address: string, tokenA: string, tokenB: string): void {
    const known = this.members.get(address);
    if (known !== undefined && known.tokenA === tokenA && known.tokenB === tokenB) return;
    this.members.set(address, { address, tokenA, tokenB });
    this.dirty = true;
  }

  removePool(address: string): void {
    if (this.members.delete(address)) this.dirty = true;
  }

  get poolCount(): number {
    return this.members.size;
  }

  get cycleCount(): number {
    this.rebuild();
    return this.allCycles.length;
  }

  private rebuild(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const byPool = new Map<string, Cycle[]>();
    const all: Cycle[] = [];
    for (const base of this.settings.baseMints) {
      for (const cycle of enumerateCycles(base, this.members.values(), this.settings.maxLegs)) {
        all.push(cycle);
        for (const leg of cycle) {
          let list = byPool.get(leg.pool);
          if (list === undefined) byPool.set(leg.pool, (list = []));
          list.push(cycle);
        }
      }
    }
    this.cyclesByPool = byPool;
    this.allCycles = all;
  }

  /** The opportunities of the cycles through `pool` (after it changed). */
  evaluatePool(pool: string, sourceEvent?: { id: string; receivedAt: number }): TradeOpportunity[] {
    this.rebuild();
    return this.evaluate(this.cyclesByPool.get(pool) ?? [], sourceEvent);
  }

  /** The opportunities of every cycle (a full sweep). */
  evaluateAll(): TradeOpportunity[] {
    this.rebuild();
    return this.evaluate(this.allCycles, undefined);
  }

  private evaluate(cycles: readonly Cycle[], sourceEvent: { id: string; receivedAt: number } | undefined): TradeOpportunity[] {
    this.stats.evaluations++;
    if (cycles.length === 0) return [];
    const now = this.now();
    const states = new Map<string, { state: ArbPoolState; ageMs: number } | null>();
    const lookup = (address: string): ArbPoolState | undefined => {
      let s = states.get(address);
      if (s === undefined) {
        s = this.stateOf(address, now);
        states.set(address, s);
      }
      return s?.state;
    };
    const found: { cycle: Cycle; result: CycleResult; quotedFees: bigint; flashLoan: boolean }[] = [];
    for (const cycle of cycles) {
      const funding = this.funding.of(cycle[0]!.inputMint);
      const maxInput = funding === undefined ? 0n : funding.maxInput < this.settings.maxInput ? funding.maxInput : this.settings.maxInput;
      if (funding === undefined || maxInput < this.settings.screenAmount) {
        this.stats.unfunded++;
        continue;
      }
      this.stats.cyclesSearched++;
      const quotedFees = this.quotedFeesOf(cycle, lookup, funding.flashLoan);
      if (quotedFees === undefined) continue;
      const result = bestCycleInput(cycle, lookup, { quotedFees, tip: this.settings.tip, screenAmount: this.settings.screenAmount, maxInput, flashLoanFee: funding.fee });
      if (result === undefined) continue;
      this.stats.quotesEvaluated += result.evaluations;
      if (result.profit > this.settings.minProfitThreshold) found.push({ cycle, result, quotedFees, flashLoan: funding.flashLoan });
    }
    found.sort((a, b) => (a.result.profit > b.result.profit ? -1 : a.result.profit < b.result.profit ? 1 : 0));
    const used = new Set<string>();
    const out: TradeOpportunity[] = [];
    for (const f of found) {
      if (f.cycle.some((leg) => used.has(leg.pool))) continue;
      for (const leg of f.cycle) used.add(leg.pool);
      let slot = f.result.hops[0]!.slot;
      let ageMs = 0;
      for (const leg of f.cycle) {
        const s = states.get(leg.pool)!;
        if (s!.state.slot < slot) slot = s!.state.slot;
        if (s!.ageMs > ageMs) ageMs = s!.ageMs;
      }
      out.push(this.opportunityOf(f.cycle, f.result, f.quotedFees, f.flashLoan, slot, ageMs, now, sourceEvent));
    }
    this.stats.found += out.length;
    return out;
  }

  private stateOf(address: string, now: number): { state: ArbPoolState; ageMs: number } | null {
    const id = this.cache.idOf(address);
    if (id === NO_ID) return null;
    const ageMs = this.cache.ageAt(id, now);
    if (!this.cache.isFresh(ageMs, this.settings.maxStateAgeMs)) return null;
    const pool = this.cache.poolAt(id);
    const dex = this.cache.dexAt(id);
    if (pool === undefined || dex === undefined) return null;
    return { state: { address, dex, pool, context: this.cache.contextAt(id), slot: this.cache.slotAt(id) }, ageMs };
  }

  private quotedFeesOf(cycle: Cycle, lookup: (a: string) => ArbPoolState | undefined, flashLoan: boolean): bigint | undefined {
    let units = flashLoan ? FLASH_LOAN_COMPUTE_UNITS : 0;
    for (const leg of cycle) {
      const s = lookup(leg.pool);
      if (s === undefined) return undefined;
      units += SWAP_COMPUTE_UNITS[s.dex as Dex];
    }
    return quotedTransactionFees(1, units, this.settings.computeUnitPriceMicroLamports);
  }

  private opportunityOf(cycle: Cycle, r: CycleResult, quotedFees: bigint, flashLoan: boolean, slot: bigint, stateAgeMs: number, now: number, sourceEvent: { id: string; receivedAt: number } | undefined): TradeOpportunity {
    const base = cycle[0]!.inputMint;
    const tip = this.settings.tip;
    const total = quotedFees + r.flashLoanFee + tip;
    const op: TradeOpportunity = {
      version: TRADE_OPPORTUNITY_VERSION,
      id: newOpportunityId(),
      strategy: Strategy.Arbitrage,
      strategyId: this.settings.strategyId,
      createdAt: now,
      expiresAt: now + this.settings.opportunityTtlMs,
      slot,
      stateAgeMs,
      inputMint: base,
      outputMint: base,
      inputAmount: r.input,
      expectedOutput: r.output,
      minimumOutput: r.input + total,
      expectedProfit: r.profit,
      profitMint: base,
      flashLoan,
      costs: { poolFees: r.hops.map((h) => h.fee), quotedFees, flashLoanFee: r.flashLoanFee, tip, total },
      route: r.hops,
    };
    if (sourceEvent !== undefined) op.sourceEvent = sourceEvent;
    return op;
  }
}
