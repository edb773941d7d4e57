import { setTimeout as sleep } from 'node:timers/promises';

import { associatedTokenAddress, buildTransaction, createAssociatedTokenIdempotentInstruction, systemTransferInstruction, tokenTransferInstruction, type InstructionInput, type Keypair } from '../chain/index.js';
import { firstSignatureText } from './signature.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { isRpcFailure, PREFLIGHT_FAILURE, type ChainClient, type TokenAccountInfo } from '../rpc/index.js';
import type { WalletManager, WalletSync } from './wallet-manager.js';
import { NATIVE_SOL, type TransferReason, type TransferRecord, type WalletRecord } from './wallet-repository.js';

/**
 * Worker rebalancing (spec 03 "Worker rebalance thresholds"): a worker holding less than 50% of
 * its expected balance of a token is topped up by the difference from the treasure wallet; one
 * holding more than 150% returns the excess to it. Compared in exact integers (2·actual < expected,
 * 2·actual > 3·expected).
 *
 * Transfers are real signed transactions: a System Program transfer for SOL, an SPL Token transfer
 * for a mint (to the receiver's associated token account, created idempotently in the same
 * transaction). The treasure pays every fee, so a worker returning its excess keeps exactly its
 * expected balance.
 *
 * Idempotent across crashes (schemas/sql/003_wallet_transfers.sql): each transfer is signed, then
 * journaled with its signature and signed bytes, then sent. A run first settles every journaled
 * transfer still open by asking the chain about its signature (re-sending the same bytes while
 * its blockhash is valid: one signature lands at most once), and only then reads the balances and
 * plans. So a crash between sending and recording never pays twice.
 */

export interface PlannedTransfer {
  reason: TransferReason;
  token: string;
  amount: bigint;
  from: WalletRecord;
  to: WalletRecord;
  /** The worker's expected and actual balance that made the transfer. */
  expected: bigint;
  actual: bigint;
  /** For a token: the token account the amount leaves from. */
  sourceTokenAccount?: string;
}

export interface SkippedTransfer {
  worker: string;
  token: string;
  why: string;
}

export interface RebalancePlan {
  transfers: PlannedTransfer[];
  skipped: SkippedTransfer[];
}

export interface TransferOutcome {
  transfer: TransferRecord;
  status: TransferRecord['status'];
  error?: string;
}

export interface RebalanceResult {
  /** Journaled transfers of earlier runs settled first. */
  settled: TransferOutcome[];
  plan: RebalancePlan;
  /** Empty for a dry run. */
  executed: TransferOutcome[];
}

export interface RebalancerOptions {
  /** Lamports the treasure keeps for fees and account rent; SOL top-ups never dip into it. Default 0.01 SOL. */
  treasureSolReserve?: bigint;
  /** Status poll interval while confirming. Default 400 ms. */
  pollMs?: number;
  /** Re-send interval of a transfer not seen yet. Default 2 s. */
  resendMs?: number;
  /** Give up waiting for one transfer after this long (it stays journaled and is settled next run). Default 120 s. */
  confirmTimeoutMs?: number;
  logger?: Logger;
}

/** Who sits where in a planned transfer, by balance and threshold. */
export function planRebalance(workers: readonly WalletSync[], treasure: WalletSync, treasureSolReserve = 10_000_000n): RebalancePlan {
  const transfers: PlannedTransfer[] = [];
  const skipped: SkippedTransfer[] = [];
  // What the treasure can still give, as transfers are planned.
  const available = new Map(treasure.balances);
  available.set(NATIVE_SOL, (available.get(NATIVE_SOL) ?? 0n) - treasureSolReserve);
  const treasureAccounts = largestAccounts(treasure.tokenAccounts);
  for (const w of workers) {
    if (w.wallet.tier !== 'worker' || !w.wallet.enabled) continue;
    const workerAccounts = largestAccounts(w.tokenAccounts);
    for (const [token, expected] of [...w.wallet.expectedBalance].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const actual = w.balances.get(token) ?? 0n;
      if (2n * actual < expected) {
        const amount = expected - actual;
        const left = available.get(token) ?? 0n;
        if (left < amount) {
          skipped.push({ worker: w.wallet.address, token, why: `top-up of ${amount} needed, the treasure can give ${left > 0n ? left : 0n}` });
          continue;
        }
        available.set(token, left - amount);
        const source = token === NATIVE_SOL ? undefined : treasureAccounts.get(token);
        transfers.push({
          reason: 'top_up',
          token,
          amount,
          from: treasure.wallet,
          to: w.wallet,
          expected,
          actual,
          ...(source === undefined ? {} : { sourceTokenAccount: source.address }),
        });
      } else if (2n * actual > 3n * expected) {
        let amount = actual - expected;
        let sourceTokenAccount: string | undefined;
        if (token !== NATIVE_SOL) {
          const source = workerAccounts.get(token)!;
          sourceTokenAccount = source.address;
          // The excess leaves from the worker's largest account of the mint; any rest next run.
          if (source.amount < amount) amount = source.amount;
        }
        transfers.push({ reason: 'return_excess', token, amount, from: w.wallet, to: treasure.wallet, expected, actual, ...(sourceTokenAccount === undefined ? {} : { sourceTokenAccount }) });
      }
    }
  }
  return { transfers, skipped };
}

function largestAccounts(accounts: readonly TokenAccountInfo[]): Map<string, TokenAccountInfo> {
  const out = new Map<string, TokenAccountInfo>();
  for (const a of accounts) {
    const best = out.get(a.mint);
    if (best === undefined || a.amount > best.amount) out.set(a.mint, a);
  }
  return out;
}

export class Rebalancer {
  private readonly pollMs: number;
  private readonly resendMs: number;
  private readonly confirmTimeoutMs: number;
  private readonly treasureSolReserve: bigint;

  constructor(
    private readonly wallets: WalletManager,
    private readonly chain: ChainClient,
    private readonly options: RebalancerOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 400;
    this.resendMs = options.resendMs ?? 2000;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 120_000;
    this.treasureSolReserve = options.treasureSolReserve ?? 10_000_000n;
  }

  /** The one enabled treasure wallet. TP_ERR_WALLET_INVALID when there is none or more than one. */
  async treasure(): Promise<WalletRecord> {
    const treasures = await this.wallets.repo.list({ tier: 'treasure', enabled: true });
    if (treasures.length !== 1) {
      throw new TpError(
        ErrorCode.WalletInvalid,
        treasures.length === 0 ? 'no enabled treasure wallet to rebalance from' : `${treasures.length} enabled treasure wallets; rebalancing needs exactly one`,
        { context: { tier: 'treasure', count: treasures.length } },
      );
    }
    return treasures[0]!;
  }

  /** Settles open transfers, syncs, plans; then (unless `dryRun`) executes the plan and syncs again. */
  async run(options: { dryRun?: boolean } = {}): Promise<RebalanceResult> {
    const settled = options.dryRun === true ? [] : await this.settleOpen();
    const treasure = await this.treasure();
    const workers = await this.wallets.repo.list({ tier: 'worker', enabled: true });
    const [treasureSync, ...workerSyncs] = await this.wallets.sync([treasure, ...workers]);
    const plan = planRebalance(workerSyncs, treasureSync!, this.treasureSolReserve);
    if (options.dryRun === true) return { settled, plan, executed: [] };
    const executed: TransferOutcome[] = [];
    for (const t of plan.transfers) {
      const record = await this.prepare(t);
      await this.send(record);
      executed.push(await this.confirm(record));
    }
    if (executed.length > 0) await this.wallets.sync([treasure, ...workers]);
    return { settled, plan, executed };
  }

  /** Settles every journaled transfer still open (from a run that stopped half-way). */
  async settleOpen(): Promise<TransferOutcome[]> {
    const out: TransferOutcome[] = [];
    for (const record of await this.wallets.repo.openTransfers()) out.push(await this.confirm(record));
    return out;
  }

  /** Builds and signs the transaction of a planned transfer and journals it (not sent yet). */
  async prepare(t: PlannedTransfer): Promise<TransferRecord> {
    const treasure = t.reason === 'top_up' ? t.from : t.to;
    const payer = await this.wallets.signer(treasure);
    const signers: Keypair[] = [payer];
    if (t.from.id !== treasure.id) signers.push(await this.wallets.signer(t.from));
    const instructions: InstructionInput[] = [];
    if (t.token === NATIVE_SOL) {
      instructions.push(systemTransferInstruction(t.from.address, t.to.address, t.amount));
    } else {
      if (t.sourceTokenAccount === undefined) throw new TpError(ErrorCode.WalletInvalid, `no token account of ${t.from.address} holds ${t.token}`, { context: { address: t.from.address, token: t.token } });
      instructions.push(createAssociatedTokenIdempotentInstruction({ payer: payer.address, owner: t.to.address, mint: t.token }));
      instructions.push(tokenTransferInstruction(t.sourceTokenAccount, associatedTokenAddress(t.to.address, t.token), t.from.address, t.amount));
    }
    const { blockhash, lastValidBlockHeight } = await this.chain.getLatestBlockhash();
    const tx = buildTransaction({ payer, instructions, recentBlockhash: blockhash, signers });
    return this.wallets.repo.journalTransfer({
      signature: firstSignatureText(tx),
      fromWalletId: t.from.id,
      toWalletId: t.to.id,
      token: t.token,
      amount: t.amount,
      reason: t.reason,
      transaction: Buffer.from(tx).toString('base64'),
      lastValidBlockHeight,
    });
  }

  /**
   * Sends a journaled transfer. A refused preflight closes it as failed (nothing was submitted);
   * any other failure leaves it open for confirm() (it may have been delivered).
   */
  async send(record: TransferRecord): Promise<void> {
    try {
      await this.chain.sendTransaction(Buffer.from(record.transaction, 'base64'));
    } catch (err) {
      if (isRpcFailure(err, 'rpc') && err.context.rpcCode === PREFLIGHT_FAILURE) {
        // "already processed" means an earlier send landed: confirm() will see it.
        if (/already been processed/i.test(err.message)) return;
        await this.wallets.repo.closeTransfer(record.id, 'failed', err.message);
        record.status = 'failed';
        record.error = err.message;
        return;
      }
      this.options.logger?.warn({ err, signature: record.signature }, 'transfer send failed; confirming by signature');
    }
  }

  /** Waits for a journaled transfer to land, fail, or expire, and records the outcome. */
  async confirm(record: TransferRecord): Promise<TransferOutcome> {
    if (record.status !== 'signed') return { transfer: record, status: record.status, ...(record.error === null ? {} : { error: record.error }) };
    const deadline = Date.now() + this.confirmTimeoutMs;
    let lastSend = 0;
    for (;;) {
      const [status] = await this.chain.getSignatureStatuses([record.signature]);
      if (status !== null && status !== undefined) {
        if (status.err !== null) {
          const error = `failed on chain: ${JSON.stringify(status.err)}`;
          await this.wallets.repo.closeTransfer(record.id, 'failed', error);
          return { transfer: { ...record, status: 'failed', error }, status: 'failed', error };
        }
        if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') {
          await this.wallets.repo.confirmTransfer(record, status.slot);
          return { transfer: { ...record, status: 'confirmed', slot: status.slot }, status: 'confirmed' };
        }
      } else {
        const height = await this.chain.getBlockHeight();
        if (height > record.lastValidBlockHeight) {
          const error = `not seen by block height ${record.lastValidBlockHeight} (its blockhash expired); it can no longer land`;
          await this.wallets.repo.closeTransfer(record.id, 'expired', error);
          return { transfer: { ...record, status: 'expired', error }, status: 'expired', error };
        }
        if (Date.now() - lastSend >= this.resendMs) {
          lastSend = Date.now();
          // The same signed bytes: if the first copy landed, this one cannot.
          await this.chain.sendTransaction(Buffer.from(record.transaction, 'base64'), { skipPreflight: true }).catch(() => undefined);
        }
      }
      if (Date.now() > deadline) {
        throw new TpError(ErrorCode.TransferFailed, `transfer ${record.signature} not confirmed within ${this.confirmTimeoutMs} ms; it stays journaled and is settled by the next run`, {
          context: { signature: record.signature },
        });
      }
      await sleep(this.pollMs);
    }
  }
}
