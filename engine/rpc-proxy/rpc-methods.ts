/**
 * Which JSON-RPC methods the proxy treats as reads (leaf module).
 *
 * A read has no effect on the chain or the node: sending it twice, to two nodes, is harmless, so a
 * read that fails (network error, timeout, HTTP 5xx or 429) is retried on another endpoint. Every
 * other method is a write: `sendTransaction`, `requestAirdrop`, block-engine methods such as
 * `sendBundle`, and every method not listed here, since a method the proxy does not know may have
 * an effect. A write is delivered to exactly one endpoint, once; the proxy never sends it again.
 *
 * The list is Solana's HTTP JSON-RPC read methods (agave's `rpc.rs`: full, minimal, bank and
 * accounts APIs, the deprecated ones included) plus the block engine's read methods.
 * `simulateTransaction` is a read: it executes against a copy of the bank and lands nothing.
 */
export const READ_METHODS: ReadonlySet<string> = new Set([
  'getAccountInfo',
  'getBalance',
  'getBlock',
  'getBlockCommitment',
  'getBlockHeight',
  'getBlockProduction',
  'getBlockTime',
  'getBlocks',
  'getBlocksWithLimit',
  'getClusterNodes',
  'getEpochInfo',
  'getEpochSchedule',
  'getFeeForMessage',
  'getFirstAvailableBlock',
  'getGenesisHash',
  'getHealth',
  'getHighestSnapshotSlot',
  'getIdentity',
  'getInflationGovernor',
  'getInflationRate',
  'getInflationReward',
  'getLargestAccounts',
  'getLatestBlockhash',
  'getLeaderSchedule',
  'getMaxRetransmitSlot',
  'getMaxShredInsertSlot',
  'getMinimumBalanceForRentExemption',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getRecentPerformanceSamples',
  'getRecentPrioritizationFees',
  'getSignatureStatuses',
  'getSignaturesForAddress',
  'getSlot',
  'getSlotLeader',
  'getSlotLeaders',
  'getStakeMinimumDelegation',
  'getSupply',
  'getTokenAccountBalance',
  'getTokenAccountsByDelegate',
  'getTokenAccountsByOwner',
  'getTokenLargestAccounts',
  'getTokenSupply',
  'getTransaction',
  'getTransactionCount',
  'getVersion',
  'getVoteAccounts',
  'isBlockhashValid',
  'minimumLedgerSlot',
  'simulateTransaction',
  // deprecated, still served by many providers
  'getConfirmedBlock',
  'getConfirmedBlocks',
  'getConfirmedBlocksWithLimit',
  'getConfirmedSignaturesForAddress2',
  'getConfirmedTransaction',
  'getFeeCalculatorForBlockhash',
  'getFeeRateGovernor',
  'getFees',
  'getRecentBlockhash',
  'getSnapshotSlot',
  'getStakeActivation',
  // block engine reads
  'getBundleStatuses',
  'getInflightBundleStatuses',
  'getTipAccounts',
]);

/** Writes the proxy knows by name (for metric labels); every unknown method is a write too. */
export const KNOWN_WRITE_METHODS: ReadonlySet<string> = new Set(['sendTransaction', 'requestAirdrop', 'sendBundle']);

export function isReadMethod(method: string): boolean {
  return READ_METHODS.has(method);
}

/**
 * The `method` label of a metric: the method's name when the proxy knows it (a read, a known write
 * or a PubSub method), else `other`, so that clients cannot grow the label set without bound.
 */
export function methodLabel(method: string): string {
  return READ_METHODS.has(method) || KNOWN_WRITE_METHODS.has(method) || PUBSUB_KINDS.has(subscriptionKind(method) ?? '') ? method : 'other';
}

/** The PubSub subscription kinds (agave's `rpc_pubsub.rs`): `<kind>Subscribe`, `<kind>Unsubscribe`, `<kind>Notification`. */
export const PUBSUB_KINDS: ReadonlySet<string> = new Set(['account', 'program', 'signature', 'slot', 'slotsUpdates', 'root', 'logs', 'block', 'vote']);

/** `account` for `accountSubscribe` / `accountUnsubscribe`; null for other methods. */
export function subscriptionKind(method: string): string | null {
  if (method.endsWith('Unsubscribe')) return method.slice(0, -'Unsubscribe'.length) || null;
  if (method.endsWith('Subscribe')) return method.slice(0, -'Subscribe'.length) || null;
  return null;
}

export function isSubscribeMethod(method: string): boolean {
  return method.endsWith('Subscribe') && !method.endsWith('Unsubscribe') && method.length > 'Subscribe'.length;
}

export function isUnsubscribeMethod(method: string): boolean {
  return method.endsWith('Unsubscribe') && method.length > 'Unsubscribe'.length;
}
