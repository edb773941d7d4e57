/**
 * The seam between the executor's orchestration (opportunity → checks → wallet → signed
 * transaction → trade record → ExecutionResult) and its two submission paths, spec 03's bundle
 * executor and direct executor: a signed trade goes in, one outcome comes out.
 *
 * A submitter never builds a second, different swap transaction for the same trade: it sends the
 * bytes it was given (again, on network errors, until their blockhash expires), and reports how the
 * wallet's balances moved once the transaction is on chain.
 */
import type { FittedTransaction, Keypair } from '../chain/index.js';
import type { ExecutionPath } from '../messages/index.js';

/** Spec 03: the executor's execution timeout and the bundle monitoring timeout. */
export const EXECUTION_TIMEOUT_MS = 30_000;
export const BUNDLE_MONITOR_TIMEOUT_MS = 30_000;


export interface TradeSubmission {
  /** The opportunity this trade executes (logs, metrics, bundle bookkeeping). */
  opportunityId: string;
  /** The signed swap transaction; its first signature is the trade's signature. */
  transaction: FittedTransaction;
  /** The blockhash it was signed with, and the last block height at which that blockhash is valid. */
  blockhash: string;
  lastValidBlockHeight: bigint;
  /** The worker wallet: fee payer and owner of the swap; signs the bundle's tip transfer. */
  wallet: Keypair;
  /** Bundle path only: lamports tipped to one of the block engine's tip accounts (5,000..6,000). */
  tipLamports?: bigint;
  /** Mints whose balance change on `wallet` the outcome reports (summed over its token accounts). */
  mints: readonly string[];
  /** Gives up after this long without a final status. Default EXECUTION_TIMEOUT_MS. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface SubmissionEvents {
  /**
   * Once, before anything is sent, with the signatures of the transactions sent beside the swap (a
   * bundle's tip transfer), so they can be recorded first. A rejection sends nothing: submit rejects.
   */
  prepared?(info: { tipSignature: string }): void | Promise<void>;
  /** Once, when the RPC node (direct) or the block engine (bundle) first accepted the trade. */
  submitted?(info: { at: number; signature: string; bundleId?: string }): void | Promise<void>;
}

/** How the wallet's balances moved in the landed transaction (and, for a bundle, its tip). */
export interface BalanceChanges {
  /** Native lamports, fee and tip included (post − pre). */
  lamports: bigint;
  /** Per mint in `TradeSubmission.mints`: post − pre over the wallet's token accounts. */
  tokens: ReadonlyMap<string, bigint>;
  /** The transaction fee(s) the wallet paid, lamports. */
  fee: bigint;
  /** Lamports the wallet tipped in these transactions (a bundle's tip transfer); absent: none. */
  tip?: bigint;
  /** Lamports the transactions locked as rent in token accounts of the wallet they created and left open (LandedTransaction.rent); absent: none. */
  rent?: bigint;
}

interface OutcomeBase {
  path: ExecutionPath;
  signature: string;
  bundleId?: string;
  /** Sends made (1 unless re-sent on network errors). */
  attempts: number;
  /** When it was first accepted, Unix ms; absent when never accepted. */
  submittedAt?: number;
}

/** Landed without error. */
export interface ConfirmedOutcome extends OutcomeBase {
  status: 'confirmed';
  submittedAt: number;
  confirmedAt: number;
  slot: bigint;
  balanceChanges: BalanceChanges;
}

/** Refused, dropped, or landed with an error (then `slot` and `balanceChanges` show the fee paid). */
export interface FailedOutcome extends OutcomeBase {
  status: 'failed';
  error: string;
  slot?: bigint;
  balanceChanges?: BalanceChanges;
}

/** No final status in time: the blockhash expired (it can no longer land) or the timeout passed. */
export interface ExpiredOutcome extends OutcomeBase {
  status: 'expired';
  error: string;
}

export type SubmissionOutcome = ConfirmedOutcome | FailedOutcome | ExpiredOutcome;

export interface Submitter {
  readonly path: ExecutionPath;
  submit(submission: TradeSubmission, events?: SubmissionEvents): Promise<SubmissionOutcome>;
}
