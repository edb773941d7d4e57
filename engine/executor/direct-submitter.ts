import type { Logger } from '../obs/index.js';
import type { ChainClient, SignatureStatusInfo } from '../rpc/index.js';
import { fetchLanded, sumBalanceChanges } from './landed-balance-changes.js';
import { EXECUTION_TIMEOUT_MS, type SubmissionEvents, type SubmissionOutcome, type Submitter, type TradeSubmission } from './submission.js';
import { SubmissionRun, type PathStatus, type RunState, type SubmissionPath } from './submission-run.js';
import { ExecutionPath } from '../messages/index.js';

/**
 * Spec 03's direct executor: the signed swap goes to an RPC node (sendTransaction), then its
 * signature is watched (getSignatureStatuses) until it is confirmed or failed on chain.
 *
 * Sends (submission-run.ts, shared with the bundle path). The first goes with the node's preflight
 * (a simulation on its bank) unless `preflight: false`: a trade that would fail is refused for free
 * instead of landing and paying the fee. "Transactions are replayed on network errors" (spec 03):
 * the same signed bytes, doubling backoff, while the blockhash is valid. A preflight that answers
 * "already processed" is an acceptance; a preflight refusal (-32002) is `failed`.
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
    const o = this.options;
    const settings = { chain: o.chain, pollMs: o.pollMs, resendInitialMs: o.resendInitialMs, resendMaxMs: o.resendMaxMs, defaultTimeoutMs: EXECUTION_TIMEOUT_MS, logger: o.logger };
    return new SubmissionRun(settings, submission, new DirectPath(o, submission), events).run();
  }
}

/** The direct path: sendTransaction to the node, getSignatureStatuses of the signature. */
class DirectPath implements SubmissionPath {
  readonly path = ExecutionPath.Direct;
  private readonly signature: string;

  constructor(
    private readonly options: DirectSettings,
    private readonly s: TradeSubmission,
  ) {
    this.signature = s.transaction.signature;
  }

  ids(): { bundleId?: string } {
    return {};
  }

  async send(): Promise<void> {
    const signature = await this.options.chain.sendTransaction(this.s.transaction.bytes, { skipPreflight: !this.options.preflight });
    if (signature !== this.signature) this.options.logger?.warn({ signature: this.signature, returned: signature }, 'the node answered another signature than the transaction carries');
  }

  async status(): Promise<PathStatus> {
    let status: SignatureStatusInfo | null;
    try {
      [status = null] = await this.options.chain.getSignatureStatuses([this.signature]);
    } catch (err) {
      this.options.logger?.debug({ err, signature: this.signature }, 'getSignatureStatuses failed');
      return { kind: 'unknown' };
    }
    if (status === null) return { kind: 'unknown' };
    const landed = status;
    if (landed.confirmationStatus === 'confirmed' || landed.confirmationStatus === 'finalized') return { kind: 'final', settle: (run) => this.settle(landed, run) };
    return { kind: 'held' };
  }

  lastLook(): Promise<PathStatus> {
    return this.status();
  }

  refusedError(message: string): string {
    return `refused: ${message}`;
  }

  blockhashExpiredError(lastValidBlockHeight: bigint): string {
    return `not seen by block height ${lastValidBlockHeight} (its blockhash expired); it can no longer land`;
  }

  timeoutError(timeoutMs: number): string {
    return `no final status within ${timeoutMs} ms`;
  }

  private async settle(status: SignatureStatusInfo, run: RunState): Promise<SubmissionOutcome> {
    const confirmedAt = Date.now();
    const landed = await fetchLanded(this.options.chain, this.signature, this.s.wallet.address, {
      pollMs: this.options.pollMs,
      until: Math.max(run.deadline, confirmedAt + this.options.recordWaitMs),
      ...(this.s.signal === undefined ? {} : { signal: this.s.signal }),
    });
    const base = { path: ExecutionPath.Direct, signature: this.signature, attempts: run.attempts, submittedAt: run.submittedAt ?? confirmedAt };
    const balanceChanges = sumBalanceChanges([landed], this.s.mints);
    if (status.err !== null || landed.err !== null) {
      return { ...base, status: 'failed', error: `failed on chain: ${JSON.stringify(landed.err ?? status.err)}`, slot: landed.slot, balanceChanges };
    }
    return { ...base, status: 'confirmed', confirmedAt, slot: landed.slot, balanceChanges };
  }
}
