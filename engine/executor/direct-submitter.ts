import type { Logger } from '../obs/index.js';
import type { ChainClient, SignatureStatusInfo } from '../rpc/index.js';
import { fetchLanded, sumBalanceChanges } from './landed-balance-changes.js';
import { pause } from './pause.js';
import { ResendBackoff, SendFailure, classifySendFailure } from './send-failure.js';
import { EXECUTION_TIMEOUT_MS, type SubmissionEvents, type SubmissionOutcome, type Submitter, type TradeSubmission } from './submission.js';
import { ExecutionPath } from '../messages/index.js';

/**
 * Spec 03's direct executor: the signed swap goes to an RPC node (sendTransaction), then its
 * signature is watched (getSignatureStatuses) until it is confirmed or failed on chain.
 *
 * Sends. The first goes with the node's preflight (a simulation on its bank) unless
 * `preflight: false`: a trade that would fail is refused for free instead of landing and paying
 * the fee. "Transactions are replayed on network errors" (spec 03): a send that fails without a
 * verdict (network error, timeout, HTTP or internal error) is repeated with THE SAME signed bytes,
 * so the trade can land at most once whatever happened to the earlier copies, with a doubling
 * backoff, while the blockhash is valid. A preflight that answers "already processed" means an
 * earlier copy arrived: that is an acceptance. A preflight refusal (-32002) is `failed` and nothing
 * is sent again. Sends run beside the status polls, so a hung request does not hide a landed trade.
 *
 * Ends. `confirmed` / `failed` once the status is confirmed (a failed transaction still paid its
 * fee: the outcome's balanceChanges show it). `expired` when the block height passed
 * lastValidBlockHeight and the chain does not know the signature (it can never land), or when
 * `timeoutMs` passed first (it might still land until the blockhash expires), or on abort.
 */

export interface DirectSubmitterOptions {
  chain: ChainClient;
  /** Between status polls. Default 400 ms (a slot). */
  pollMs?: number;
  /** First delay before re-sending after a failed send, doubling up to resendMaxMs. Default 250 ms. */
  resendInitialMs?: number;
  /** Default 2000 ms. */
  resendMaxMs?: number;
  /** Ask the node to simulate before accepting (preflight). Default true. */
  preflight?: boolean;
  /** After a final status, how long getTransaction may take to have the record. Default 10 s. */
  recordWaitMs?: number;
  logger?: Logger;
}

type DirectSettings = Required<Omit<DirectSubmitterOptions, 'logger'>> & { logger: Logger | undefined };

export class DirectSubmitter implements Submitter {
  readonly path = ExecutionPath.Direct;
  private readonly options: DirectSettings;

  constructor(options: DirectSubmitterOptions) {
    this.options = {
      chain: options.chain,
      pollMs: options.pollMs ?? 400,
      resendInitialMs: options.resendInitialMs ?? 250,
      resendMaxMs: options.resendMaxMs ?? 2000,
      preflight: options.preflight ?? true,
      recordWaitMs: options.recordWaitMs ?? 10_000,
      logger: options.logger,
    };
  }

  submit(submission: TradeSubmission, events: SubmissionEvents = {}): Promise<SubmissionOutcome> {
    return new DirectRun(this.options, submission, events).run();
  }
}

/** One trade on the direct path: its sends, its status polls, its outcome. */
class DirectRun {
  private readonly chain: ChainClient;
  private readonly signature: string;
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
    private readonly options: DirectSettings,
    private readonly s: TradeSubmission,
    private readonly events: SubmissionEvents,
  ) {
    this.chain = options.chain;
    this.signature = s.transaction.signature;
    this.deadline = Date.now() + (s.timeoutMs ?? EXECUTION_TIMEOUT_MS);
    this.backoff = new ResendBackoff(options.resendInitialMs, options.resendMaxMs);
    this.log = options.logger?.child({ opportunityId: s.opportunityId, signature: this.signature });
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
      if (signal?.aborted === true) return this.expired('aborted before a final status');
      if (this.sending === undefined && this.refusal === undefined && Date.now() >= this.nextSendAt) this.send();
      const status = await this.status();
      if (status !== null) {
        // The chain has it: whatever became of the sends, there is nothing more to send.
        this.nextSendAt = Number.POSITIVE_INFINITY;
        this.markSubmitted(Date.now());
        if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') return this.settle(status);
      } else {
        if (this.refusal !== undefined && this.sending === undefined) return this.refused(this.refusal);
        if (await this.blockhashExpired()) {
          // A last look: it may have landed in the last block the blockhash allowed.
          const last = await this.status();
          if (last === null) {
            return this.expired(`not seen by block height ${this.s.lastValidBlockHeight} (its blockhash expired); it can no longer land${this.lastError === '' ? '' : `; last send error: ${this.lastError}`}`);
          }
        }
      }
      if (Date.now() >= this.deadline) {
        return this.expired(`no final status within ${this.s.timeoutMs ?? EXECUTION_TIMEOUT_MS} ms${this.lastError === '' ? '' : `; last send error: ${this.lastError}`}`);
      }
      await pause(this.options.pollMs, signal, this.sending);
    }
  }

  /** One send of the same bytes, in the background; its answer sets what happens next. */
  private send(): void {
    this.attempts++;
    const attempt = this.attempts;
    this.sending = this.chain
      .sendTransaction(this.s.transaction.bytes, { skipPreflight: !this.options.preflight })
      .then(
        (signature) => {
          if (signature !== this.signature) this.log?.warn({ returned: signature }, 'the node answered another signature than the transaction carries');
          this.accept();
        },
        (err: unknown) => {
          const failure = classifySendFailure(err);
          const message = (err as Error).message;
          if (failure === SendFailure.AlreadyProcessed) return this.accept();
          if (failure === SendFailure.Refused) {
            this.refusal = message;
            return;
          }
          this.lastError = message;
          this.nextSendAt = Date.now() + this.backoff.delay();
          this.log?.warn({ err, attempt, failure }, 'send failed; the same transaction is sent again');
        },
      )
      .finally(() => {
        this.sending = undefined;
      });
  }

  private accept(): void {
    // Accepted: nothing more to send; the status polls take it from here.
    this.nextSendAt = Number.POSITIVE_INFINITY;
    this.markSubmitted(Date.now());
  }

  /** events.submitted, once: at the first acceptance, or when the chain shows it though no send was answered. */
  private markSubmitted(at: number): void {
    if (this.submittedAt !== undefined) return;
    this.submittedAt = at;
    const submitted = this.events.submitted;
    if (submitted === undefined) return;
    this.notified = Promise.resolve()
      .then(() => submitted({ at, signature: this.signature }))
      .catch((err: unknown) => this.log?.error({ err }, 'the submitted event handler failed'));
  }

  private async status(): Promise<SignatureStatusInfo | null> {
    try {
      const [status] = await this.chain.getSignatureStatuses([this.signature]);
      return status ?? null;
    } catch (err) {
      this.log?.debug({ err }, 'getSignatureStatuses failed');
      return null;
    }
  }

  private async blockhashExpired(): Promise<boolean> {
    try {
      return (await this.chain.getBlockHeight()) > this.s.lastValidBlockHeight;
    } catch (err) {
      this.log?.debug({ err }, 'getBlockHeight failed');
      return false;
    }
  }

  private async settle(status: SignatureStatusInfo): Promise<SubmissionOutcome> {
    const confirmedAt = Date.now();
    const landed = await fetchLanded(this.chain, this.signature, this.s.wallet.address, {
      pollMs: this.options.pollMs,
      until: Math.max(this.deadline, confirmedAt + this.options.recordWaitMs),
      ...(this.s.signal === undefined ? {} : { signal: this.s.signal }),
    });
    const base = { path: ExecutionPath.Direct, signature: this.signature, attempts: this.attempts, submittedAt: this.submittedAt ?? confirmedAt };
    const balanceChanges = sumBalanceChanges([landed], this.s.mints);
    if (status.err !== null || landed.err !== null) {
      return { ...base, status: 'failed', error: `failed on chain: ${JSON.stringify(landed.err ?? status.err)}`, slot: landed.slot, balanceChanges };
    }
    return { ...base, status: 'confirmed', confirmedAt, slot: landed.slot, balanceChanges };
  }

  private refused(error: string): SubmissionOutcome {
    return { path: ExecutionPath.Direct, signature: this.signature, attempts: this.attempts, status: 'failed', error: `refused: ${error}`, ...this.submittedField() };
  }

  private expired(error: string): SubmissionOutcome {
    return { path: ExecutionPath.Direct, signature: this.signature, attempts: this.attempts, status: 'expired', error, ...this.submittedField() };
  }

  private submittedField(): { submittedAt?: number } {
    return this.submittedAt === undefined ? {} : { submittedAt: this.submittedAt };
  }
}
