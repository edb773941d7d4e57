/**
 * Where an arbitrage's input comes from (issue 27 item 3), per base mint:
 *
 * - a flash loan, when a Kamino Lending reserve of that mint is configured (`flashLoan.reserves`):
 *   the input is at most what the reserve can lend now (`total_available_amount`), and the reserve's
 *   fee (flash_loan_fee_sf, rounded, at least 1 atom) is a cost of the trade;
 * - else the worker wallets' own balance: the input is at most the largest synced balance of that
 *   mint (`wallet:balance:{address}:{mint}`, written by the wallet service and by the executors
 *   after each trade) among the enabled workers no executor holds a lock on, and there is no
 *   flash-loan fee;
 * - else nothing: cycles from that mint are not searched.
 *
 * `refresh()` reads the reserves and the balances again (the planner app calls it every few
 * seconds); between two refreshes the figures are those of the last one.
 */
import { flashLoanFee, loadFlashLoanReserves, type LoadedReserve, type ReadAccounts } from '../lending/index.js';
import { flashLoanFeeOf } from '../messages/index.js';
import type { KeySpace, SqlClient } from '../state/index.js';
import { WalletRepository, WalletTier } from '../wallets/index.js';

export interface Funding {
  flashLoan: boolean;
  /** The largest input that can be funded now, atoms of the base mint. */
  maxInput: bigint;
  /** The lender's fee for borrowing x; 0 without a flash loan. */
  fee: (x: bigint) => bigint;
  /** The reserve lending it (flash loans). */
  reserve?: string;
}

export interface ArbitrageFunding {
  /** How an input in `mint` is funded now; undefined when it cannot be. */
  of(mint: string): Funding | undefined;
  refresh?(): Promise<void>;
}

const U64_MAX = (1n << 64n) - 1n;
const NO_FEE = (): bigint => 0n;

/** A flash loan of any size at spec 03's fee, for every mint: what backtests and benchmarks assume. */
export const SPEC_FLASH_LOAN_FUNDING: ArbitrageFunding = { of: () => ({ flashLoan: true, maxInput: U64_MAX, fee: flashLoanFeeOf }) };

export interface WalletCapitalOptions {
  db: SqlClient;
  keys: KeySpace;
}

/** Flash loans where a reserve is configured, the worker wallets' free balance elsewhere. */
export class ConfiguredFunding implements ArbitrageFunding {
  private reserves = new Map<string, LoadedReserve>();
  private capital = new Map<string, bigint>();

  constructor(
    private readonly options: {
      /** Reserve addresses (`flashLoan.reserves`) and how to read them; none: wallets only. */
      reserves?: { addresses: readonly string[]; read: ReadAccounts };
      /** Where the worker wallets' balances are; none: flash loans only. */
      wallets?: WalletCapitalOptions;
      /** Base mints whose wallet capital is read. */
      mints: readonly string[];
    },
  ) {}

  of(mint: string): Funding | undefined {
    const reserve = this.reserves.get(mint);
    if (reserve !== undefined) return { flashLoan: true, maxInput: reserve.availableAmount, fee: (x) => flashLoanFee(x, reserve.feeSf), reserve: reserve.reserve };
    const held = this.capital.get(mint) ?? 0n;
    return held > 0n ? { flashLoan: false, maxInput: held, fee: NO_FEE } : undefined;
  }

  /** Reads the reserves and the free worker balances. Rejects when either cannot be read (the last figures stay). */
  async refresh(): Promise<void> {
    const { reserves, wallets, mints } = this.options;
    if (reserves !== undefined && reserves.addresses.length > 0) {
      const loaded = await loadFlashLoanReserves(reserves.read, reserves.addresses);
      this.reserves = new Map(loaded.map((r) => [r.liquidityMint, r]));
    }
    if (wallets !== undefined) {
      const workers = await new WalletRepository(wallets.db).list({ tier: WalletTier.Worker, enabled: true });
      const capital = new Map<string, bigint>();
      for (const w of workers) {
        if ((await wallets.keys.executorLockHolder(w.id)) !== null) continue;
        for (const mint of mints) {
          const b = await wallets.keys.getWalletBalance(w.address, mint);
          const actual = b === null ? 0n : BigInt(b.actual);
          if (actual > (capital.get(mint) ?? 0n)) capital.set(mint, actual);
        }
      }
      this.capital = capital;
    }
  }
}

/** How often the planner app reads the reserves and the worker balances again, ms. */
export const FUNDING_REFRESH_MS = 5_000;

/**
 * Reads `funding` now (a failure rejects: a reserve that cannot be used is a configuration error)
 * and again every `intervalMs`; a later failure goes to `onError` and the last figures stay.
 * Resolves with the function that stops it.
 */
export async function refreshFundingEvery(funding: ArbitrageFunding, intervalMs: number, onError: (err: unknown) => void): Promise<() => void> {
  await funding.refresh?.();
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void funding.refresh?.().catch(onError).finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
