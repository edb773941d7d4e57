import { Backoff } from '../common/index.js';
import type { ExecutionPath } from '../messages/index.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient } from '../rpc/index.js';
import { abortable } from '../pools/index.js';
import { pause } from './pause.js';
import { SendFailure, classifySendFailure } from './send-failure.js';
import type { SubmissionEvents, SubmissionOutcome, TradeSubmission } from './submission.js';

/**
 * One trade's submission, whatever the path (direct: sendTransaction to a node; bundle: sendBundle
 * to a block engine): the same sends, status polls and ends, with the path's own send and status
 * check (`SubmissionPath`).
 *
 * Sends. A send that fails without a verdict (network error, timeout, HTTP or internal error) is
 * repeated with THE SAME signed bytes (so the trade can land at most once whatever happened to the
 * earlier copies), after a doubling backoff, while the blockhash is valid. A send answered "already
 * processed" is an acceptance; one answered with a verdict (a failed preflight, a rejected bundle)
 * ends the trade `failed` once no send is in flight. Sends run beside the status polls, so a hung
 * request does not hide a landed trade; the first poll after a send waits for its answer, a poll
 * interval at most (a status asked with the send can only be unknown).
 *
 * Ends. `final` status → the path settles it (confirmed, or failed on chain with the fee paid).
 * `held` (the node or block engine has it) → nothing more is sent. `failed` → failed with the path's
 * reason. Unknown past lastValidBlockHeight, after the path's last look → `expired` (it can never
 * land); past the monitoring deadline (`timeoutMs`, the path's default) after a last look →
 * `expired`; aborted → `expired` at once: a status poll or block height read in flight is not
 * waited for (it may hang until the request timeout), nor a send.
 */

/** The error of a submission whose signal aborted before a final status. */
export const ABORTED_ERROR = 'aborted before a final status';

/** What one status poll of a path says. */
export type PathStatus =
  /** Landed (confirmed, with or without an error): the path settles the outcome. */
  | { kind: 'final'; settle: (run: RunState) => Promise<SubmissionOutcome> }
  /** The node or block engine holds it: nothing more to send. */
  | { kind: 'held'; detail?: string }
  /** A verdict without anything paid (a bundle the block engine could not land). */
  | { kind: 'failed'; error: string }
  /** Not known (yet), or the poll failed. */
  | { kind: 'unknown'; detail?: string };

/** What a run knows when a path settles or names its outcome. */
export interface RunState {
  attempts: number;
  submittedAt: number | undefined;
  deadline: number;
}

/** A path's part of a submission run. */
export interface SubmissionPath {
  readonly path: ExecutionPath;
  /** One send of the same bytes; resolves when accepted, rejects with the send's error. */
  send(): Promise<void>;
  /** One status poll (never rejects: a failed poll is `unknown`). */
  status(): Promise<PathStatus>;
  /** The look after the blockhash expired or the deadline passed: `final` settles, anything else ends it. */
  lastLook(): Promise<PathStatus>;
  /** Fields every outcome and the submitted event carry beside the signature (the bundle id). */
  ids(): { bundleId?: string };
  /** Texts of the ends. */
  refusedError(message: string): string;
  blockhashExpiredError(lastValidBlockHeight: bigint): string;
  timeoutError(timeoutMs: number, last: PathStatus): string;
}

export interface SubmissionRunSettings {
  chain: Pick<ChainClient, 'getBlockHeight'>;
  pollMs: number;
  resendInitialMs: number;
  resendMaxMs: number;
  /** Monitoring deadline when the submission names none. */
  defaultTimeoutMs: number;
  logger: Logger | undefined;
}

/** The re-send backoff: `initialMs`, doubling, at most `maxMs` (the shared Backoff, no jitter). */
export function resendBackoff(initialMs: number, maxMs: number): Backoff {
  return Backoff.doubling(initialMs, maxMs);
}

export class SubmissionRun {
  private readonly signature: string;
  private readonly deadline: number;
  private readonly timeoutMs: number;
  private readonly backoff: Backoff;
  private readonly log: Logger | undefined;
  private attempts = 0;
  private submittedAt: number | undefined;
  private notified: Promise<void> = Promise.resolve();
  private sending: Promise<void> | undefined;
  private nextSendAt = 0;
  private refusal: string | undefined;
  private lastError = '';

  constructor(
    private readonly settings: SubmissionRunSettings,
    private readonly s: TradeSubmission,
    private readonly path: SubmissionPath,
    private readonly events: SubmissionEvents,
  ) {
    this.signature = s.transaction.signature;
    this.timeoutMs = s.timeoutMs ?? settings.defaultTimeoutMs;
    this.deadline = Date.now() + this.timeoutMs;
    this.backoff = resendBackoff(settings.resendInitialMs, settings.resendMaxMs);
    this.log = settings.logger?.child({ opportunityId: s.opportunityId, signature: this.signature, ...path.ids() });
  }

  async run(): Promise<SubmissionOutcome> {
    const outcome = await this.watch();
    // A send still in flight is not waited for (it may hang until the request timeout); its
    // answer can change nothing now. The submitted event is: the caller records it first.
    await this.notified;
    return outcome;
  }

  private state(): RunState {
    return { attempts: this.attempts, submittedAt: this.submittedAt, deadline: this.deadline };
  }

  private async watch(): Promise<SubmissionOutcome> {
    const signal = this.s.signal;
    for (;;) {
      if (this.aborted()) return this.ended('expired', ABORTED_ERROR);
      if (this.sending === undefined && this.refusal === undefined && Date.now() >= this.nextSendAt) {
        this.send();
        // A status asked beside the send can only say "unknown" (the node has not got it yet), and
        // its request, with the block height read that follows, takes a connection and the node's
        // time from the sends in flight (issue 23): ask once the send answered, or after a poll
        // interval if it hangs.
        await pause(this.settings.pollMs, signal, this.sending);
        if (this.aborted()) return this.ended('expired', ABORTED_ERROR);
      }
      const status = await this.unlessAborted(this.path.status());
      if (status === undefined) return this.ended('expired', ABORTED_ERROR);
      if (status.kind === 'final' || status.kind === 'held') {
        // It reached the chain or the block engine: whatever became of the sends, nothing more to send.
        this.nextSendAt = Number.POSITIVE_INFINITY;
        this.markSubmitted(Date.now());
        if (status.kind === 'final') return status.settle(this.state());
      } else if (status.kind === 'failed') {
        return this.ended('failed', status.error);
      } else {
        if (this.refusal !== undefined && this.sending === undefined) return this.ended('failed', this.path.refusedError(this.refusal));
        const expired = await this.unlessAborted(this.blockhashExpired());
        if (expired === undefined) return this.ended('expired', ABORTED_ERROR);
        if (expired) {
          // A last look: it may have landed in the last block the blockhash allowed.
          const last = await this.path.lastLook();
          if (last.kind === 'final') return this.settle(last);
          if (last.kind !== 'held') return this.ended('expired', `${this.path.blockhashExpiredError(this.s.lastValidBlockHeight)}${this.sendErrorSuffix()}`);
        }
      }
      if (Date.now() >= this.deadline) {
        const last = await this.path.lastLook();
        if (last.kind === 'final') return this.settle(last);
        return this.ended('expired', `${this.path.timeoutError(this.timeoutMs, status)}${this.sendErrorSuffix()}`);
      }
      await pause(this.settings.pollMs, signal, this.sending);
    }
  }

  private aborted(): boolean {
    return this.s.signal?.aborted === true;
  }

  /** `read`'s answer, or undefined as soon as the submission's signal aborts. */
  private async unlessAborted<T>(read: Promise<T>): Promise<T | undefined> {
    const signal = this.s.signal;
    if (signal === undefined) return read;
    try {
      return await abortable(read, signal);
    } catch (err) {
      if (signal.aborted) return undefined;
      throw err;
    }
  }

  private settle(status: Extract<PathStatus, { kind: 'final' }>): Promise<SubmissionOutcome> {
    this.markSubmitted(Date.now());
    return status.settle(this.state());
  }

  /** One send of the same bytes, in the background; its answer sets what happens next. */
  private send(): void {
    this.attempts++;
    const attempt = this.attempts;
    this.sending = this.path
      .send()
      .then(
        () => this.accept(),
        (err: unknown) => {
          const failure = classifySendFailure(err);
          const message = (err as Error).message;
          if (failure === SendFailure.AlreadyProcessed) return this.accept();
          if (failure === SendFailure.Refused) {
            this.refusal = message;
            return;
          }
          this.lastError = message;
          this.nextSendAt = Date.now() + this.backoff.next();
          this.log?.warn({ err, attempt, failure }, 'send failed; the same bytes are sent again');
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

  /** events.submitted, once: at the first acceptance, or when the status shows it though no send was answered. */
  private markSubmitted(at: number): void {
    if (this.submittedAt !== undefined) return;
    this.submittedAt = at;
    const submitted = this.events.submitted;
    if (submitted === undefined) return;
    const info = { at, signature: this.signature, ...this.path.ids() };
    this.notified = Promise.resolve()
      .then(() => submitted(info))
      .catch((err: unknown) => this.log?.error({ err }, 'the submitted event handler failed'));
  }

  private async blockhashExpired(): Promise<boolean> {
    try {
      return (await this.settings.chain.getBlockHeight()) > this.s.lastValidBlockHeight;
    } catch (err) {
      this.log?.debug({ err }, 'getBlockHeight failed');
      return false;
    }
  }

  private ended(status: 'failed' | 'expired', error: string): SubmissionOutcome {
    return {
      path: this.path.path,
      signature: this.signature,
      ...this.path.ids(),
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
