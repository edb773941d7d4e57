import { randomInt } from 'node:crypto';

import { buildFittedTransaction, systemTransferInstruction, type FittedTransaction } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient } from '../rpc/index.js';
import { MAX_TIP, MIN_TIP, ExecutionPath } from '../messages/index.js';
import { InflightBundleStatus, bundleIdOf, type BlockEngineClient } from './block-engine-client.js';
import { fetchLanded, sumBalanceChanges } from './landed-balance-changes.js';
import { BUNDLE_MONITOR_TIMEOUT_MS, type SubmissionEvents, type SubmissionOutcome, type Submitter, type TradeSubmission } from './submission.js';
import { SubmissionRun, type PathStatus, type RunState, type SubmissionPath } from './submission-run.js';

/**
 * Spec 03's bundle executor: the signed swap and a tip transfer (the wallet pays `tipLamports`,
 * 5,000..6,000, to one of the block engine's tip accounts, taken in turn), signed with the swap's
 * blockhash, go to the block engine as one bundle [swap, tip]: both land in one slot, in order,
 * or neither does.
 *
 * Sends (submission-run.ts, shared with the direct path). A sendBundle that fails without a verdict
 * (network error, timeout, HTTP or internal error) is repeated with the same two transactions,
 * hence the same bundle id (the block engine keeps one bundle per id), with a doubling backoff,
 * while the blockhash is valid. A sendBundle the
 * block engine answers with an error (it dropped or refused the bundle) is `failed`.
 *
 * Ends. getInflightBundleStatuses is polled: Landed → getTransaction of the swap and of the tip,
 * `confirmed` with both in balanceChanges (lamports and fee: the wallet paid both). Failed → `failed`
 * (a bundle is all or nothing: nothing was paid), unless the swap's own signature shows it landed.
 * Pending / Invalid until the block height passes lastValidBlockHeight → `expired` (it can no longer
 * land), or until the bundle monitoring timeout (`timeoutMs`, default 30 s) → `expired`.
 */

export interface BundleSubmitterOptions {
  chain: ChainClient;
  blockEngine: BlockEngineClient;
  /** Between status polls. Default 400 ms (a slot). */
  pollMs?: number;
  /** First delay before re-sending after a failed sendBundle, doubling up to resendMaxMs. Default 250 ms. */
  resendInitialMs?: number;
  /** Default 2000 ms. */
  resendMaxMs?: number;
  /** After the bundle landed, how long getTransaction may take to have the records. Default 10 s. */
  recordWaitMs?: number;
  /**
   * Index of the tip account the first bundle tips; the next ones take the following accounts in
   * turn. Default random, so that executors started together do not all write the same account.
   */
  firstTipAccount?: number;
  logger?: Logger;
}

type BundleSettings = Required<Omit<BundleSubmitterOptions, 'logger' | 'firstTipAccount'>> & { logger: Logger | undefined };

export class BundleSubmitter implements Submitter {
  readonly path = ExecutionPath.Bundle;
  private readonly options: BundleSettings;
  private tipTurn: number;

  constructor(options: BundleSubmitterOptions) {
    this.tipTurn = options.firstTipAccount ?? randomInt(1 << 16);
    this.options = {
      chain: options.chain,
      blockEngine: options.blockEngine,
      pollMs: options.pollMs ?? 400,
      resendInitialMs: options.resendInitialMs ?? 250,
      resendMaxMs: options.resendMaxMs ?? 2000,
      recordWaitMs: options.recordWaitMs ?? 10_000,
      logger: options.logger,
    };
  }

  /** Throws TpError BadParameter when tipLamports is missing or outside 5,000..6,000 (nothing is sent). */
  async submit(submission: TradeSubmission, events: SubmissionEvents = {}): Promise<SubmissionOutcome> {
    const tip = submission.tipLamports;
    if (tip === undefined || tip < MIN_TIP || tip > MAX_TIP) {
      throw new TpError(ErrorCode.BadParameter, `a bundle's tip must be ${MIN_TIP}..${MAX_TIP} lamports, got ${tip ?? 'none'}`, {
        context: { parameter: 'tipLamports', opportunityId: submission.opportunityId, value: tip === undefined ? null : String(tip) },
      });
    }
    let accounts: string[];
    try {
      accounts = await this.options.blockEngine.getTipAccounts();
    } catch (err) {
      return {
        path: ExecutionPath.Bundle,
        signature: submission.transaction.signature,
        attempts: 0,
        status: 'failed',
        error: `no tip accounts from the block engine: ${(err as Error).message}`,
      };
    }
    const tipAccount = accounts[this.tipTurn++ % accounts.length]!;
    const tipTransaction = buildFittedTransaction({
      payer: submission.wallet,
      instructions: [systemTransferInstruction(submission.wallet.address, tipAccount, tip)],
      recentBlockhash: submission.blockhash,
    });
    await events.prepared?.({ tipSignature: tipTransaction.signature });
    const o = this.options;
    const settings = { chain: o.chain, pollMs: o.pollMs, resendInitialMs: o.resendInitialMs, resendMaxMs: o.resendMaxMs, defaultTimeoutMs: BUNDLE_MONITOR_TIMEOUT_MS, logger: o.logger };
    return new SubmissionRun(settings, submission, new BundlePath(o, submission, tipTransaction), events).run();
  }
}

/** The bundle path: sendBundle [swap, tip] to the block engine, getInflightBundleStatuses of its id. */
class BundlePath implements SubmissionPath {
  readonly path = ExecutionPath.Bundle;
  private readonly signature: string;
  private readonly bundle: Uint8Array[];
  private bundleId: string;

  constructor(
    private readonly options: BundleSettings,
    private readonly s: TradeSubmission,
    private readonly tip: FittedTransaction,
  ) {
    this.signature = s.transaction.signature;
    this.bundle = [s.transaction.bytes, tip.bytes];
    this.bundleId = bundleIdOf([this.signature, tip.signature]);
  }

  ids(): { bundleId?: string } {
    return { bundleId: this.bundleId };
  }

  async send(): Promise<void> {
    const id = await this.options.blockEngine.sendBundle(this.bundle);
    if (id !== this.bundleId) {
      this.options.logger?.warn({ bundleId: this.bundleId, returned: id }, 'the block engine answered another bundle id than the derived one; following its id');
      this.bundleId = id;
    }
  }

  async status(): Promise<PathStatus> {
    let status: InflightBundleStatus | undefined;
    try {
      const [info] = await this.options.blockEngine.getInflightBundleStatuses([this.bundleId]);
      status = info?.status;
    } catch (err) {
      this.options.logger?.debug({ err, bundleId: this.bundleId }, 'getInflightBundleStatuses failed');
    }
    if (status === InflightBundleStatus.Landed) return this.final();
    if (status === InflightBundleStatus.Pending) return { kind: 'held', detail: status };
    if (status === InflightBundleStatus.Failed) {
      // The swap's own status has the last word (a block engine may report a re-sent copy).
      if (await this.swapLanded()) return this.final();
      return { kind: 'failed', error: 'the block engine could not land the bundle (Failed); nothing was paid' };
    }
    return { kind: 'unknown', ...(status === undefined ? {} : { detail: status }) };
  }

  /** The swap's own status: the block engine may be what failed. */
  async lastLook(): Promise<PathStatus> {
    return (await this.swapLanded()) ? this.final() : { kind: 'unknown' };
  }

  refusedError(message: string): string {
    return `rejected by the block engine: ${message}`;
  }

  blockhashExpiredError(lastValidBlockHeight: bigint): string {
    return `not landed by block height ${lastValidBlockHeight} (its blockhash expired); it can no longer land`;
  }

  timeoutError(timeoutMs: number, last: PathStatus): string {
    const detail = last.kind === 'held' || last.kind === 'unknown' ? last.detail : undefined;
    return `bundle not landed within ${timeoutMs} ms (last status ${detail ?? 'unknown'})`;
  }

  private final(): PathStatus {
    return { kind: 'final', settle: (run) => this.settle(run) };
  }

  private async swapLanded(): Promise<boolean> {
    try {
      const [status] = await this.options.chain.getSignatureStatuses([this.signature]);
      return status !== null && status !== undefined && status.err === null;
    } catch {
      return false;
    }
  }

  private async settle(run: RunState): Promise<SubmissionOutcome> {
    const landedAt = Date.now();
    const wait = {
      pollMs: this.options.pollMs,
      until: Math.max(run.deadline, landedAt + this.options.recordWaitMs),
      ...(this.s.signal === undefined ? {} : { signal: this.s.signal }),
    };
    const owner = this.s.wallet.address;
    const [swap, tip] = await Promise.all([fetchLanded(this.options.chain, this.signature, owner, wait), fetchLanded(this.options.chain, this.tip.signature, owner, wait)]);
    const balanceChanges = { ...sumBalanceChanges([swap, tip], this.s.mints), tip: this.s.tipLamports ?? 0n };
    const base = { path: ExecutionPath.Bundle, signature: this.signature, bundleId: this.bundleId, attempts: run.attempts, submittedAt: run.submittedAt ?? landedAt };
    if (swap.err !== null) return { ...base, status: 'failed', error: `failed on chain: ${JSON.stringify(swap.err)}`, slot: swap.slot, balanceChanges };
    return { ...base, status: 'confirmed', confirmedAt: landedAt, slot: swap.slot, balanceChanges };
  }
}
