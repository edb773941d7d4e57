/**
 * The executor service: one TradeOpportunity in, at most one trade out, its outcome recorded in
 * PostgreSQL and published as an ExecutionResult.
 *
 *   opportunity ─▶ expired? stale state? a flash loan no configured reserve lends? ─▶ known
 *                  trade? reconciled, else skipped (counted, acknowledged, no row)
 *               ─▶ semaphore (maxConcurrentTrades)
 *               ─▶ route pools read again over RPC, with the route's template the first time
 *                  (route-pools.ts); meanwhile: known trade? (redelivery: reconcile, never trade
 *                  twice), and real: the worker wallet taken (its balances kept in sync by
 *                  WorkerWallets, not read here), the blockhash kept warm (RecentBlockhash); the
 *                  wallet given back when the trade is refused ─▶ state too old? re-quote
 *                  refused or no longer profitable? ─▶ skipped
 *               ─▶ path (spec 03 selection) and tip
 *   paper:      ─▶ paper fill on that state ─▶ ExecutionRequest ─▶ trade `paper` + routes ─▶ ExecutionResult
 *   real:       ─▶ worker wallet (lock:executor:{wallet_id}; busy → wait and come back; none → skipped)
 *               ─▶ swap transaction planned on the re-quoted state and signed (with a flash loan:
 *                  borrow before the swaps, repay after them, flash-loans.ts) ─▶ ExecutionRequest
 *               ─▶ trade `pending` + routes + journal, one database transaction (nothing is sent
 *                  before it commits; the database down → the message comes back)
 *               ─▶ submitter (bundle or direct) ─▶ `submitted` ─▶ confirmed | failed | expired,
 *                  actual profit and the landed fill (trades.landed_*_amount) from the wallet's
 *                  balance changes ─▶ ExecutionResult ─▶ lock released
 *
 * The ExecutionRequest (the decision: wallet, path, re-quoted amounts) goes to
 * execution.orders.request.<strategy> while the trade is recorded and sent, not in their way; the
 * result waits for its acknowledgement, so a trade's request is always before its result in the
 * stream. A request that cannot be published is logged, the trade goes on.
 *
 * `handle` resolves with what happened; it throws when the message must come back (database or
 * RPC unavailable before anything was sent; an outcome that could not be recorded). A redelivered
 * opportunity whose trade exists is reconciled from the chain by its recorded signature.
 */
import { MAX_COMPUTE_UNIT_LIMIT } from '../chain/index.js';
import { SwapMode, buildSwapRouteTransaction, planSwapRoute } from '../dex/index.js';
import { Backoff } from '../common/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { flashLoanFee } from '../lending/index.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient, OperatorLookupTables } from '../rpc/index.js';
import { Strategy, type TradeOpportunity, encodeExecutionRequest, encodeExecutionResult, executionRequestMessageId, executionRequestSubject, executionResultSubject, type ExecutionRequest, type ExecutionResult, type ExecutionStatus, type ExecutionPath } from '../messages/index.js';

import { SkipReason, type ExecutorMetrics } from './executor-metrics.js';
import { FLASH_LOAN_COMPUTE_UNITS, FlashLoans } from './flash-loans.js';
import { paperBalanceChanges, paperFill, realPathFees, routeComputeUnits } from './paper-fill.js';
import { selectExecutionPath, tipFor } from './path-selection.js';
import type { RoutePools } from './route-pools.js';
import { requoteRoute } from './route-requote.js';
import { Semaphore } from './semaphore.js';
import type { BalanceChanges, SubmissionOutcome, Submitter } from './submission.js';
import { tradeIdOf, type StoredTrade, type TradeStore } from './trade-store.js';
import { actualProfitOf } from './trade-profit.js';
import { filledAmountsOf } from './landed-balance-changes.js';
import type { HeldWallet, WorkerWallets } from './worker-wallets.js';
import { TradeStage, type TradeStageObserver } from './trade-stages.js';
import type { LatestBlockhash, RecentBlockhash } from './recent-blockhash.js';

export interface ExecutorSettings {
  executorId: string;
  paper: boolean;
  /** 1..50 (spec 03). */
  maxConcurrentTrades: number;
  /** An opportunity computed on a state older than this (its stateAgeMs) is skipped. */
  maxStateAgeMs: number;
  /** Route pools read now more than this many slots after the opportunity's slot: skipped. */
  maxSlotLag: bigint;
  /** Arbitrage: the re-quoted profit must exceed this (atoms of the profit mint). */
  minProfit: bigint;
  /** Micro-lamports per compute unit of the swap transaction. */
  computeUnitPriceMicroLamports: bigint;
  /** Bundle tip when the opportunity carries none (5,000..6,000). */
  defaultTip: bigint;
  /** Per hop slippage of the transaction's thresholds (planSwapRoute); 0 = exactly the re-quote. */
  slippageBps: number;
  /** Delay before an opportunity that found every wallet locked comes back, ms. */
  busyRetryMs: number;
}

/** What publishes the requests and results (a JetStream client, with the message id for deduplication). */
export interface ResultPublisher {
  publish(subject: string, data: Uint8Array, options: { msgID: string }): Promise<unknown>;
}

/** Reads a landed signature's balance changes (getTransaction's meta) for a redelivered trade. */
export type BalanceChangesReader = (signature: string, wallet: string, mints: readonly string[]) => Promise<BalanceChanges | null>;

export interface ExecutorServiceOptions {
  settings: ExecutorSettings;
  trades: TradeStore;
  pools: RoutePools;
  chain: ChainClient;
  metrics: ExecutorMetrics;
  results: ResultPublisher;
  subjectPrefix?: string;
  /** Real mode only. */
  wallets?: WorkerWallets;
  submitters?: Record<ExecutionPath, Submitter>;
  balanceChanges?: BalanceChangesReader;
  /** The flash-loan reserves (`flashLoan.reserves`); none: an opportunity that borrows is skipped. */
  flashLoans?: FlashLoans;
  /** Where the real path's blockhash comes from (a RecentBlockhash kept warm); none: getLatestBlockhash on the path. */
  blockhashes?: Pick<RecentBlockhash, 'current'>;
  /** Tables for the v0 form of a route that does not fit a legacy transaction; none: legacy only. */
  lookupTables?: Pick<OperatorLookupTables, 'current'>;
  logger?: Logger;
  now?: () => number;
  /** Told how long each stage of a real trade took (TradeStage; the bench times them). */
  onStage?: TradeStageObserver;
  /**
   * Aborts the submissions in flight (the service host's signal: its close), as `close` does: a
   * trade whose submission it ends before a final status stays pending or submitted, and the
   * opportunity is deferred, so its redelivery reconciles the trade from the chain.
   */
  signal?: AbortSignal;
}

export type HandleOutcome =
  | { kind: 'traded'; result: ExecutionResult }
  | { kind: 'skipped'; reason: SkipReason; detail: string }
  /** Every wallet that could pay is busy, or the trade is in flight elsewhere: come back after `delayMs`. */
  | { kind: 'defer'; delayMs: number; detail: string };

export interface ExecutorStats {
  received: number;
  traded: number;
  paperTrades: number;
  skipped: Record<string, number>;
  deferred: number;
  inFlight: number;
  recent: ExecutionResult[];
  lastRequest?: ExecutionRequest;
}

/** What an order filled: the input mint spent and the output mint received (ExecutionResult). */
type Fill = Pick<ExecutionResult, 'filledInput' | 'filledOutput'>;

const RECENT = 20;
/** Attempts (with doubling waits from 100 ms) to record an outcome before giving the message back. */
const RECORD_ATTEMPTS = 5;

function errorText(err: unknown): string {
  if (err instanceof TpError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a landed trade filled, for its row (trades.landed_*_amount, migration 007): the result's
 * filled amounts, when it has them and the order's input and output are two mints (a cycle's
 * balance change is its profit, not an input and an output).
 */
function landedOf(op: TradeOpportunity, fill: Partial<Fill>): { landed?: { input: bigint; output: bigint } } {
  if (fill.filledInput === undefined || fill.filledOutput === undefined || op.inputMint === op.outputMint) return {};
  return { landed: { input: fill.filledInput, output: fill.filledOutput } };
}

export class ExecutorService {
  private readonly semaphore: Semaphore;
  private readonly now: () => number;
  private readonly inFlight = new Set<string>();
  /** The blockhash of each worker wallet's last transaction, by wallet id. */
  private readonly lastBlockhash = new Map<string, string>();
  readonly stats: ExecutorStats = { received: 0, traded: 0, paperTrades: 0, skipped: {}, deferred: 0, inFlight: 0, recent: [] };
  private metricsTimer: NodeJS.Timeout | undefined;
  private flushRow: (() => Promise<void>) | undefined;
  private readonly closing = new AbortController();
  /** Aborted by close or by the options' signal: ends the submissions in flight. */
  private readonly cancel: AbortSignal;

  constructor(private readonly options: ExecutorServiceOptions) {
    const s = options.settings;
    if (!Number.isInteger(s.maxConcurrentTrades) || s.maxConcurrentTrades < 1 || s.maxConcurrentTrades > 50) {
      throw new TpError(ErrorCode.ConfigInvalid, `maxConcurrentTrades must be an integer from 1 to 50 (spec 03), got ${s.maxConcurrentTrades}`);
    }
    if (!s.paper && (options.wallets === undefined || options.submitters === undefined)) {
      throw new TpError(ErrorCode.ConfigInvalid, 'a real executor needs worker wallets and submitters');
    }
    this.semaphore = new Semaphore(s.maxConcurrentTrades);
    this.now = options.now ?? Date.now;
    this.cancel = options.signal === undefined ? this.closing.signal : AbortSignal.any([this.closing.signal, options.signal]);
  }

  get settings(): ExecutorSettings {
    return this.options.settings;
  }

  private skip(op: TradeOpportunity, reason: SkipReason, detail: string): HandleOutcome {
    this.options.metrics.skipped.inc({ strategy: op.strategy, reason });
    this.stats.skipped[reason] = (this.stats.skipped[reason] ?? 0) + 1;
    this.options.logger?.info({ opportunity: op.id, strategy: op.strategy, reason, detail }, 'opportunity skipped');
    return { kind: 'skipped', reason, detail };
  }

  /** Handles one opportunity (see the module comment). Throws to have the message come back. */
  async handle(op: TradeOpportunity, receivedAt = this.now()): Promise<HandleOutcome> {
    this.stats.received++;
    const tradeId = tradeIdOf(op.id);
    if (this.inFlight.has(tradeId)) return this.defer(`trade ${tradeId} is in flight here`);
    const refusal = this.refusalOf(op);
    if (refusal !== undefined) {
      // A redelivery whose trade exists is reconciled, whatever the opportunity looks like now.
      const existing = await this.options.trades.byOpportunity(op.id);
      if (existing !== null) return this.reconcile(op, existing, receivedAt);
      return this.skip(op, refusal.reason, refusal.detail);
    }

    const mark = performance.now();
    const release = await this.semaphore.acquire();
    this.lap(TradeStage.Semaphore, mark, tradeId);
    this.inFlight.add(tradeId);
    this.stats.inFlight = this.inFlight.size;
    this.options.metrics.inFlight.set(this.inFlight.size);
    try {
      return await this.trade(op, tradeId, receivedAt);
    } finally {
      this.inFlight.delete(tradeId);
      this.stats.inFlight = this.inFlight.size;
      this.options.metrics.inFlight.set(this.inFlight.size);
      release();
    }
  }

  /** Why `op` is skipped before anything is read (expired, stale, a loan no reserve lends), or undefined. */
  private refusalOf(op: TradeOpportunity): { reason: SkipReason; detail: string } | undefined {
    const s = this.options.settings;
    if (this.now() > op.expiresAt) return { reason: SkipReason.Expired, detail: `expired at ${op.expiresAt}` };
    if (op.stateAgeMs > s.maxStateAgeMs) return { reason: SkipReason.StaleState, detail: `state ${op.stateAgeMs} ms old (limit ${s.maxStateAgeMs})` };
    if (op.flashLoan) {
      const reserve = this.options.flashLoans?.reserveFor(op.inputMint);
      if (reserve === undefined) return { reason: SkipReason.NoFlashLoanReserve, detail: `no configured flash-loan reserve lends ${op.inputMint} (flashLoan.reserves)` };
      const fee = flashLoanFee(op.inputAmount, reserve.feeSf);
      if (fee > op.costs.flashLoanFee) return { reason: SkipReason.Unprofitable, detail: `reserve ${reserve.reserve} charges ${fee} for the loan, the opportunity counted ${op.costs.flashLoanFee}` };
    }
    return undefined;
  }

  private defer(detail: string): HandleOutcome {
    this.stats.deferred++;
    return { kind: 'defer', delayMs: this.options.settings.busyRetryMs, detail };
  }

  private async trade(op: TradeOpportunity, tradeId: string, receivedAt: number): Promise<HandleOutcome> {
    const { settings: s, pools, metrics, logger } = this.options;
    const addresses = op.route.map((h) => h.pool);
    // Whether the opportunity was traded already (a redelivery): asked while the pools are read,
    // not before (issue 23); nothing irreversible happens before the answer.
    const known = this.timed(TradeStage.Lookup, tradeId, this.options.trades.byOpportunity(op.id));
    known.catch(() => undefined);
    // The real path needs a recent blockhash: kept warm (RecentBlockhash), else read while the pools are read, not after.
    const blockhashRead = s.paper ? undefined : this.timed(TradeStage.Blockhash, tradeId, this.blockhash());
    blockhashRead?.catch(() => undefined);
    const path = selectExecutionPath(op);
    const tip = tipFor(op, path, s.defaultTip);
    // ... and take the worker wallet while the pools are read (issue 23): its lock and balance
    // reads overlap the pool reads; a trade refused below gives the lock back.
    const walletChoice = s.paper ? undefined : this.timed(TradeStage.Wallet, tradeId, this.chooseWallet(op, path, tip, tradeId));
    walletChoice?.catch(() => undefined);
    const giveBackWallet = async (): Promise<void> => {
      const choice = await walletChoice?.catch(() => undefined);
      if (choice?.kind === 'held') await this.options.wallets!.release(choice.held, null).catch(() => false);
    };
    const giveBack = async (outcome: HandleOutcome): Promise<HandleOutcome> => {
      await giveBackWallet();
      return outcome;
    };
    let mark = performance.now();
    const refreshed = pools.refresh(op.route).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    let existing: StoredTrade | null;
    try {
      existing = await known;
    } catch (err) {
      await Promise.all([refreshed, giveBackWallet()]);
      throw err;
    }
    if (existing !== null) {
      await Promise.all([refreshed, giveBackWallet()]);
      return this.reconcile(op, existing, receivedAt);
    }
    const failed = await refreshed;
    if (failed !== undefined) {
      await giveBackWallet();
      throw failed.err;
    }
    mark = this.lap(TradeStage.Pools, mark, tradeId);
    const slot = pools.oldestSlot(addresses) ?? op.slot;
    if (slot - op.slot > s.maxSlotLag) return giveBack(this.skip(op, SkipReason.StaleState, `state read at slot ${slot}, ${slot - op.slot} slots after the opportunity's ${op.slot} (limit ${s.maxSlotLag})`));
    const requote = requoteRoute(op, pools.source);
    if (!requote.ok) return giveBack(this.skip(op, SkipReason.RequoteRefused, `${requote.reason}: ${requote.message}`));
    if (op.strategy === Strategy.Arbitrage ? requote.profit <= s.minProfit : !requote.meetsMinimum) {
      return giveBack(this.skip(op, SkipReason.Unprofitable, `re-quoted output ${requote.output}, profit ${requote.profit} (expected ${op.expectedProfit}, threshold ${s.minProfit}, minimum output ${op.minimumOutput})`));
    }
    mark = this.lap(TradeStage.Requote, mark, tradeId);
    const request = (computeUnitLimit: number, minimumOutput: bigint, held?: HeldWallet): ExecutionRequest => {
      const r: ExecutionRequest = {
        version: 1,
        tradeId,
        opportunityId: op.id,
        strategy: op.strategy,
        strategyId: op.strategyId,
        executorId: s.executorId,
        path,
        paper: s.paper,
        inputMint: op.inputMint,
        outputMint: op.outputMint,
        profitMint: op.profitMint,
        inputAmount: op.inputAmount,
        expectedOutput: requote.output,
        minimumOutput,
        expectedProfit: requote.profit,
        tip,
        computeUnitLimit,
        computeUnitPrice: s.computeUnitPriceMicroLamports,
        receivedAt,
      };
      if (held !== undefined) {
        r.walletId = held.wallet.id;
        r.walletAddress = held.wallet.address;
      }
      this.stats.lastRequest = r;
      logger?.info({ tradeId, opportunity: op.id, strategy: op.strategy, path, tip: tip.toString(), profit: requote.profit.toString(), wallet: r.walletAddress, paper: s.paper }, 'executing');
      return r;
    };

    if (s.paper) {
      const fill = paperFill(op, pools.source, { path, tip, computeUnitPriceMicroLamports: s.computeUnitPriceMicroLamports });
      if (!fill.ok) return this.skip(op, SkipReason.RequoteRefused, `${fill.reason}: ${fill.message}`);
      const requested = this.publishRequest(request(routeComputeUnits(op.route, op.inputMint, op.flashLoan), requote.output));
      await this.options.trades.insertPaper({
        id: tradeId,
        opportunityId: op.id,
        executorId: s.executorId,
        strategy: op.strategy,
        strategyId: op.strategyId,
        walletId: null,
        path,
        profitMint: op.profitMint,
        expectedProfit: fill.expectedProfit,
        tip: fill.tip,
        route: fill.hops,
        actualProfit: fill.actualProfit,
        fees: fill.fees,
        slot: fill.slot,
      });
      metrics.paper.inc({ path, strategy: op.strategy });
      this.stats.paperTrades++;
      const completedAt = this.now();
      const result: ExecutionResult = {
        version: 1,
        tradeId,
        opportunityId: op.id,
        strategy: op.strategy,
        strategyId: op.strategyId,
        executorId: s.executorId,
        path,
        status: 'paper',
        slot: fill.slot,
        profitMint: op.profitMint,
        expectedProfit: fill.expectedProfit,
        actualProfit: fill.actualProfit,
        ...filledAmountsOf(op.inputMint, op.outputMint, fill.balanceChanges),
        fees: fill.fees,
        tip: fill.tip,
        latency: { receivedAt, executionMs: completedAt - receivedAt },
        completedAt,
      };
      await requested;
      await this.publish(result);
      return { kind: 'traded', result };
    }

    // Real path: the worker wallet taken above, held for the whole trade.
    const choice = await walletChoice!;
    mark = this.lap(TradeStage.WalletWait, mark, tradeId);
    if (choice.kind === 'busy') return this.defer('every worker wallet that could pay is locked');
    if (choice.kind === 'none') return this.skip(op, SkipReason.NoWallet, choice.reason);
    const held = choice.held;
    const keepAlive = setInterval(() => void held.lock.extend().catch(() => false), 10_000);
    keepAlive.unref();
    // What the trade did to the wallet's balances (WorkerWallets.release): nothing until it is sent.
    let spent: BalanceChanges | null | undefined = null;
    let released: Promise<boolean> | undefined;
    const releaseHeld = (): Promise<boolean> => {
      clearInterval(keepAlive);
      released ??= this.options.wallets!.release(held, spent).catch(() => false);
      return released;
    };
    try {
      const plan = planSwapRoute({ owner: held.keypair.address, inputMint: op.inputMint, hops: pools.swapPools(addresses), mode: SwapMode.ExactIn, amount: op.inputAmount, slippageBps: s.slippageBps, createInputTokenAccount: op.flashLoan });
      let build = performance.now() - mark;
      let { blockhash, lastValidBlockHeight } = await blockhashRead!;
      // The wallet's last transaction had this blockhash: another, so this one cannot be the same transaction.
      if (this.lastBlockhash.get(held.wallet.id) === blockhash) ({ blockhash, lastValidBlockHeight } = await this.blockhash(blockhash));
      mark = this.lap(TradeStage.BlockhashWait, mark + build, tradeId);
      const lookupTables = (await this.options.lookupTables?.current()) ?? [];
      const loan = op.flashLoan ? FlashLoans.wrap(this.options.flashLoans!.reserveFor(op.inputMint)!, held.keypair.address, op.inputAmount) : undefined;
      const computeUnitLimit = Math.min(plan.computeUnits + (loan === undefined ? 0 : FLASH_LOAN_COMPUTE_UNITS), MAX_COMPUTE_UNIT_LIMIT);
      const transaction = buildSwapRouteTransaction(plan, { payer: held.keypair, recentBlockhash: blockhash, computeUnitPrice: s.computeUnitPriceMicroLamports, computeUnitLimit, lookupTables, ...(loan === undefined ? {} : { loan }) });
      const requested = this.publishRequest(request(computeUnitLimit, plan.otherAmountThreshold, held));
      build += performance.now() - mark;
      this.options.onStage?.(TradeStage.Build, build, tradeId);
      mark = performance.now();
      // The pending row (with the signature) before anything is sent; a failure here sends nothing.
      await this.options.trades.insertPending({
        id: tradeId,
        opportunityId: op.id,
        executorId: s.executorId,
        strategy: op.strategy,
        strategyId: op.strategyId,
        walletId: held.wallet.id,
        path,
        profitMint: op.profitMint,
        expectedProfit: requote.profit,
        tip,
        route: requote.hops,
        signature: transaction.signature,
        transaction: Buffer.from(transaction.bytes).toString('base64'),
        lastValidBlockHeight,
      });
      this.lastBlockhash.set(held.wallet.id, blockhash);
      mark = this.lap(TradeStage.Pending, mark, tradeId);
      let submittedAt: number | undefined;
      spent = undefined;
      const outcome = await this.options.submitters![path].submit(
        { opportunityId: op.id, transaction, blockhash, lastValidBlockHeight, wallet: held.keypair, ...(path === 'bundle' ? { tipLamports: tip } : {}), mints: [...new Set([op.inputMint, op.outputMint, op.profitMint])], signal: this.cancel },
        {
          // The tip transfer's signature before the bundle goes out: a redelivery settles it too.
          prepared: (info) => this.options.trades.recordTipSignature(tradeId, info.tipSignature),
          submitted: async (info) => {
            this.lap(TradeStage.Send, mark, tradeId);
            submittedAt = info.at;
            metrics.recordSubmitted(path, op.strategy, info.at - receivedAt);
            await this.options.trades.markSubmitted(tradeId, new Date(info.at), info.bundleId).catch((err: unknown) => logger?.warn({ tradeId, err: errorText(err) }, 'submitted status not recorded; the outcome will be'));
          },
        },
      );
      // Landed: its balance changes; refused (failed, never landed): nothing paid; expired: not known.
      if (outcome.status !== 'expired') spent = outcome.balanceChanges ?? (outcome.status === 'failed' && outcome.slot === undefined ? null : undefined);
      if (outcome.status === 'expired' && this.cancel.aborted) {
        // Cut short by close, not expired: it may still land while its blockhash is valid. The row
        // stays pending or submitted; the redelivery reconciles it from the chain (reconcile).
        logger?.info({ tradeId, signature: transaction.signature }, 'submission aborted by close; the trade is left for the redelivery to reconcile');
        await requested.catch(() => undefined);
        return this.defer(`trade ${tradeId} aborted by close before a final status`);
      }
      if (submittedAt === undefined && outcome.submittedAt !== undefined) {
        submittedAt = outcome.submittedAt;
        metrics.recordSubmitted(path, op.strategy, outcome.submittedAt - receivedAt);
      }
      const result = this.resultOf(op, tradeId, held.wallet.address, path, tip, requote.profit, outcome, receivedAt);
      await this.recordOutcome(op, tradeId, outcome, result);
      // The trade is over and recorded: its wallet is free for the next one before the result goes
      // out, so an opportunity that follows the result does not find it still locked.
      await releaseHeld();
      metrics.recordOutcome(path, op.strategy, outcome.status, result.latency.executionMs);
      this.stats.traded++;
      await requested;
      await this.publish(result);
      return { kind: 'traded', result };
    } finally {
      await releaseHeld();
    }
  }

  /** A recent blockhash other than `avoid`: the one kept warm (RecentBlockhash), else read now. */
  private blockhash(avoid?: string): Promise<LatestBlockhash> {
    return this.options.blockhashes?.current(avoid) ?? this.options.chain.getLatestBlockhash();
  }

  /** Reports `stage` as the time since `since` (performance.now()); returns now. */
  private lap(stage: TradeStage, since: number, tradeId: string): number {
    const now = performance.now();
    this.options.onStage?.(stage, now - since, tradeId);
    return now;
  }

  /** `work`, its duration reported as `stage` when it resolves (when someone times the stages). */
  private timed<T>(stage: TradeStage, tradeId: string, work: Promise<T>): Promise<T> {
    if (this.options.onStage === undefined) return work;
    const since = performance.now();
    return work.then((value) => {
      this.lap(stage, since, tradeId);
      return value;
    });
  }

  /** Locks a worker wallet that can pay `op` on `path` (real path). */
  private chooseWallet(op: TradeOpportunity, path: ExecutionPath, tip: bigint, tradeId: string): ReturnType<WorkerWallets['acquire']> {
    // What the wallet must be able to pay: fees at the largest compute budget a transaction can ask, and the tip.
    const fees = realPathFees(path, MAX_COMPUTE_UNIT_LIMIT, this.options.settings.computeUnitPriceMicroLamports);
    // A flash loan lends the input: the wallet pays the fees and tip only.
    return this.options.wallets!.acquire({ mint: op.inputMint, amount: op.flashLoan ? 0n : op.inputAmount, lamports: fees + tip }, tradeId);
  }

  private resultOf(op: TradeOpportunity, tradeId: string, wallet: string, path: ExecutionPath, tip: bigint, expectedProfit: bigint, outcome: SubmissionOutcome, receivedAt: number): ExecutionResult {
    const completedAt = this.now();
    const changes = outcome.status === 'expired' ? undefined : outcome.balanceChanges;
    const result: ExecutionResult = {
      version: 1,
      tradeId,
      opportunityId: op.id,
      strategy: op.strategy,
      strategyId: op.strategyId,
      executorId: this.options.settings.executorId,
      walletAddress: wallet,
      path,
      status: outcome.status,
      signature: outcome.signature,
      profitMint: op.profitMint,
      expectedProfit,
      fees: changes?.fee ?? 0n,
      tip: outcome.status === 'confirmed' ? tip : 0n,
      latency: { receivedAt, executionMs: completedAt - receivedAt },
      completedAt,
    };
    if (outcome.bundleId !== undefined) result.bundleId = outcome.bundleId;
    if (changes !== undefined) {
      result.actualProfit = actualProfitOf(op.profitMint, changes);
      Object.assign(result, filledAmountsOf(op.inputMint, op.outputMint, changes));
    }
    if (outcome.status !== 'expired' && outcome.slot !== undefined) result.slot = outcome.slot;
    if (outcome.status !== 'confirmed') result.error = outcome.error.slice(0, 2_000);
    if (outcome.submittedAt !== undefined) {
      result.latency.submittedAt = outcome.submittedAt;
      result.latency.submitMs = Math.max(0, outcome.submittedAt - receivedAt);
    }
    if (outcome.status === 'confirmed') result.latency.confirmedAt = outcome.confirmedAt;
    return result;
  }

  /** Writes the outcome, retrying a while; throws (the message comes back and is reconciled) if it cannot. */
  private async recordOutcome(op: TradeOpportunity, tradeId: string, outcome: SubmissionOutcome, result: ExecutionResult): Promise<void> {
    const backoff = Backoff.doubling(100, 1_600);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.trades.markOutcome(tradeId, {
          status: outcome.status,
          ...(result.actualProfit !== undefined ? { actualProfit: result.actualProfit } : {}),
          ...(result.slot !== undefined ? { slot: result.slot } : {}),
          ...(outcome.status === 'confirmed' ? { confirmedAt: new Date(outcome.confirmedAt) } : {}),
          ...(result.error !== undefined ? { error: result.error } : {}),
          fees: result.fees,
          ...(result.bundleId !== undefined ? { bundleId: result.bundleId } : {}),
          ...landedOf(op, result),
        });
        return;
      } catch (err) {
        if (attempt >= RECORD_ATTEMPTS) throw err;
        this.options.logger?.warn({ tradeId, attempt, err: errorText(err) }, 'trade outcome not recorded; retrying');
        await new Promise((r) => setTimeout(r, backoff.next()));
      }
    }
  }

  /**
   * Publishes a trade's request (message id: executionRequestMessageId). Never rejects: the
   * request informs, the trade does not wait on it; a failure is logged.
   */
  private async publishRequest(request: ExecutionRequest): Promise<void> {
    try {
      await this.options.results.publish(executionRequestSubject(request.strategy, this.options.subjectPrefix ?? ''), encodeExecutionRequest(request), { msgID: executionRequestMessageId(request.tradeId) });
    } catch (err) {
      this.options.logger?.warn({ tradeId: request.tradeId, err: errorText(err) }, 'execution request not published; the trade goes on');
    }
  }

  private async publish(result: ExecutionResult): Promise<void> {
    await this.options.results.publish(executionResultSubject(result.strategy, this.options.subjectPrefix ?? ''), encodeExecutionResult(result), { msgID: result.tradeId });
    this.stats.recent.unshift(result);
    if (this.stats.recent.length > RECENT) this.stats.recent.length = RECENT;
  }

  /**
   * A redelivered opportunity whose trade exists: a final trade's result is published again (the
   * stream keeps one per trade id); a trade still pending or submitted is asked about on chain by
   * its signature, never sent again as a new transaction.
   */
  private async reconcile(op: TradeOpportunity, t: StoredTrade, receivedAt: number): Promise<HandleOutcome> {
    const wallet = t.walletId === null ? undefined : await this.options.wallets?.addressOf(t.walletId);
    const resultOf = (t: StoredTrade, fill: Fill | undefined): ExecutionResult => {
      const status = t.status as ExecutionStatus;
      const completedAt = this.now();
      const r: ExecutionResult = {
        version: 1,
        tradeId: t.id,
        opportunityId: op.id,
        strategy: op.strategy,
        strategyId: op.strategyId,
        executorId: this.options.settings.executorId,
        path: t.path,
        status,
        profitMint: t.profitMint,
        expectedProfit: t.expectedProfit,
        fees: t.fees ?? 0n,
        tip: status === 'confirmed' || status === 'paper' ? t.tip : 0n,
        latency: { receivedAt, executionMs: completedAt - receivedAt },
        completedAt,
      };
      if (wallet !== undefined) r.walletAddress = wallet;
      if (t.signature !== null) r.signature = t.signature;
      if (t.bundleId !== null) r.bundleId = t.bundleId;
      if (t.slot !== null) r.slot = t.slot;
      if (t.actualProfit !== null) r.actualProfit = t.actualProfit;
      if (t.errorMessage !== null) r.error = t.errorMessage;
      if (fill !== undefined) Object.assign(r, fill);
      return r;
    };
    if (t.status === 'confirmed' || t.status === 'failed' || t.status === 'expired' || t.status === 'paper') {
      const result = resultOf(t, await this.storedFill(op, t, wallet));
      await this.publish(result);
      return { kind: 'traded', result };
    }
    if (t.signature === null || t.walletId === null) throw new TpError(ErrorCode.Internal, `trade ${t.id} is ${t.status} without a signature or wallet`);
    // Another executor may still be running it: its lock names this trade.
    const held = await this.options.wallets!.acquireById(t.walletId, t.id);
    if (held === null) return this.defer(`wallet of trade ${t.id} is locked (the trade may be in flight elsewhere)`);
    try {
      const [status] = await this.options.chain.getSignatureStatuses([t.signature]);
      let outcome: { status: 'confirmed' | 'failed' | 'expired'; slot?: bigint; error?: string; changes?: BalanceChanges | null };
      if (status !== null && status !== undefined && status.confirmationStatus !== 'processed' && status.confirmationStatus !== null) {
        const changes = await this.landedChanges(t, held.wallet.address, [...new Set([op.inputMint, op.outputMint, op.profitMint])]);
        outcome = status.err === null ? { status: 'confirmed', slot: status.slot, changes } : { status: 'failed', slot: status.slot, error: `landed with an error: ${JSON.stringify(status.err)}`, changes };
      } else {
        const height = await this.options.chain.getBlockHeight();
        if (t.lastValidBlockHeight === null || height <= t.lastValidBlockHeight) return this.defer(`trade ${t.id} not landed yet; its blockhash is valid until ${t.lastValidBlockHeight}`);
        outcome = { status: 'expired', error: `not landed by block height ${t.lastValidBlockHeight}` };
      }
      const changes = outcome.changes ?? undefined;
      const actualProfit = changes === undefined ? undefined : actualProfitOf(t.profitMint, changes);
      const fill = changes === undefined ? undefined : filledAmountsOf(op.inputMint, op.outputMint, changes);
      await this.options.trades.markOutcome(t.id, {
        status: outcome.status,
        ...(actualProfit !== undefined ? { actualProfit } : {}),
        ...(outcome.slot !== undefined ? { slot: outcome.slot } : {}),
        ...(outcome.status === 'confirmed' ? { confirmedAt: new Date(this.now()) } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(changes !== undefined ? { fees: changes.fee } : {}),
        ...(fill === undefined ? {} : landedOf(op, fill)),
      });
      const stored = await this.options.trades.byOpportunity(op.id);
      if (stored === null) throw new TpError(ErrorCode.Internal, `trade ${t.id} vanished`);
      const result = resultOf(stored, fill);
      this.options.metrics.recordOutcome(t.path, op.strategy, outcome.status, result.latency.executionMs);
      this.options.logger?.info({ tradeId: t.id, status: outcome.status, signature: t.signature }, 'redelivered trade reconciled from the chain');
      await this.publish(result);
      return { kind: 'traded', result };
    } finally {
      await this.options.wallets!.release(held).catch(() => false);
    }
  }

  /**
   * The wallet's balance changes in a landed trade read back by its signatures: the swap, and for a
   * bundle its recorded tip transfer (the same bundle landed both, all or nothing), summed as the
   * bundle submitter sums them, so the actual profit counts the tip and its fee. Null when the swap
   * cannot be read.
   */
  private async landedChanges(t: StoredTrade, wallet: string, mints: readonly string[]): Promise<BalanceChanges | null> {
    const read = this.options.balanceChanges;
    if (read === undefined || t.signature === null) return null;
    const swap = await read(t.signature, wallet, mints);
    if (swap === null || t.tipSignature === null) return swap;
    const tip = await read(t.tipSignature, wallet, mints);
    if (tip === null) {
      this.options.logger?.warn({ tradeId: t.id, tipSignature: t.tipSignature }, 'the tip transfer of a landed bundle cannot be read; the actual profit leaves it out');
      return swap;
    }
    const tokens = new Map(swap.tokens);
    for (const [mint, change] of tip.tokens) tokens.set(mint, (tokens.get(mint) ?? 0n) + change);
    return { lamports: swap.lamports + tip.lamports, tokens, fee: swap.fee + tip.fee, tip: t.tip, rent: (swap.rent ?? 0n) + (tip.rent ?? 0n) };
  }

  /**
   * The fill a final trade's result carries when it is published again, as the first publication
   * carried it: a paper trade's from its route rows (what the paper fill sold and bought) with its
   * fees and tip; a trade that landed (confirmed, or failed on chain) from the wallet's balance
   * changes in its transaction, read again by its signature. A trade that never landed (expired,
   * refused) has none, as before. Throws TpError Unavailable when a landed trade's transaction
   * cannot be read: the message comes back rather than the result reconciling as a zero fill.
   */
  private async storedFill(op: TradeOpportunity, t: StoredTrade, wallet: string | undefined): Promise<Fill | undefined> {
    if (t.status === 'paper') {
      const route = await this.options.trades.routeAmounts(t.id);
      if (route === null) return undefined;
      return filledAmountsOf(op.inputMint, op.outputMint, paperBalanceChanges(op, route.input, route.output, t.fees ?? 0n, t.tip));
    }
    const landed = t.status === 'confirmed' || (t.status === 'failed' && t.slot !== null);
    if (!landed || t.signature === null) return undefined;
    const changes = wallet === undefined ? null : await this.options.balanceChanges?.(t.signature, wallet, [...new Set([op.inputMint, op.outputMint, op.profitMint])]);
    if (changes === undefined || changes === null) {
      throw new TpError(ErrorCode.Unavailable, `trade ${t.id} landed (${t.signature}) but its balance changes cannot be read; its result is published when they can`, { context: { tradeId: t.id, signature: t.signature } });
    }
    return filledAmountsOf(op.inputMint, op.outputMint, changes);
  }

  /** Writes an executor_metrics row every `intervalMs`. */
  startMetricsRows(intervalMs: number): void {
    const tick = async (): Promise<void> => {
      const row = this.options.metrics.interval();
      try {
        await this.options.trades.recordMetrics(this.options.settings.executorId, new Date(this.now()), row.txSubmitted, row.successRate);
      } catch (err) {
        this.options.logger?.warn({ err: errorText(err) }, 'executor_metrics row not written');
      }
    };
    this.metricsTimer = setInterval(() => void tick(), intervalMs);
    this.metricsTimer.unref();
    this.flushRow = tick;
  }

  /** Ends the submissions in flight (their trades left for reconcile), stops the metrics rows, writing the last interval's. */
  async close(): Promise<void> {
    this.closing.abort(new TpError(ErrorCode.Aborted, 'executor service closed', { context: { reason: 'closed' } }));
    if (this.metricsTimer !== undefined) clearInterval(this.metricsTimer);
    this.metricsTimer = undefined;
    await this.flushRow?.();
    this.flushRow = undefined;
  }
}
