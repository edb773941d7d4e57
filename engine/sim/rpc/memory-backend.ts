import { JITO_TIP_ACCOUNTS } from '../known-accounts.js';
import { ChainListeners, type AccountListener, type EntriesListener, type SlotListener } from '../chain-listeners.js';
import { createHash } from 'node:crypto';

import bs58 from 'bs58';

import {
  rpcError,
  type RpcError,
  RpcErrorCode,
  type AccountRecord,
  type BlockhashInfo,
  type BundleStatus,
  type Commitment,
  type EntryBatch,
  type SignatureStatus,
  type SimulationResult,
  type TokenBalance,
} from '../chain-backend.js';
import type { RpcChainBackend } from './rpc-backend.js';
import { firstSignature } from './wire-transaction.js';

/**
 * A small, real ChainBackend over maps, for tests of anything that talks to the simulator's
 * servers. One account state (every commitment sees it), a slot that moves only when told to,
 * confirmed and finalized trailing it by fixed distances, one fixed blockhash. Submitted
 * transactions are recorded and land at the current slot; their status follows the slots.
 */

export interface MemoryBackendOptions {
  /** Starting processed slot. Default 100. */
  slot?: bigint;
  /** Slots between processed and confirmed. Default 1. */
  confirmedLag?: bigint;
  /** Slots between processed and finalized (the root). Default 32. */
  finalizedLag?: bigint;
  /** Default: 32 bytes of 0x01 in base58. */
  blockhash?: string;
  genesisHash?: string;
}

/** A transaction's blockhash stays valid for this many blocks (`MAX_PROCESSING_AGE` + 1). */
const BLOCKHASH_VALIDITY = 151n;


interface Landed {
  slot: bigint;
  err: unknown;
}

export class MemoryBackend implements RpcChainBackend {
  /** Every transaction accepted by sendTransaction, in order. */
  readonly sentTransactions: Uint8Array[] = [];
  /** Every bundle accepted by sendBundle, in order. */
  readonly sentBundles: Uint8Array[][] = [];
  /** When set, sendTransaction throws it instead of accepting. */
  sendTransactionError: RpcError | null = null;
  /** When set, sendBundle throws it instead of accepting. */
  sendBundleError: RpcError | null = null;
  /** What simulateTransaction returns. */
  simulation: SimulationResult = { err: null, logs: [], unitsConsumed: 0 };
  /** What simulateTransaction receives, in order. */
  readonly simulatedTransactions: Uint8Array[] = [];

  private current: bigint;
  private readonly confirmedLag: bigint;
  private readonly finalizedLag: bigint;
  private readonly blockhash: string;
  private readonly genesis: string;
  private readonly accounts = new Map<string, AccountRecord>();
  private readonly tokenBalances = new Map<string, TokenBalance>();
  private readonly statuses = new Map<string, SignatureStatus>();
  private readonly landed = new Map<string, Landed>();
  private readonly bundles = new Map<string, BundleStatus>();
  private readonly listeners = new ChainListeners();

  constructor(options: MemoryBackendOptions = {}) {
    this.current = options.slot ?? 100n;
    this.confirmedLag = options.confirmedLag ?? 1n;
    this.finalizedLag = options.finalizedLag ?? 32n;
    this.blockhash = options.blockhash ?? bs58.encode(new Uint8Array(32).fill(1));
    this.genesis = options.genesisHash ?? bs58.encode(new Uint8Array(32).fill(2));
  }

  // --- driving the chain (tests) ---

  /** Sets (or with null deletes) an account at the current slot and notifies its subscribers. */
  setAccount(address: string, account: AccountRecord | null): void {
    if (account === null) this.accounts.delete(address);
    else this.accounts.set(address, account);
    this.notifyAccount(address, account);
  }

  setTokenBalance(address: string, balance: TokenBalance | null): void {
    if (balance === null) this.tokenBalances.delete(address);
    else this.tokenBalances.set(address, balance);
  }

  /** Fixes a signature's status, overriding what sent transactions would report. */
  setSignatureStatus(signature: string, status: SignatureStatus | null): void {
    if (status === null) this.statuses.delete(signature);
    else this.statuses.set(signature, status);
  }

  /**
   * Moves `count` slots forward, notifying slot subscribers at each; `changes` are applied at the
   * last new slot and notified to their account subscribers.
   */
  advanceSlot(count = 1, changes?: Iterable<readonly [string, AccountRecord | null]>): bigint {
    for (let i = 0; i < count; i++) {
      const parent = this.current;
      this.current += 1n;
      const root = this.slot('finalized');
      for (const listener of [...this.listeners.slot]) listener(this.current, parent, root);
    }
    if (changes !== undefined) {
      for (const [address, account] of changes) this.setAccount(address, account);
    }
    return this.current;
  }

  /** Sends an entry batch to onEntries listeners. */
  emitEntries(batch: EntryBatch): void {
    for (const listener of [...this.listeners.entries]) listener(batch);
  }

  /** Listeners currently attached (to check that servers clean up). */
  listenerCount(kind: 'slot' | 'entries' | 'account', address?: string): number {
    if (kind === 'slot') return this.listeners.slot.size;
    if (kind === 'entries') return this.listeners.entries.size;
    if (address !== undefined) return this.listeners.account.get(address)?.size ?? 0;
    let n = 0;
    for (const set of this.listeners.account.values()) n += set.size;
    return n;
  }

  // --- ChainBackend ---

  slot(commitment: Commitment = 'processed'): bigint {
    const lag = commitment === 'processed' ? 0n : commitment === 'confirmed' ? this.confirmedLag : this.finalizedLag;
    return this.current > lag ? this.current - lag : 0n;
  }

  /** No skipped slots: the block height is the slot. */
  blockHeight(commitment?: Commitment): bigint {
    return this.slot(commitment);
  }

  getAccount(address: string): AccountRecord | null {
    return this.accounts.get(address) ?? null;
  }

  getTokenBalance(address: string): TokenBalance | null {
    return this.tokenBalances.get(address) ?? null;
  }

  latestBlockhash(commitment?: Commitment): BlockhashInfo {
    return { blockhash: this.blockhash, lastValidBlockHeight: this.blockHeight(commitment) + BLOCKHASH_VALIDITY };
  }

  isBlockhashValid(blockhash: string): boolean {
    return blockhash === this.blockhash;
  }

  genesisHash(): string {
    return this.genesis;
  }

  sendTransaction(tx: Uint8Array): string {
    if (this.sendTransactionError !== null) throw this.sendTransactionError;
    const signature = firstSignature(tx);
    if (signature === null) {
      throw rpcError(
        RpcErrorCode.InvalidParams,
        'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: unexpected end of file',
      );
    }
    this.sentTransactions.push(tx.slice());
    if (!this.landed.has(signature)) this.landed.set(signature, { slot: this.current, err: null });
    return signature;
  }

  simulateTransaction(tx: Uint8Array): SimulationResult {
    this.simulatedTransactions.push(tx.slice());
    return this.simulation;
  }

  signatureStatus(signature: string): SignatureStatus | null {
    const fixed = this.statuses.get(signature);
    if (fixed !== undefined) return fixed;
    const landed = this.landed.get(signature);
    if (landed === undefined) return null;
    if (landed.slot <= this.slot('finalized')) {
      return { slot: landed.slot, confirmations: null, err: landed.err, confirmationStatus: 'finalized' };
    }
    return {
      slot: landed.slot,
      confirmations: Number(this.current - landed.slot),
      err: landed.err,
      confirmationStatus: landed.slot <= this.slot('confirmed') ? 'confirmed' : 'processed',
    };
  }

  sendBundle(txs: Uint8Array[]): string {
    if (this.sendBundleError !== null) throw this.sendBundleError;
    if (txs.length === 0 || txs.length > 5) {
      throw rpcError(RpcErrorCode.InvalidParams, `bundle must contain 1 to 5 transactions, got ${txs.length}`);
    }
    const signatures = txs.map((tx) => firstSignature(tx) ?? '');
    const bundleId = createHash('sha256').update(signatures.join(',')).digest('hex');
    this.sentBundles.push(txs.map((tx) => tx.slice()));
    const slot = this.current + 1n;
    for (const signature of signatures) this.landed.set(signature, { slot, err: null });
    this.bundles.set(bundleId, { bundleId, transactions: signatures, slot, confirmationStatus: 'processed', err: null });
    return bundleId;
  }

  bundleStatus(bundleId: string): BundleStatus | null {
    return this.bundles.get(bundleId) ?? null;
  }

  tipAccounts(): string[] {
    return [...JITO_TIP_ACCOUNTS];
  }

  onSlot(listener: SlotListener): () => void {
    return this.listeners.onSlot(listener);
  }

  onAccount(address: string, listener: AccountListener): () => void {
    return this.listeners.onAccount(address, listener);
  }

  onEntries(listener: EntriesListener): () => void {
    return this.listeners.onEntries(listener);
  }

  private notifyAccount(address: string, account: AccountRecord | null): void {
    const set = this.listeners.account.get(address);
    if (set === undefined) return;
    for (const listener of [...set]) listener(account, this.current);
  }
}
