/**
 * What the simulator's protocol servers need from its chain (leaf module: types only).
 *
 * The servers (Solana JSON-RPC over HTTP and WebSocket, the ShredStream gRPC stream, the block
 * engine) speak the real wire protocols and know nothing of how the chain works; the chain
 * (engine/sim/chain.ts) implements this interface. Tests can drive a server with a small in-memory
 * implementation of it.
 */

import type { Commitment } from '../chain/index.js';
import { ErrorCode, TpError, isTpError } from '../errors.js';

export type { Commitment };

export interface AccountRecord {
  lamports: bigint;
  /** base58 program id. */
  owner: string;
  data: Uint8Array;
  executable: boolean;
  /** u64::MAX for rent-exempt accounts, as real nodes report it. */
  rentEpoch: bigint;
}

export interface TokenBalance {
  /** Raw atoms. */
  amount: bigint;
  decimals: number;
}

export interface SignatureStatus {
  slot: bigint;
  /** null once rooted (finalized). */
  confirmations: number | null;
  /** null on success; a real node's TransactionError JSON otherwise, e.g. {InstructionError:[0,{Custom:1}]}. */
  err: unknown;
  confirmationStatus: Commitment;
}

export interface SignatureStatusOptions {
  /**
   * Also search the ledger (the kept transaction history) for a status no longer in the recent
   * status cache, as getSignatureStatuses does with `{searchTransactionHistory: true}`.
   */
  searchTransactionHistory?: boolean;
}

/**
 * A JSON-RPC error as a node returns it: the code (`context.rpcCode`), message and data real
 * clients switch on.
 */
export type RpcError = TpError<typeof ErrorCode.NodeRpcError>;

export function rpcError(rpcCode: number, message: string, data?: unknown): RpcError {
  return new TpError(ErrorCode.NodeRpcError, message, { context: data === undefined ? { rpcCode } : { rpcCode, data } });
}

export function isRpcError(err: unknown): err is RpcError {
  return isTpError(err, ErrorCode.NodeRpcError);
}

/** Standard and Solana-specific JSON-RPC error codes used by the simulator. */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  /** Solana: transaction simulation / preflight failed (sendTransaction). */
  SendTransactionPreflightFailure: -32002,
  /** Solana: signature verification failure. */
  TransactionSignatureVerificationFailure: -32003,
  /** Solana: minContextSlot not reached. */
  MinContextSlotNotReached: -32016,
} as const;

export interface SimulationResult {
  err: unknown;
  logs: string[];
  unitsConsumed: number;
  /** When asked for: each account's state after the simulation, null when the transaction does not load it. */
  accounts?: (AccountRecord | null)[];
}

/** getEpochInfo's answer. */
export interface EpochInfo {
  epoch: bigint;
  /** The slot's index within its epoch. */
  slotIndex: bigint;
  slotsInEpoch: bigint;
  absoluteSlot: bigint;
  blockHeight: bigint;
  /** Transactions processed so far; null when the node does not know. */
  transactionCount: bigint | null;
}

export interface BlockhashInfo {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

/** A batch of entries as the ShredStream proxy forwards it: one `Entry{slot, entries}` message. */
export interface EntryBatch {
  slot: bigint;
  /** bincode Vec<Entry> bytes. */
  entries: Uint8Array;
}

export interface BundleStatus {
  bundleId: string;
  transactions: string[];
  slot: bigint;
  confirmationStatus: Commitment;
  /** null when the bundle landed. */
  err: unknown;
}

export interface ChainBackend {
  /** The slot at the given commitment (processed = newest). */
  slot(commitment?: Commitment): bigint;
  blockHeight(commitment?: Commitment): bigint;
  getAccount(address: string, commitment?: Commitment): AccountRecord | null;
  getTokenBalance(address: string, commitment?: Commitment): TokenBalance | null;
  latestBlockhash(commitment?: Commitment): BlockhashInfo;
  /** Verifies and queues a signed wire-format transaction; returns its signature (base58). Throws RpcError. */
  sendTransaction(tx: Uint8Array, options?: { skipPreflight?: boolean }): string;
  /** `accounts`: addresses whose post-simulation state to return in `SimulationResult.accounts`. */
  simulateTransaction(tx: Uint8Array, options?: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: readonly string[] }): SimulationResult;
  signatureStatus(signature: string, options?: SignatureStatusOptions): SignatureStatus | null;
  /** Block engine: all-or-nothing bundle of up to 5 transactions, landing in the next slot. Throws RpcError. */
  sendBundle(txs: Uint8Array[]): string;
  bundleStatus(bundleId: string): BundleStatus | null;
  tipAccounts(): string[];

  /** Subscriptions; each returns an unsubscribe function. */
  onSlot(listener: (slot: bigint, parent: bigint, root: bigint) => void): () => void;
  onAccount(address: string, listener: (account: AccountRecord | null, slot: bigint) => void): () => void;
  onEntries(listener: (batch: EntryBatch) => void): () => void;
}
