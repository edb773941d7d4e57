import { randomInt } from 'node:crypto';

import { buildFittedTransaction, systemTransferInstruction, type FittedTransaction } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient } from '../rpc/index.js';
import { MAX_TIP, MIN_TIP, ExecutionPath } from '../messages/index.js';
import { InflightBundleStatus, bundleIdOf, type BlockEngineClient } from './block-engine-client.js';
import { fetchLanded, sumBalanceChanges } from './landed-balance-changes.js';
import { pause } from './pause.js';
import { ResendBackoff, SendFailure, classifySendFailure } from './send-failure.js';
import { BUNDLE_MONITOR_TIMEOUT_MS, type SubmissionEvents, type SubmissionOutcome, type Submitter, type TradeSubmission } from './submission.js';

/**
 * Spec 03's bundle executor: the signed swap and a tip transfer (the wallet pays `tipLamports`,
 * 5,000..6,000, to one of the block engine's tip accounts, taken in turn), signed with the swap's
 * blockhash, go to the block engine as one bundle [swap, tip]: both land in one slot, in order,
 * or neither does.
 *
 * Sends. A sendBundle that fails without a verdict (network error, timeout, HTTP or internal
 * error) is repeated with the same two transactions, hence the same bundle id (the block engine
 * keeps one bundle per id), with a doubling backoff, while the blockhash is valid. A sendBundle the
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
        context: { parameter: 'tipLamports', opportunityId: submission.opportunityId, tipLamports: tip === undefined ? null : String(tip) },
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
    return new BundleRun(this.options, submission, tipTransaction, events).run();
  }
}

/** One trade on the bundle path: its sends, its status polls, its outcome. */
class BundleRun {
  private readonly signature: string;
  private readonly bundle: Uint8Array[];
  private bundleId: string;
  private readonly deadline: number;
  private readonly backoff: ResendBackoff;
  private readonly log: Logger | undefined;
  private attempts = 0;
  private submittedAt: number | undefined;
  private notified: Promise<void> = Promise.resolve();
  private sending: Promise<void> | undefined;
  private nextSendAt = 0;
  private refusal: string | undefined;
  private lastError = '';

  constructor(
    private readonly options: BundleSettings,
    private readonly s: TradeSubmission,
    private readonly tip: FittedTransaction,
    private readonly events: SubmissionEvents,
  ) {
    this.signature = s.transaction.signature;
    this.bundle = [s.transaction.bytes, tip.bytes];
    this.bundleId = bundleIdOf([this.signature, tip.signature]);
    this.deadline = Date.now() + (s.timeoutMs ?? BUNDLE_MONITOR_TIMEOUT_MS);
    this.backoff = new ResendBackoff(options.resendInitialMs, options.resendMaxMs);
    this.log = options.logger?.child({ opportunityId: s.opportunityId, signature: this.signature, bundleId: this.bundleId });
  }

  async run(): Promise<SubmissionOutcome> {
    const outcome = await this.watch();
    // A send still in flight is not waited for (it may hang until the request timeout); its
    // answer can change nothing now. The submitted event is: the caller records it first.
    await this.notified;
    return outcome;
  }

  private async watch(): Promise<SubmissionOutcome> {
    const signal = this.s.signal;
    for (;;) {
      if (signal?.aborted === true) return this.ended('expired', 'aborted before a final status');
      if (this.sending === undefined && this.refusal === undefined && Date.now() >= this.nextSendAt) this.send();
      const status = await this.inflightStatus();
      if (status === InflightBundleStatus.Landed) return this.settle();
      if (status === InflightBundleStatus.Pending) {
        // The block engine holds it: whatever became of the sends, there is nothing more to send.
        this.nextSendAt = Number.POSITIVE_INFINITY;
        this.markSubmitted(Date.now());
      }
      if (status === InflightBundleStatus.Failed) {
        // The swap's own status has the last word (a block engine may report a re-sent copy).
        if (await this.swapLanded()) return this.settle();
        return this.ended('failed', 'the block engine could not land the bundle (Failed); nothing was paid');
      }
      if (status === InflightBundleStatus.Invalid || status === undefined) {
        if (this.refusal !== undefined && this.sending === undefined) return this.ended('failed', `rejected by the block engine: ${this.refusal}`);
        if (await this.blockhashExpired()) {
          if (await this.swapLanded()) return this.settle();
          return this.ended('expired', `not landed by block height ${this.s.lastValidBlockHeight} (its blockhash expired); it can no longer land${this.sendErrorSuffix()}`);
        }
      }
      if (Date.now() >= this.deadline) {
        // The block engine may be what failed (status polls unanswered): the swap's own status first.
        if (await this.swapLanded()) return this.settle();
        return this.ended('expired', `bundle not landed within ${this.s.timeoutMs ?? BUNDLE_MONITOR_TIMEOUT_MS} ms (last status ${status ?? 'unknown'})${this.sendErrorSuffix()}`);
      }
      await pause(this.options.pollMs, signal, this.sending);
    }
  }

  private send(): void {
    this.attempts++;
    const attempt = this.attempts;
    this.sending = this.options.blockEngine
      .sendBundle(this.bundle)
      .then(
        (id) => {
          if (id !== this.bundleId) {
            this.log?.warn({ returned: id }, 'the block engine answered another bundle id than the derived one; following its id');
            this.bundleId = id;
          }
          this.nextSendAt = Number.POSITIVE_INFINITY;
          this.markSubmitted(Date.now());
        },
        (err: unknown) => {
          const message = (err as Error).message;
          if (classifySendFailure(err) === SendFailure.Refused) {
            this.refusal = message;
            return;
          }
          this.lastError = message;
          this.nextSendAt = Date.now() + this.backoff.delay();
          this.log?.warn({ err, attempt }, 'sendBundle failed; the same bundle is sent again');
        },
      )
      .finally(() => {
        this.sending = undefined;
      });
  }

  private markSubmitted(at: number): void {
    if (this.submittedAt !== undefined) return;
    this.submittedAt = at;
    const submitted = this.events.submitted;
    if (submitted === undefined) return;
    const bundleId = this.bundleId;
    this.notified = Promise.resolve()
      .then(() => submitted({ at, signature: this.signature, bundleId }))
      .catch((err: unknown) => this.log?.error({ err }, 'the submitted event handler failed'));
  }

  private async inflightStatus(): Promise<InflightBundleStatus | undefined> {
    try {
      const [info] = await this.options.blockEngine.getInflightBundleStatuses([this.bundleId]);
      return info?.status;
    } catch (err) {
      this.log?.debug({ err }, 'getInflightBundleStatuses failed');
      return undefined;
    }
  }

  private async swapLanded(): Promise<boolean> {
    try {
      const [status] = await this.options.chain.getSignatureStatuses([this.signature]);
      return status !== null && status !== undefined && status.err === null;
    } catch {
      return false;
    }
  }

  private async blockhashExpired(): Promise<boolean> {
    try {
      return (await this.options.chain.getBlockHeight()) > this.s.lastValidBlockHeight;
    } catch (err) {
      this.log?.debug({ err }, 'getBlockHeight failed');
      return false;
    }
  }

  private async settle(): Promise<SubmissionOutcome> {
    const landedAt = Date.now();
    this.markSubmitted(landedAt);
    const wait = {
      pollMs: this.options.pollMs,
      until: Math.max(this.deadline, landedAt + this.options.recordWaitMs),
      ...(this.s.signal === undefined ? {} : { signal: this.s.signal }),
    };
    const owner = this.s.wallet.address;
    const [swap, tip] = await Promise.all([
      fetchLanded(this.options.chain, this.signature, owner, wait),
      fetchLanded(this.options.chain, this.tip.signature, owner, wait),
    ]);
    const balanceChanges = sumBalanceChanges([swap, tip], this.s.mints);
    const base = { path: ExecutionPath.Bundle, signature: this.signature, bundleId: this.bundleId, attempts: this.attempts, submittedAt: this.submittedAt ?? landedAt };
    if (swap.err !== null) return { ...base, status: 'failed', error: `failed on chain: ${JSON.stringify(swap.err)}`, slot: swap.slot, balanceChanges };
    return { ...base, status: 'confirmed', confirmedAt: landedAt, slot: swap.slot, balanceChanges };
  }

  private ended(status: 'failed' | 'expired', error: string): SubmissionOutcome {
    return {
      path: ExecutionPath.Bundle,
      signature: this.signature,
      bundleId: this.bundleId,
      attempts: this.attempts,
      status,
      error,
      ...(this.submittedAt === undefined ? {} : { submittedAt: this.submittedAt }),
    };
  }

  private sendErrorSuffix(): string {
    return this.lastError === '' ? '' : `; last send error: ${this.lastError}`;
  }
}
