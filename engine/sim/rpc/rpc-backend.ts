import type { AccountRecord, ChainBackend, Commitment, EpochInfo } from '../chain-backend.js';
import type { TokenGrant } from '../faucet.js';
import type { ConfirmedTransaction } from '../transaction-history.js';

/**
 * What the JSON-RPC servers use beyond ChainBackend (leaf module: types and defaults).
 *
 * isBlockhashValid and getGenesisHash need facts ChainBackend does not carry. A chain that has them
 * implements these optional methods; otherwise the servers fall back to the latest blockhash and
 * to the configured genesis hash.
 */
export interface RpcChainExtras {
  /** Whether `blockhash` is still usable for a new transaction (within its last valid block height). */
  isBlockhashValid?(blockhash: string, commitment: Commitment): boolean;
  /** base58 hash of the genesis config. */
  genesisHash?(): string;
  /**
   * getEpochInfo of the slot at `commitment`. Without it the servers answer from the slot with
   * mainnet's schedule (432,000 slots per epoch, no warmup).
   */
  epochInfo?(commitment: Commitment): EpochInfo;
  /** Slots per epoch, for getEpochSchedule (default 432,000). */
  slotsPerEpoch?(): number;
  /**
   * SPL Token accounts whose token-account owner is `owner`, as of `commitment` (any order).
   * Without it, getTokenAccountsByOwner answers with an empty list.
   */
  tokenAccountsByOwner?(owner: string, commitment: Commitment): { address: string; account: AccountRecord }[];
  /** Accounts owned by `programId` as of `commitment` (getProgramAccounts; empty without it). */
  programAccounts?(programId: string, commitment: Commitment): { address: string; account: AccountRecord }[];
  /** getTransaction: a landed transaction with its meta once at `commitment` (confirmed or finalized). */
  transaction?(signature: string, commitment: Commitment): ConfirmedTransaction | undefined;
  /** getRecentPrioritizationFees, ascending by slot. */
  recentPrioritizationFees?(accounts: readonly string[]): { slot: bigint; prioritizationFee: bigint }[];
  /**
   * requestAirdrop: sends `lamports` from the chain's faucet to `to`; returns the signature. A chain
   * without a faucet leaves it out (the node's -32600 Invalid request). Throws RpcError.
   */
  requestAirdrop?(to: string, lamports: bigint, options: { commitment?: Commitment; recentBlockhash?: string }): string;
  /** simRequestTokens (simulator only): credits `amount` atoms of `token` (mint or symbol) to `owner`'s associated account. Throws RpcError. */
  requestTokens?(owner: string, token: string, amount: bigint, commitment?: Commitment): TokenGrant;
}

export type RpcChainBackend = ChainBackend & RpcChainExtras;

/** Who the node says it is: getVersion, `context.apiVersion`, getGenesisHash. */
export interface RpcNodeInfo {
  /** `solana-core` of getVersion, also the `apiVersion` of every response context. */
  solanaCore: string;
  /** `feature-set` of getVersion (a u32). */
  featureSet: number;
  genesisHash: string;
}

export const DEFAULT_NODE_INFO: RpcNodeInfo = Object.freeze({
  solanaCore: '2.2.20',
  featureSet: 3_294_202_862,
  genesisHash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
});

/** The node's default commitment when a request names none (`CommitmentConfig::default()`). */
export const DEFAULT_COMMITMENT: Commitment = 'finalized';

/** The state an HTTP method handler reads. */
export interface RpcMethodContext {
  readonly backend: RpcChainBackend;
  readonly node: RpcNodeInfo;
  /** `"context":{"apiVersion":...,"slot":` prefix, built once. */
  readonly contextPrefix: string;
}

/** `{"context":{"apiVersion":"…","slot":N},"value":…}`: the RpcResponse wrapper, keys sorted. */
export function writeRpcResponse(ctx: RpcMethodContext, slot: bigint, value: string): string {
  return ctx.contextPrefix + slot.toString() + '},"value":' + value + '}';
}

export function contextPrefix(node: RpcNodeInfo): string {
  return '{"context":{"apiVersion":' + JSON.stringify(node.solanaCore) + ',"slot":';
}

export const DEFAULT_RPC_HOST = '127.0.0.1';

/** Where a server listens once started. */
export interface BoundAddress {
  host: string;
  port: number;
  /** `http://host:port`, or `ws://host:port` for the PubSub server. */
  url: string;
}
