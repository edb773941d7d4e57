/**
 * The stages of a real trade between "received" and "submitted", for whoever times them (the
 * bench's `executor` suite): each reported once per trade with its duration in milliseconds
 * (performance.now(), fractions kept). Stages that overlap the pool re-read (the wallet, the
 * blockhash) are reported twice: how long they took, and how long the trade still waited for them
 * once the pools were read (`*_wait`), which is what they add to the path.
 */
export const TradeStage = {
  /** The trades lookup by opportunity (PostgreSQL; a redelivery is reconciled, not traded), beside the pools' read. */
  Lookup: 'lookup',
  /** Waiting for a permit of maxConcurrentTrades. */
  Semaphore: 'semaphore',
  /** The route's pools read again over RPC (route-pools.ts), until the lookup beside it answered too. */
  Pools: 'pools',
  /** The route re-quoted on the state just read. */
  Requote: 'requote',
  /** The worker wallet: its lock and what it holds, from start to answer. */
  Wallet: 'wallet',
  WalletWait: 'wallet_wait',
  /** The latest blockhash, from start to answer. */
  Blockhash: 'blockhash',
  BlockhashWait: 'blockhash_wait',
  /** The swap planned, the lookup tables, built and signed. */
  Build: 'build',
  /** The pending row, its routes and the journal (PostgreSQL). */
  Pending: 'pending',
  /** The submitter until the node accepted the send. */
  Send: 'send',
} as const;
export type TradeStage = (typeof TradeStage)[keyof typeof TradeStage];

/** Called once per stage of a trade (see TradeStage); must not throw. */
export type TradeStageObserver = (stage: TradeStage, ms: number, tradeId: string) => void;
