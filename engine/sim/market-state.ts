import { Dex, withAmmConfig, withAmmVaultAccounts, type AmmPool, type BinArray, type ConcentratedPool, type DecodedPool, type PoolTransferFees, type SwapContext, type TickArray, type TransferFeeConfig } from '../dex/index.js';
import type { AccountReader } from './accounts-db.js';
import { decodeAmmConfigOf, decodeBinArrayOf, decodeMintOf, decodePoolOf, decodeTickArrayOf } from './decoded-accounts.js';
import type { SimPoolView } from './market-view.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * The pools as the engine's decoders read them from the chain's latest accounts: one SimPoolView
 * per pool (the decoded pool, AMM v4 pools with their vault balances less need_take_pnl, Raydium
 * CLMM pools with their AmmConfig's fee rate, and every tick
 * or bin array decoded, and for pools of a Token-2022 mint the mints' transfer-fee configs at the
 * next block's epoch). Views are rebuilt lazily, only for pools whose accounts changed since the
 * last build (checked by record identity after each slot).
 */
export class MarketState {
  private readonly pools: SimPoolInfo[];
  private readonly views: (SimPoolView | undefined)[];
  private readonly viewByAddress = new Map<string, SimPoolView>();
  private readonly sources: Uint8Array[][];
  private readonly byPair = new Map<string, SimPoolView[]>();
  private version = -1;
  private builtVersion = -2;
  private nowSeconds = 0n;
  private epoch = 0n;

  constructor(
    pools: readonly SimPoolInfo[],
    private readonly accounts: AccountReader,
  ) {
    this.pools = [...pools];
    this.views = new Array<SimPoolView | undefined>(pools.length);
    this.sources = pools.map(() => []);
  }

  /** A pool created after genesis (its accounts are in the chain already). */
  add(info: SimPoolInfo): void {
    this.pools.push(info);
    this.views.push(undefined);
    this.sources.push([]);
    this.version++;
  }

  /** A pool closed: it leaves every view. */
  remove(address: string): void {
    const i = this.pools.findIndex((p) => p.address === address);
    if (i < 0) return;
    this.pools.splice(i, 1);
    this.views.splice(i, 1);
    this.sources.splice(i, 1);
    this.viewByAddress.delete(address);
    this.byPair.clear();
    this.version++;
  }

  /** Marks the state as changed (a slot was committed); `nowSeconds` and `epoch` are the next block's. */
  invalidate(nowSeconds: bigint, epoch = 0n): void {
    this.version++;
    this.nowSeconds = nowSeconds;
    this.epoch = epoch;
  }

  /** The transfer fees of `info`'s swaps at the next block (undefined when its mints charge none). */
  transferFees(info: SimPoolInfo): PoolTransferFees | undefined {
    return this.viewOf(info).transferFees;
  }

  all(): readonly SimPoolView[] {
    this.refresh();
    return this.views as SimPoolView[];
  }

  view(address: string): SimPoolView | undefined {
    this.refresh();
    return this.viewByAddress.get(address);
  }

  forPair(mintX: string, mintY: string): readonly SimPoolView[] {
    this.refresh();
    return this.byPair.get(pairKey(mintX, mintY)) ?? [];
  }

  /** The decoded pool of `info` (CLMM with its fee rate), latest state. */
  pool(info: SimPoolInfo): DecodedPool {
    return this.viewOf(info).pool;
  }

  /** Every tick array (CL) or bin array (DLMM) of the pool, decoded. */
  context(info: SimPoolInfo): SwapContext {
    return this.viewOf(info).ctx;
  }

  private viewOf(info: SimPoolInfo): SimPoolView {
    this.refresh();
    return this.viewByAddress.get(info.address)!;
  }

  private refresh(): void {
    if (this.builtVersion === this.version) return;
    this.builtVersion = this.version;
    let rebuilt = false;
    for (let i = 0; i < this.pools.length; i++) {
      const info = this.pools[i]!;
      const records = this.recordsOf(info);
      const previous = this.sources[i]!;
      if (this.views[i] !== undefined && sameRecords(previous, records)) {
        // Unchanged accounts; only the block time of DLMM and CLMM views, and the epoch of
        // transfer fees, move.
        const view = this.views[i]!;
        const timed = info.dex === Dex.Dlmm || info.dex === Dex.Clmm;
        const fees = view.transferFees;
        if (!timed && (fees === undefined || fees.epoch === this.epoch)) continue;
        this.views[i] = {
          ...view,
          ...(timed ? { ctx: { ...view.ctx, nowSeconds: this.nowSeconds } } : {}),
          ...(fees !== undefined && fees.epoch !== this.epoch ? { transferFees: { ...fees, epoch: this.epoch } } : {}),
        };
      } else {
        this.views[i] = this.build(info);
        this.sources[i] = records;
      }
      this.viewByAddress.set(info.address, this.views[i]!);
      rebuilt = true;
    }
    if (rebuilt || this.byPair.size === 0) {
      this.byPair.clear();
      for (const view of this.views as SimPoolView[]) {
        const key = pairKey(view.pool.tokenA, view.pool.tokenB);
        let list = this.byPair.get(key);
        if (list === undefined) this.byPair.set(key, (list = []));
        list.push(view);
      }
    }
  }

  private recordsOf(info: SimPoolInfo): Uint8Array[] {
    const out = [this.accounts.get(info.address)!.data];
    if (info.dex === Dex.Amm) out.push(this.accounts.get(info.vaultA)!.data, this.accounts.get(info.vaultB)!.data);
    for (const array of info.arrays) out.push(this.accounts.get(array.address)!.data);
    if (info.ammConfig !== undefined) out.push(this.accounts.get(info.ammConfig)!.data);
    if (info.tokenA.programId !== undefined) out.push(this.accounts.get(info.tokenA.mint)!.data);
    if (info.tokenB.programId !== undefined) out.push(this.accounts.get(info.tokenB.mint)!.data);
    return out;
  }

  /** The configs of the pool's Token-2022 mints, read from the mint accounts. */
  private feesOf(info: SimPoolInfo): PoolTransferFees | undefined {
    const config = (mint: string): TransferFeeConfig | undefined => {
      const record = this.accounts.get(mint);
      return record === null ? undefined : decodeMintOf(record.owner, record.data).transferFeeConfig;
    };
    const tokenA = info.tokenA.programId !== undefined ? config(info.tokenA.mint) : undefined;
    const tokenB = info.tokenB.programId !== undefined ? config(info.tokenB.mint) : undefined;
    if (tokenA === undefined && tokenB === undefined) return undefined;
    return { epoch: this.epoch, tokenA, tokenB };
  }

  private build(info: SimPoolInfo): SimPoolView {
    let pool = decodePoolOf(info.dex, this.accounts.get(info.address)!.data, info.address);
    let ctx: SwapContext;
    if (info.dex === Dex.Dlmm) {
      const binArrays: BinArray[] = info.arrays.map((a) => decodeBinArrayOf(this.accounts.get(a.address)!.data, a.address));
      ctx = { binArrays, nowSeconds: this.nowSeconds };
    } else if (info.dex === Dex.Amm) {
      const withVaults = withAmmVaultAccounts(pool as AmmPool, this.accounts.get(info.vaultA), this.accounts.get(info.vaultB));
      if (typeof withVaults === 'string') throw new TpError(ErrorCode.Internal, `simulated AMM ${info.address}: ${withVaults}`);
      pool = withVaults;
      ctx = {};
    } else {
      const tickArrays: TickArray[] = info.arrays.map((a) =>
        decodeTickArrayOf(info.dex as typeof Dex.Whirlpool | typeof Dex.Clmm, this.accounts.get(a.address)!.data, a.address, info.tickSpacing!),
      );
      ctx = { tickArrays, nowSeconds: this.nowSeconds };
      if (info.ammConfig !== undefined) {
        pool = withAmmConfig(pool as ConcentratedPool, decodeAmmConfigOf(this.accounts.get(info.ammConfig)!.data, info.ammConfig));
      }
    }
    const transferFees = this.feesOf(info);
    return { address: info.address, dex: info.dex, label: info.label, pool, ctx, ...(transferFees !== undefined ? { transferFees } : {}) };
  }
}

function sameRecords(a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function pairKey(x: string, y: string): string {
  return x < y ? `${x}/${y}` : `${y}/${x}`;
}
