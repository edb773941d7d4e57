import { base58, systemTransferInstruction } from '../chain/index.js';
import type { InstructionInput, Keypair, LookupTableInput } from '../chain/index.js';
import { Dex, binArrayIndexOf, epochFee, q64ToNumber, type BinArray, type DecodedPool, type PoolTransferFees, type SwapContext, type TransferFeeConfig } from '../dex/index.js';
import type { Actors, Trader } from './actors.js';
import type { SimLookupTable } from './address-lookup-tables.js';
import { blockTimeOf } from './chain-time.js';
import { MessageTemplate, TemplateCache } from './message-template.js';
import { COMPUTE_BUDGET_PROGRAM_ID, LAMPORTS_PER_SOL, MEMO_PROGRAM_ID, VOTE_PROGRAM_ID } from './known-accounts.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { feeFraction, referenceRawPrice, spotPrice } from './pool-prices.js';
import { SimRandom } from './prng.js';
import { swapAccountsOf, swapArrays, swapInstruction } from './swap-program.js';

/**
 * The generated transaction flow: `txRate` signed transactions per second of simulated time (per
 * slot: txRate · slotMs / 1000, exactly, with the remainder carried), of which a `poolShare` swap
 * on the simulator's pools with the documented swap instruction (swap-program.ts) and the rest is
 * noise: vote-like transactions to the Vote program, SOL transfers and memos. Swaps on a pool of a
 * Token-2022 mint use swap_v2 and count its transfer fees in their sizing.
 *
 * Swaps: a random pool (weighted toward deep pools) and trader; mostly random direction and size
 * (a small fraction of the pool's value, log-uniform), with a slippage limit set from the pool's
 * spot price; and, when a pool strays from the reference price by more than its fee, sometimes an
 * arbitrage-like swap that closes most of the gap (at most one per pool per slot). Swaps are
 * sized on the state of the last slot, so some land after others moved the price and fail on
 * their slippage limit, as on mainnet.
 *
 * A `lookupSwapShare` of the swaps are v0 transactions that load the pool's accounts (pool, vaults,
 * AmmConfig, tick or bin arrays) and the token program through the chain's address lookup tables
 * (address-lookup-tables.ts: the pool's table, then the shared one), as routers send them on
 * mainnet: only the trader, its token accounts and the invoked programs are static keys. The rest
 * are legacy transactions with every key static. Both forms execute the same instruction.
 *
 * Every draw comes from the flow's own seeded stream and every decision from the chain's state
 * at the last slot, so the bytes of a slot's transactions do not depend on how generation was
 * split over time.
 */

export interface FlowSettings {
  seed: number;
  txRate: number;
  slotMs: number;
  poolShare: number;
  /** Share of swaps sent as v0 transactions through the lookup tables. Default 0. */
  lookupSwapShare?: number;
}

/** The chain state the flow reads (the latest processed slot). */
export interface FlowState {
  pool(info: SimPoolInfo): DecodedPool;
  context(info: SimPoolInfo): SwapContext;
  referencePriceUsd(mint: string): number;
  /** The pool's transfer fees at the next block; undefined when its mints charge none. */
  transferFees?(info: SimPoolInfo): PoolTransferFees | undefined;
}

/** Share of noise that is votes, then transfers; the rest are memos. */
const VOTE_SHARE = 0.6;
const TRANSFER_SHARE = 0.3;
/** Random swap value as a fraction of pool value (log-uniform). */
const MIN_SWAP_FRACTION = 5e-6;
const MAX_SWAP_FRACTION = 3e-3;
/** No swap moves more than this fraction of the pool's value. */
const MAX_ARB_FRACTION = 0.05;
/** Arbitrage: taken when the gap exceeds the fee by this much; closes this share of it. */
const ARB_MARGIN = 0.0015;
const ARB_CHANCE = 0.5;
const ARB_CLOSE = 0.7;
const EXACT_OUT_SHARE = 0.1;
const TOWER_SYNC_TAG = 14;
const MEMOS = ['gm', 'tidepool sim', 'rebalance', 'invoice 4821', 'thanks!', 'order #77', 'payout', 'refund'];

export class TransactionFlow {
  private readonly rng: SimRandom;
  /** Legacy or v0, per swap: its own stream, so the share does not move the other draws. */
  private readonly lookupRng: SimRandom;
  /** Tables a v0 swap on each pool compiles with, in order of preference. */
  private readonly tablesByPool = new Map<string, LookupTableInput[]>();
  private readonly poolWeights: Float64Array;
  private readonly perSlotNumerator: bigint;
  private slot = -1n;
  private generated = 0;
  private target = 0;
  private readonly arbitraged = new Set<string>();
  private voteCursor = 0;
  private memoCounter = 0;
  private blockhashText = '';
  private blockhash: Uint8Array = new Uint8Array(32);
  private readonly templates = new TemplateCache();
  /** Transactions generated so far, by kind (for tests and stats). */
  readonly counts = { swaps: 0, lookupSwaps: 0, arbitrages: 0, votes: 0, transfers: 0, memos: 0 };
  /** Pools closed since genesis: the flow no longer trades them. */
  private readonly closed = new Set<string>();

  constructor(
    private readonly settings: FlowSettings,
    private readonly pools: readonly SimPoolInfo[],
    private readonly actors: Actors,
    private readonly state: FlowState,
    lookupTables: readonly SimLookupTable[] = [],
  ) {
    this.rng = SimRandom.derive(settings.seed, 'flow');
    this.lookupRng = SimRandom.derive(settings.seed, 'flow:lookup-swaps');
    const shared = lookupTables.filter((t) => t.pools.length === 0).map((t) => ({ address: t.address, addresses: t.addresses }));
    for (const table of lookupTables) {
      for (const pool of table.pools) {
        if (!this.tablesByPool.has(pool)) this.tablesByPool.set(pool, [{ address: table.address, addresses: table.addresses }, ...shared]);
      }
    }
    let sum = 0;
    this.poolWeights = Float64Array.from(pools, (p) => (sum += Math.sqrt(p.tvlUsd)));
    this.perSlotNumerator = BigInt(settings.txRate) * BigInt(settings.slotMs);
  }

  /** How many transactions slot `slot` carries: the slot's share of txRate, remainders carried. */
  countFor(slot: bigint): number {
    if (slot <= 0n) return 0;
    return Number((slot * this.perSlotNumerator) / 1000n - ((slot - 1n) * this.perSlotNumerator) / 1000n);
  }

  /**
   * Up to `max` more signed transactions for `slot`, using `blockhash` (the latest slot's). Slots
   * come in order; a slot's transactions may be asked for in as many pieces as suits the caller.
   */
  generate(slot: bigint, blockhash: string, max: number): Uint8Array[] {
    if (slot !== this.slot) {
      this.slot = slot;
      this.generated = 0;
      this.target = this.countFor(slot);
      this.arbitraged.clear();
    }
    if (blockhash !== this.blockhashText) {
      this.blockhashText = blockhash;
      this.blockhash = base58.decodePubkey(blockhash);
    }
    const n = Math.min(max, this.target - this.generated);
    const out: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      this.generated++;
      const tx = this.rng.chance(this.settings.poolShare) ? this.swap() : this.noise(slot);
      if (tx !== null) out.push(tx);
    }
    return out;
  }

  /** Stops trading a pool (closed by the market admin). */
  closePool(address: string): void {
    this.closed.add(address);
  }

  // ---- swaps

  private pickPool(): SimPoolInfo {
    const x = this.rng.next() * this.poolWeights[this.poolWeights.length - 1]!;
    let lo = 0;
    let hi = this.poolWeights.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.poolWeights[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return this.pools[lo]!;
  }

  private swap(): Uint8Array | null {
    const info = this.pickPool();
    if (this.closed.has(info.address)) return null;
    const trader = this.rng.pick(this.actors.traders);
    const pool = this.state.pool(info);
    const priceA = this.state.referencePriceUsd(info.tokenA.mint);
    const priceB = this.state.referencePriceUsd(info.tokenB.mint);
    const reference = referenceRawPrice(priceA, info.tokenA.decimals, priceB, info.tokenB.decimals);
    const spot = spotPrice(pool);
    const transferFees = this.state.transferFees?.(info);
    const transferA = feeRateOf(transferFees?.tokenA, transferFees);
    const transferB = feeRateOf(transferFees?.tokenB, transferFees);
    // A round trip through the pool pays its fee and both transfer fees.
    const fee = feeFraction(pool) + transferA + transferB;
    const gap = Math.log(spot / reference);

    let aToB: boolean;
    let amountIn: number;
    let slippage: number;
    // Every draw is made whatever the branch, so the stream does not depend on pool state.
    const arbDraw = this.rng.next();
    const directionDraw = this.rng.chance(0.5);
    const sizeDraw = this.rng.logUniform(MIN_SWAP_FRACTION, MAX_SWAP_FRACTION);
    const slippageDraw = this.rng.uniform(0.003, 0.02);
    const exactOut = this.rng.chance(EXACT_OUT_SHARE);
    const unitPrice = BigInt(Math.floor(this.rng.logUniform(1_000, 500_000)));
    const tables = this.lookupRng.chance(this.settings.lookupSwapShare ?? 0) ? this.tablesByPool.get(info.address) : undefined;
    const arbitrage = Math.abs(gap) > fee + ARB_MARGIN && !this.arbitraged.has(info.address) && arbDraw < ARB_CHANCE;
    if (arbitrage) {
      aToB = gap > 0; // A is dear in this pool: sell A
      amountIn = this.arbitrageInput(info, pool, reference, aToB, fee) * ARB_CLOSE;
      slippage = 0.005;
      this.arbitraged.add(info.address);
      this.counts.arbitrages++;
    } else {
      aToB = directionDraw;
      const input = aToB ? info.tokenA : info.tokenB;
      amountIn = ((info.tvlUsd * sizeDraw) / (aToB ? priceA : priceB)) * 10 ** input.decimals;
      slippage = slippageDraw;
    }
    const input = aToB ? info.tokenA : info.tokenB;
    const maxIn = ((info.tvlUsd * MAX_ARB_FRACTION) / (aToB ? priceA : priceB)) * 10 ** input.decimals;
    amountIn = Math.floor(Math.min(amountIn, maxIn));
    if (!(amountIn >= 1)) amountIn = 1;
    const [inRate, outRate] = aToB ? [transferA, transferB] : [transferB, transferA];
    const expectedOut = this.expectedOutput(pool, amountIn * (1 - inRate) * (1 - feeFraction(pool)), aToB, spot) * (1 - outRate);
    let amount: bigint;
    let threshold: bigint;
    if (exactOut && expectedOut > 10) {
      amount = BigInt(Math.floor(expectedOut * 0.98));
      threshold = BigInt(Math.ceil(amountIn * (1 + slippage)));
    } else {
      amount = BigInt(amountIn);
      threshold = BigInt(Math.max(0, Math.floor(expectedOut * (1 - slippage))));
    }
    this.counts.swaps++;
    if (tables !== undefined) this.counts.lookupSwaps++;
    const ix = swapInstruction(
      swapAccountsOf(info, trader.keypair.address, trader.tokenAccounts.get(info.tokenA.mint)!, trader.tokenAccounts.get(info.tokenB.mint)!, swapArrays(info, pool, aToB)),
      { amount, otherAmountThreshold: threshold, aToB, exactIn: !(exactOut && expectedOut > 10) },
    );
    const unitLimit = info.dex === Dex.Amm ? 120_000 : 300_000;
    const key = `${tables !== undefined ? 'l' : 's'}|${trader.keypair.address}|${info.address}|${ix.accounts.length > 7 ? ix.accounts.slice(7).map((a) => a.pubkey).join(',') : ''}`;
    return this.build(key, trader.keypair, [computeUnitLimit(unitLimit), computeUnitPrice(unitPrice), ix], tables);
  }

  /** Input (atoms, before the fee) that moves the pool's price to `target`, from its state. */
  private arbitrageInput(info: SimPoolInfo, pool: DecodedPool, target: number, aToB: boolean, fee: number): number {
    let net: number;
    switch (pool.dex) {
      case Dex.Amm: {
        const k = Number(pool.reserveA) * Number(pool.reserveB);
        net = aToB ? Math.sqrt(k / target) - Number(pool.reserveA) : Math.sqrt(k * target) - Number(pool.reserveB);
        break;
      }
      case Dex.Whirlpool:
      case Dex.Clmm: {
        // Within the current liquidity: Δ(1/√P)·L of A, or Δ√P·L of B.
        const l = Number(pool.liquidity);
        const s = Number(pool.sqrtPrice) / 2 ** 64;
        const t = Math.sqrt(target);
        net = aToB ? l * (1 / t - 1 / s) : l * (t - s);
        break;
      }
      case Dex.Dlmm:
        net = this.dlmmInputToBin(info, pool.activeId, Math.round(Math.log(target) / Math.log(1 + pool.binStep / 10_000)), aToB);
        break;
    }
    return Math.max(0, net) / (1 - fee);
  }

  /** DLMM: what the bins between the active bin and `targetId` hold, in input atoms. */
  private dlmmInputToBin(info: SimPoolInfo, activeId: number, targetId: number, aToB: boolean): number {
    const arrays = this.state.context(info).binArrays ?? [];
    let need = 0;
    const step = aToB ? -1 : 1;
    for (let id = activeId, n = 0; aToB ? id > targetId : id < targetId; id += step, n++) {
      if (n > 400) break;
      const array = arrays.find((a: BinArray) => Number(a.index) === binArrayIndexOf(id));
      const bin = array?.bins[id - Number(array.index) * 70];
      if (bin === undefined) break;
      const price = q64ToNumber(bin.price);
      need += aToB ? Number(bin.amountY) / price : Number(bin.amountX) * price;
    }
    return need;
  }

  /** A float estimate of the output for `net` input atoms (after the fee). */
  private expectedOutput(pool: DecodedPool, net: number, aToB: boolean, spot: number): number {
    switch (pool.dex) {
      case Dex.Amm: {
        const rin = Number(aToB ? pool.reserveA : pool.reserveB);
        const rout = Number(aToB ? pool.reserveB : pool.reserveA);
        return (rout * net) / (rin + net);
      }
      case Dex.Whirlpool:
      case Dex.Clmm: {
        const l = Number(pool.liquidity);
        const s = Number(pool.sqrtPrice) / 2 ** 64;
        if (l === 0) return 0;
        if (aToB) {
          const after = 1 / (1 / s + net / l);
          return l * (s - after);
        }
        const after = s + net / l;
        return l * (1 / s - 1 / after);
      }
      case Dex.Dlmm:
        return aToB ? net * spot : net / spot;
    }
  }

  // ---- noise

  private noise(slot: bigint): Uint8Array | null {
    const kind = this.rng.next();
    if (kind < VOTE_SHARE) return this.vote(slot);
    const trader = this.rng.pick(this.actors.traders);
    if (kind < VOTE_SHARE + TRANSFER_SHARE) return this.transfer(trader);
    return this.memo(trader);
  }

  private vote(slot: bigint): Uint8Array {
    const index = this.voteCursor++ % this.actors.validators.length;
    const validator = this.actors.validators[index]!;
    this.counts.votes++;
    return this.build(`v|${index}`, validator.identity, [
      {
        programId: VOTE_PROGRAM_ID,
        accounts: [
          { pubkey: validator.voteAccount, isSigner: false, isWritable: true },
          { pubkey: validator.identity.address, isSigner: true, isWritable: false },
        ],
        data: towerSyncData(slot - 1n, this.blockhash, this.rng.int(31) + 1, blockTimeOf(slot - 1n, this.settings.slotMs)),
      },
    ]);
  }

  private transfer(trader: Trader): Uint8Array {
    const toTrader = this.rng.chance(0.7);
    const recipient = toTrader ? this.rng.pick(this.actors.traders).keypair.address : this.rng.pick(this.actors.wallets);
    const sol = toTrader ? this.rng.logUniform(0.001, 0.5) : this.rng.logUniform(0.0005, 0.01);
    const lamports = BigInt(Math.floor(sol * Number(LAMPORTS_PER_SOL)));
    const withPriority = this.rng.chance(0.5);
    const priority = BigInt(Math.floor(this.rng.logUniform(100, 50_000)));
    this.counts.transfers++;
    const instructions: InstructionInput[] = [];
    if (withPriority) instructions.push(computeUnitPrice(priority));
    if (recipient === trader.keypair.address) {
      instructions.push(memoInstruction(trader.keypair.address, 'self'));
    } else {
      instructions.push(systemTransfer(trader.keypair.address, recipient, lamports));
    }
    return this.build(`t|${trader.keypair.address}|${recipient}|${withPriority}`, trader.keypair, instructions);
  }

  private memo(trader: Trader): Uint8Array {
    this.counts.memos++;
    const text = `${this.rng.pick(MEMOS)} ${++this.memoCounter}`;
    const ix = memoInstruction(trader.keypair.address, text);
    return this.build(`m|${trader.keypair.address}|${ix.data!.length}`, trader.keypair, [ix]);
  }

  /**
   * Signs the transaction with the slot's blockhash. `shape` names everything but the instruction
   * data and blockhash (payer, programs, accounts, data lengths): transactions of one shape share
   * a compiled message template. With `lookupTables`, a v0 message loading through them.
   */
  private build(shape: string, payer: Keypair, instructions: InstructionInput[], lookupTables?: readonly LookupTableInput[]): Uint8Array {
    const template = this.templates.get(shape, () => MessageTemplate.compile(payer, instructions, this.blockhash, lookupTables));
    return template.sign(
      this.blockhash,
      instructions.map((ix) => ix.data),
    );
  }
}

/** A transfer fee's rate at the fees' epoch, as a fraction (caps ignored: an estimate for sizing). */
function feeRateOf(config: TransferFeeConfig | undefined, fees: PoolTransferFees | undefined): number {
  if (config === undefined || fees === undefined) return 0;
  return epochFee(config, fees.epoch).transferFeeBasisPoints / 10_000;
}

// ---- instruction builders

export function computeUnitLimit(units: number): InstructionInput {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programId: COMPUTE_BUDGET_PROGRAM_ID, accounts: [], data };
}

export function computeUnitPrice(microLamports: bigint): InstructionInput {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programId: COMPUTE_BUDGET_PROGRAM_ID, accounts: [], data };
}

/** A System Transfer (engine/chain's encoding). */
export const systemTransfer = systemTransferInstruction;

export function memoInstruction(signer: string, text: string): InstructionInput {
  return { programId: MEMO_PROGRAM_ID, accounts: [{ pubkey: signer, isSigner: true, isWritable: false }], data: new TextEncoder().encode(text) };
}

/**
 * A vote-like TowerSync payload (VoteInstruction tag 14): root, one lockout, the voted bank's
 * hash, a timestamp and a block id. Shaped like a vote, not a valid tower.
 */
function towerSyncData(votedSlot: bigint, bankHash: Uint8Array, confirmations: number, timestamp: bigint): Uint8Array {
  const data = new Uint8Array(4 + 8 + 1 + 2 + 32 + 9 + 32);
  const view = new DataView(data.buffer);
  view.setUint32(0, TOWER_SYNC_TAG, true);
  view.setBigUint64(4, votedSlot > 31n ? votedSlot - 31n : 0n, true);
  data[12] = 1; // one lockout
  data[13] = votedSlot > 31n ? 31 : Number(votedSlot); // offset from the root (varint)
  data[14] = confirmations;
  data.set(bankHash, 15);
  data[47] = 1; // Some(timestamp)
  view.setBigInt64(48, timestamp, true);
  data.set(bankHash, 56); // block id
  return data;
}
