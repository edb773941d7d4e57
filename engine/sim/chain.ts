import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import { ChainListeners, type AccountListener, type AccountWritesListener, type EntriesListener, type SlotListener } from './chain-listeners.js';
import { base58 } from '../chain/index.js';
import { DEFAULT_PROGRAM_IDS, DEX_KINDS, type Dex } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import { AccountOverlay, AccountsDb } from './accounts-db.js';
import {
  LookupTableExtendError,
  extendLookupTableState,
  lookupTableRecord,
  poolSwapAccounts,
  readLookupTable,
  type LookupTableExtension,
  type LookupTableState,
} from './address-lookup-tables.js';
import { BlockProducer, type PendingBundle, type SlotBuild } from './block-producer.js';
import { BlockhashQueue } from './blockhash-queue.js';
import { associatedTokenProgram } from './associated-token-program.js';
import { computeBudgetProgram, memoProgram, systemProgram, token2022Program, tokenProgram, voteProgram } from './builtin-programs.js';
import {
  rpcError,
  RpcErrorCode,
  type AccountRecord,
  type BlockhashInfo,
  type BundleStatus,
  type Commitment,
  type EntryBatch,
  type EpochInfo,
  type SignatureStatus,
  type SignatureStatusOptions,
  type SimulationResult,
  type TokenBalance,
} from './chain-backend.js';
import { blockTimeOf, epochOf } from './chain-time.js';
import { DEFAULT_FAUCET_CAP_SOL, SimFaucet, type AirdropOptions, type TokenGrant } from './faucet.js';
import { TransactionFlow } from './flow.js';
import { createGenesis, type Genesis } from './genesis.js';
import { deriveBundleId } from './http/bundle-id.js';
import type { ProgramHandler } from './invoke-context.js';
import { KeyCache } from './key-cache.js';
import {
  ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  DEFAULT_SLOTS_PER_EPOCH,
  FINALIZATION_DEPTH,
  JITO_TIP_ACCOUNTS,
  MAX_PROCESSING_AGE,
  MEMO_PROGRAM_ID,
  STATUS_CACHE_SLOTS,
  SYSTEM_PROGRAM_ID,
  TICKS_PER_SLOT,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  VOTE_PROGRAM_ID,
} from './known-accounts.js';
import { MarketState } from './market-state.js';
import type { MarketView, SimPoolView, SimToken } from './market-view.js';
import { ReferenceOracle } from './oracle.js';
import { PohRecorder } from './poh.js';
import { buildPool, type PoolPlan, type SimPoolInfo } from './pool-genesis.js';
import { SimRandom } from './prng.js';
import { pieceHolds, pieceHoldsBundle, planPiece, takeTicksDue, type PieceWork, type Submitted } from './slot-piece.js';
import type { RpcChainBackend } from './rpc/rpc-backend.js';
import {
  TransactionParser,
  isParseError,
  signatureKeyOf,
  staticKeyBytes,
  verifyTransactionSignatures,
  type SimTransaction,
} from './sim-transaction.js';
import { isTokenAccount, mintDecimals, tokenAccountMint, tokenAmount } from './spl-token.js';
import { StatusCache } from './status-cache.js';
import { findTokenAccountsByOwner } from './token-accounts.js';
import { PrioritizationFeeCache, SlotFees } from './prioritization-fees.js';
import { TransactionHistory, type ConfirmedTransaction } from './transaction-history.js';
import { createDexProgram } from './dex-programs/dex-program.js';
import { createFlashLoanProgram } from './flash-loan-program.js';
import { Runtime } from './runtime.js';
import { TxError, transactionErrorText, type TransactionErrorValue } from './tx-errors.js';

/**
 * The simulated chain: a deterministic, seeded local Solana chain (ChainBackend for the protocol
 * servers, MarketView for the quote API).
 *
 * A slot is made in SLOT_PIECES pieces, one every slotMs / SLOT_PIECES of wall clock (or all at
 * once by `advanceSlot()`), as a leader streams entries while it executes: each piece takes the
 * bundles and transactions submitted since the last piece, then its share of the generated flow
 * (flow.ts), in batches of up to txsPerEntry transactions (slot-piece.ts). Batch by batch it
 * executes them in that order with the simulated runtime (failed ones pay their fee and change
 * nothing else; ones that cannot pay do not land; a bundle lands whole or not at all), records the
 * landed ones into entries with the piece's ticks then due (poh.ts) and sends those entry batches
 * to the listeners. A running chain runs one batch per turn of its event loop (at 8 transactions,
 * about half a millisecond), its batches spread over the piece's interval, so each batch's account
 * writes and entries leave, and reads are answered, while the piece goes on; advanceSlot() runs
 * them all at once, to the same entries and states. After the last piece the slot's state is
 * committed, then the slot and the accounts that changed are announced. Reads see committed slots
 * only, so entries arrive before the state they lead to, as ShredStream's do.
 *
 * Commitments: processed is the newest slot, confirmed the one before, finalized 32 behind; every
 * read at a commitment sees the accounts as of that slot. Block height equals the slot.
 *
 * Everything that changes state follows from the seed; the wall clock only decides when a piece is
 * made, and each piece's work is fixed by its index. Two chains with the same seed and settings
 * and no submitted transactions produce the same entries and states.
 *
 * Address lookup tables (address-lookup-tables.ts) exist from genesis and hold the pools' swap
 * accounts; a share of the flow's swaps loads them through the tables. `extendLookupTable()`
 * appends addresses to a table between slots, as its authority's ExtendLookupTable would.
 */

export interface SimChainOptions {
  seed: number;
  /** Default 400. */
  slotMs?: number;
  /** Generated transactions per second of simulated time. Default 2000. */
  txRate?: number;
  /** Share of generated transactions that swap. Default 0.2. */
  poolShare?: number;
  /** Share of generated swaps sent as v0 transactions through the address lookup tables. Default 0.3. */
  lookupSwapShare?: number;
  /** Tokens besides SOL and USDC. Default 6. */
  tokens?: number;
  /** Pools of each kind. Default 4. */
  poolsPerKind?: number;
  /**
   * Transactions per entry, and per batch the leader executes before it records and sends them.
   * Default 8 (about mainnet's entries; the flow's 2,000 tx/s make pieces of 50).
   */
  txsPerEntry?: number;
  /**
   * Slots per epoch (mainnet's 432,000 by default; no warmup). The epoch selects the Token-2022
   * mint's transfer fee (its newer fee takes effect at a later epoch).
   */
  slotsPerEpoch?: number;
  /** Slots advance only through advanceSlot() (tests). Default false: start() runs the clock. */
  manual?: boolean;
  /** requestAirdrop's per-request cap, SOL (faucet.ts). Default 1,000. */
  faucetCapSol?: number;
  logger?: Logger;
}

export interface SimChainStats {
  slot: bigint;
  /** Transactions landed (flow and submitted), failed ones included. */
  transactions: number;
  failedTransactions: number;
  /** Submitted transactions that did not land (expired blockhash, duplicate, bad signature, fee). */
  droppedTransactions: number;
  bundlesLanded: number;
  bundlesFailed: number;
  /** Milliseconds spent making slots (signing the flow, executing, entries, commits), summed. */
  busyMs: number;
  /** The last slot's production time over its pieces, ms. */
  lastSlotMs: number;
  /** Pieces made (slots × SLOT_PIECES plus the current slot's pieces done). */
  pieces: number;
}

interface BundleRecord {
  status: BundleStatus;
}


/** Pieces a slot is made in: its entries stream out over the slot, and its CPU cost is spread. */
export const SLOT_PIECES = 16;

/** What a step of a piece finished: a batch, the piece, or the piece and its slot. */
type PieceStep = 'batch' | 'piece' | 'slot';


export class SimChain implements RpcChainBackend, MarketView {
  readonly genesis: Genesis;
  readonly settings: Required<Omit<SimChainOptions, 'logger'>>;
  /** Funds wallets with real transactions: requestAirdrop, simRequestTokens (faucet.ts). */
  readonly faucet: SimFaucet;
  private readonly log: Logger | undefined;
  private readonly db: AccountsDb;
  private readonly keys = new KeyCache();
  private readonly parser: TransactionParser;
  private readonly runtime: Runtime;
  private readonly flow: TransactionFlow;
  private readonly oracle: ReferenceOracle;
  private readonly market: MarketState;
  private readonly poh: PohRecorder;
  private readonly pohRng: SimRandom;
  private readonly statusCache = new StatusCache(STATUS_CACHE_SLOTS);
  private readonly prioritizationFees = new PrioritizationFeeCache();
  private readonly history = new TransactionHistory();
  private readonly genesisHashText: string;
  private readonly poolInfos = new Map<string, SimPoolInfo>();
  private readonly tokenIndex = new Map<string, number>();
  /** Pools created after genesis (their plan index: past every genesis pool's, 10,000 on). */
  private createdPools = 0;

  private processed = 0n;
  /** Blockhashes of the last MAX_PROCESSING_AGE slots and of the finalized ones before them. */
  private readonly blockhashes = new BlockhashQueue(MAX_PROCESSING_AGE + FINALIZATION_DEPTH + 2);
  private readonly producer: BlockProducer;
  private submitted: Submitted[] = [];
  private bundleQueue: PendingBundle[] = [];
  private building: SlotBuild | undefined;
  /** The piece being made: set while a running chain's piece spans several turns. */
  private work: PieceWork | undefined;
  private readonly bundles = new Map<string, BundleRecord>();

  private readonly listeners = new ChainListeners();
  private clockOn = false;
  private timer: NodeJS.Timeout | undefined;
  /** The rest of the piece being made, at the next check phase. */
  private continuation: NodeJS.Immediate | undefined;
  /**
   * A slot whose last batch ran but which is not committed yet (a running chain commits it at the
   * next check phase, `finishing`), and that immediate.
   */
  private finishing: SlotBuild | undefined;
  private finishImmediate: NodeJS.Immediate | undefined;
  private slotStartedAt = 0;
  private readonly counters: SimChainStats = {
    slot: 0n,
    transactions: 0,
    failedTransactions: 0,
    droppedTransactions: 0,
    bundlesLanded: 0,
    bundlesFailed: 0,
    busyMs: 0,
    lastSlotMs: 0,
    pieces: 0,
  };

  constructor(options: SimChainOptions) {
    this.settings = {
      seed: options.seed >>> 0,
      slotMs: options.slotMs ?? 400,
      txRate: options.txRate ?? 2000,
      poolShare: options.poolShare ?? 0.2,
      lookupSwapShare: options.lookupSwapShare ?? 0.3,
      tokens: options.tokens ?? 6,
      poolsPerKind: options.poolsPerKind ?? 4,
      txsPerEntry: options.txsPerEntry ?? 8,
      slotsPerEpoch: options.slotsPerEpoch ?? DEFAULT_SLOTS_PER_EPOCH,
      manual: options.manual ?? false,
      faucetCapSol: options.faucetCapSol ?? DEFAULT_FAUCET_CAP_SOL,
    };
    if (!Number.isInteger(this.settings.slotsPerEpoch) || this.settings.slotsPerEpoch < 1) {
      throw invalidArgument('slotsPerEpoch', this.settings.slotsPerEpoch, `slotsPerEpoch must be a positive integer, got ${this.settings.slotsPerEpoch}`);
    }
    this.log = options.logger;
    const s = this.settings;
    this.genesis = createGenesis({ seed: s.seed, tokens: s.tokens, poolsPerKind: s.poolsPerKind });
    for (const pool of this.genesis.market.pools) this.poolInfos.set(pool.address, pool);
    this.genesis.market.tokens.forEach((t, i) => this.tokenIndex.set(t.mint, i));
    this.db = new AccountsDb(this.genesis.accounts, 0n);
    this.parser = new TransactionParser(this.keys);

    const programs = new Map<string, ProgramHandler>([
      [SYSTEM_PROGRAM_ID, systemProgram],
      [TOKEN_PROGRAM_ID, tokenProgram],
      [TOKEN_2022_PROGRAM_ID, token2022Program],
      [VOTE_PROGRAM_ID, voteProgram],
      [MEMO_PROGRAM_ID, memoProgram],
      [COMPUTE_BUDGET_PROGRAM_ID, computeBudgetProgram],
      [ASSOCIATED_TOKEN_PROGRAM_ID, associatedTokenProgram],
    ]);
    for (const dex of DEX_KINDS) programs.set(DEFAULT_PROGRAM_IDS[dex], createDexProgram(dex));
    programs.set(this.genesis.lending.programId, createFlashLoanProgram());
    this.runtime = new Runtime(programs, this.keys);

    this.oracle = new ReferenceOracle(s.seed, this.genesis.market.tokens);
    this.market = new MarketState(this.genesis.market.pools, this.db);
    this.market.invalidate(blockTimeOf(1n, s.slotMs), this.epochAt(1n));
    this.flow = new TransactionFlow(
      { seed: s.seed, txRate: s.txRate, slotMs: s.slotMs, poolShare: s.poolShare, lookupSwapShare: s.lookupSwapShare },
      this.genesis.market.pools,
      this.genesis.actors,
      {
        pool: (info) => this.market.pool(info),
        context: (info) => this.market.context(info),
        referencePriceUsd: (mint) => this.oracle.priceUsd(mint),
        transferFees: (info) => this.market.transferFees(info),
      },
      this.genesis.lookupTables.tables,
    );
    this.poh = new PohRecorder(this.genesis.hash);
    this.pohRng = SimRandom.derive(s.seed, 'poh');
    this.genesisHashText = base58.encode(this.genesis.hash);
    this.blockhashes.remember(0n, this.genesisHashText);
    this.producer = new BlockProducer(this.runtime, this.statusCache, this.blockhashes, this.counters, (slot, changes, signature) => this.announceApplied(slot, changes, signature));
    this.faucet = new SimFaucet(this, s.seed, s.faucetCapSol);
  }

  // ---- the clock

  /** Starts the slot clock (not in manual mode). */
  start(): void {
    if (this.settings.manual || this.clockOn) return;
    this.settleFinish();
    this.clockOn = true;
    this.slotStartedAt = performance.now() - ((this.building?.piece ?? 0) * this.settings.slotMs) / SLOT_PIECES;
    if (this.work !== undefined) this.continuation = setImmediate(() => this.continuePiece());
    else this.schedule();
  }

  /** Stops the slot clock (a piece under way stays so, until start() or advanceSlot()). Idempotent. */
  stop(): void {
    this.clockOn = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.continuation !== undefined) clearImmediate(this.continuation);
    this.timer = undefined;
    this.continuation = undefined;
    this.settleFinish();
  }

  get running(): boolean {
    return this.clockOn;
  }

  /** Makes the rest of the current slot and `count - 1` more now; returns the newest slot. */
  advanceSlot(count = 1): bigint {
    for (let i = 0; i < count; i++) {
      const slot = this.processed + 1n;
      while (this.processed < slot) this.makePiece();
    }
    return this.processed;
  }

  private schedule(): void {
    // SLOT_PIECES pieces every slotMs, on absolute deadlines. A slot whose commit waits for the
    // check phase (finishing) is done: the piece due next is the next slot's first.
    const piece = this.finishing !== undefined ? 0 : (this.building?.piece ?? 0);
    const due = this.slotStartedAt + ((piece + 1) * this.settings.slotMs) / SLOT_PIECES;
    this.timer = setTimeout(() => this.tick(), Math.max(0, due - performance.now()));
  }

  /** A piece is due: begins it and runs its first batches. */
  private tick(): void {
    this.timer = undefined;
    if (!this.clockOn) return;
    this.work ??= this.beginPiece();
    this.continuePiece();
  }

  /**
   * Runs the next batch of the piece being made, then yields to the event loop (the Geyser
   * server's and the entry stream's HTTP/2 writes, queued as immediates during the batch, go out
   * first at this check phase; the RPC server's requests are read at the poll phase) and goes on
   * at the next batch's due time (batchDue), or at once when that has passed; once the piece is
   * done, waits for the next one's deadline.
   */
  private continuePiece(): void {
    this.continuation = undefined;
    if (!this.clockOn) return;
    const work = this.work;
    let step: PieceStep = 'piece';
    if (work !== undefined) {
      // advanceSlot() may have finished the piece meanwhile: then only the deadline is left.
      try {
        step = this.step(work, true);
      } catch (err) {
        this.log?.error({ err }, 'simulated chain failed to make a slot');
        step = this.work === undefined ? 'piece' : 'batch';
      }
    }
    if (step === 'batch' && this.work !== undefined) {
      const wait = this.batchDue(this.work) - performance.now();
      if (wait >= 1) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.continuePiece();
        }, wait);
      } else {
        this.continuation = setImmediate(() => this.continuePiece());
      }
      return;
    }
    if (step === 'slot') {
      // The slot's last batch wrote to the Geyser streams and recorded the slot's last entries: those
      // writes (HTTP/2 frames, sent at the check phase) leave before the commit's work, which runs
      // at that check phase too, after them.
      if (this.finishing !== undefined) {
        this.finishImmediate = setImmediate(() => {
          this.finishImmediate = undefined;
          this.settleFinish();
        });
      }
      this.slotStartedAt += this.settings.slotMs;
      // After a long stall (a paused process), restart the clock instead of racing to catch up.
      const now = performance.now();
      if (now - this.slotStartedAt > 5 * this.settings.slotMs) this.slotStartedAt = now;
    }
    this.schedule();
  }

  /**
   * When the piece's next batch is due: its batches are spread evenly over one piece interval from
   * the piece's own deadline, as a leader executes the flow as it arrives rather than in a burst,
   * so the chain's thread is free most of the time between batches (reads answered at once, the
   * readers of a batch's writes not racing the rest of the piece for the CPU).
   */
  private batchDue(work: PieceWork): number {
    const pieceMs = this.settings.slotMs / SLOT_PIECES;
    const piece = this.building?.piece ?? 0;
    return this.slotStartedAt + (piece + 1) * pieceMs + (work.next * pieceMs) / work.batches.length;
  }

  // ---- making a slot

  /** Makes the piece being made, or the next one, whole; true when it finished the slot. */
  private makePiece(): boolean {
    this.settleFinish();
    const work = this.work ?? this.beginPiece();
    for (;;) {
      const step = this.step(work);
      if (step !== 'batch') return step === 'slot';
    }
  }

  /** Takes what was submitted since the last piece and this piece's share of the flow, in batches. */
  private beginPiece(): PieceWork {
    this.settleFinish();
    const b = (this.building ??= this.beginSlot());
    // This piece's share of the slot's generated flow, signed (batch by batch) with the last slot's blockhash.
    const share = Math.floor(((b.piece + 1) * b.flowTotal) / SLOT_PIECES) - b.flowDone;
    b.flowDone += share;
    const ticks = Math.floor(((b.piece + 1) * TICKS_PER_SLOT) / SLOT_PIECES) - Math.floor((b.piece * TICKS_PER_SLOT) / SLOT_PIECES);
    const work = planPiece(this.bundleQueue, this.submitted, share, this.settings.txsPerEntry, ticks);
    this.bundleQueue = [];
    this.submitted = [];
    this.work = work;
    return work;
  }

  /**
   * Runs the piece's next batch and records its entries with the ticks then due (a piece without
   * transactions: its ticks), and sends them to the listeners; after the piece's last batch, the
   * piece is done, and after the slot's last piece the slot is committed.
   */
  private step(work: PieceWork, deferCommit = false): PieceStep {
    this.settleFinish();
    const started = performance.now();
    const b = (this.building ??= this.beginSlot());
    const batch = work.batches[work.next++];
    const included: Uint8Array[] = [];
    if (batch !== undefined) {
      work.done += batch.size;
      for (const bundle of batch.bundles) this.bundles.set(bundle.id, { status: this.producer.runBundle(b, bundle, included) });
      for (const { tx, verified } of batch.submitted) this.producer.runSubmitted(b, tx, verified, included);
      if (batch.generated > 0) {
        for (const bytes of this.flow.generate(b.slot, this.blockhashes.hashAt(this.processed)!, batch.generated)) {
          const tx = this.parser.parse(bytes);
          if (isParseError(tx)) throw new TpError(ErrorCode.Internal, `generated transaction does not parse: ${tx.message}`);
          this.producer.runGenerated(b, tx, included);
        }
      }
    }
    for (const entries of this.poh.recordBatch(included, takeTicksDue(work), this.settings.txsPerEntry, this.pohRng)) this.emitEntries({ slot: b.slot, entries });
    let step: PieceStep = 'batch';
    if (work.next >= work.batches.length) {
      this.work = undefined;
      b.piece++;
      this.counters.pieces++;
      step = b.piece === SLOT_PIECES ? 'slot' : 'piece';
      if (step === 'slot') {
        if (deferCommit) this.finishing = b;
        else this.finishSlot(b);
      }
    }
    const elapsed = performance.now() - started;
    b.busyMs += elapsed;
    this.counters.busyMs += elapsed;
    if (step === 'slot') this.counters.lastSlotMs = b.busyMs;
    return step;
  }

  private beginSlot(): SlotBuild {
    const slot = this.processed + 1n;
    return {
      slot,
      blockTime: blockTimeOf(slot, this.settings.slotMs),
      epoch: this.epochAt(slot),
      state: new AccountOverlay(this.db),
      statuses: new Map(),
      piece: 0,
      flowTotal: this.flow.countFor(slot),
      flowDone: 0,
      busyMs: 0,
      fees: new SlotFees(),
      records: new Map(),
    };
  }

  /** Commits the slot and announces it and the accounts it changed. */
  /** Commits the slot whose last batch ran (`finishing`), if there is one: before anything builds on it. */
  private settleFinish(): void {
    const b = this.finishing;
    if (b === undefined) return;
    this.finishing = undefined;
    if (this.finishImmediate !== undefined) clearImmediate(this.finishImmediate);
    this.finishImmediate = undefined;
    const started = performance.now();
    this.finishSlot(b);
    // The commit is the slot's work too, as when it runs inside its last step.
    const elapsed = performance.now() - started;
    b.busyMs += elapsed;
    this.counters.busyMs += elapsed;
    this.counters.lastSlotMs = b.busyMs;
  }

  private finishSlot(b: SlotBuild): void {
    this.building = undefined;
    const slot = b.slot;
    const blockhash = base58.encode(this.poh.lastHash);
    const parent = this.processed;
    this.db.commitSlot(slot, b.state.changes);
    this.processed = slot;
    const root = this.slot('finalized');
    this.db.setRoot(root);
    this.statusCache.addSlot(slot, b.statuses);
    this.prioritizationFees.addSlot(slot, b.fees);
    this.history.addSlot(slot, b.records);
    this.blockhashes.remember(slot, blockhash);
    this.pruneBundles(slot);
    this.oracle.step();
    this.market.invalidate(blockTimeOf(slot + 1n, this.settings.slotMs), this.epochAt(slot + 1n));
    this.counters.slot = slot;

    // The account-write listeners heard each transaction's writes as it was applied (announceApplied).
    for (const listener of [...this.listeners.slot]) this.call(() => listener(slot, parent, root));
    if (this.listeners.account.size > 0) {
      for (const [address, record] of b.state.changes) {
        const set = this.listeners.account.get(address);
        if (set === undefined) continue;
        for (const listener of [...set]) this.call(() => listener(record, slot));
      }
    }
  }

  private pruneBundles(slot: bigint): void {
    for (const [id, record] of this.bundles) {
      if (record.status.slot > slot - BigInt(STATUS_CACHE_SLOTS)) break;
      this.bundles.delete(id);
    }
  }

  private emitEntries(batch: EntryBatch): void {
    for (const listener of [...this.listeners.entries]) this.call(() => listener(batch));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log?.error({ err }, 'simulated chain listener failed');
    }
  }

  // ---- ChainBackend: reads

  slot(commitment: Commitment = 'processed'): bigint {
    const lag = commitment === 'processed' ? 0n : commitment === 'confirmed' ? 1n : BigInt(FINALIZATION_DEPTH);
    return this.processed > lag ? this.processed - lag : 0n;
  }

  /** No skipped slots: the block height is the slot. */
  blockHeight(commitment?: Commitment): bigint {
    return this.slot(commitment);
  }

  getAccount(address: string, commitment: Commitment = 'processed'): AccountRecord | null {
    return commitment === 'processed' ? this.db.get(address) : this.db.getAt(address, this.slot(commitment));
  }

  getTokenBalance(address: string, commitment: Commitment = 'processed'): TokenBalance | null {
    const account = this.getAccount(address, commitment);
    if (account === null || (account.owner !== TOKEN_PROGRAM_ID && account.owner !== TOKEN_2022_PROGRAM_ID) || !isTokenAccount(account.data)) return null;
    const mint = this.getAccount(tokenAccountMint(account.data), commitment);
    const decimals = mint === null ? undefined : mintDecimals(mint.data);
    if (decimals === undefined) return null;
    return { amount: tokenAmount(account.data), decimals };
  }

  /** The epoch of `slot`. */
  epochAt(slot: bigint): bigint {
    return epochOf(slot, this.settings.slotsPerEpoch);
  }

  slotsPerEpoch(): number {
    return this.settings.slotsPerEpoch;
  }

  /** getEpochInfo: the epoch of the slot at `commitment` and where that slot is in it. */
  epochInfo(commitment: Commitment = 'processed'): EpochInfo {
    const slot = this.slot(commitment);
    const slotsInEpoch = BigInt(this.settings.slotsPerEpoch);
    return {
      epoch: slot / slotsInEpoch,
      slotIndex: slot % slotsInEpoch,
      slotsInEpoch,
      absoluteSlot: slot,
      blockHeight: this.blockHeight(commitment),
      transactionCount: BigInt(this.counters.transactions),
    };
  }

  /** Token accounts of `owner` at `commitment`: a scan of every account, as a node without an owner index does. */
  tokenAccountsByOwner(owner: string, commitment: Commitment = 'processed'): { address: string; account: AccountRecord }[] {
    return findTokenAccountsByOwner(this.db.addresses(), (address) => this.getAccount(address, commitment), owner);
  }

  /** Accounts owned by `programId` at `commitment`: a scan of every account, as a node without a program index does. */
  programAccounts(programId: string, commitment: Commitment = 'processed'): { address: string; account: AccountRecord }[] {
    const out: { address: string; account: AccountRecord }[] = [];
    for (const address of this.db.addresses()) {
      const account = this.getAccount(address, commitment);
      if (account !== null && account.owner === programId) out.push({ address, account });
    }
    return out;
  }

  latestBlockhash(commitment: Commitment = 'processed'): BlockhashInfo {
    const slot = this.slot(commitment);
    return { blockhash: this.blockhashes.hashAt(slot)!, lastValidBlockHeight: this.blockHeight(commitment) + BigInt(MAX_PROCESSING_AGE) };
  }

  isBlockhashValid(blockhash: string, commitment: Commitment = 'processed'): boolean {
    return this.blockhashes.isValid(blockhash, this.slot(commitment));
  }

  genesisHash(): string {
    return this.genesisHashText;
  }

  // ---- ChainBackend: transactions

  /**
   * Checks a transaction as a node's sendTransaction does and queues it for the next slot:
   * deserialize and sanitize (-32602), then unless skipPreflight: signatures (-32003) and a
   * simulation on the processed state (-32002 with the TransactionError: BlockhashNotFound,
   * AlreadyProcessed, InsufficientFundsForFee, an InstructionError, ...).
   */
  sendTransaction(bytes: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    const tx = this.parseOrThrow(bytes);
    const signature = base58.encodeAt(tx.bytes, tx.signaturesOffset, 64);
    const skipPreflight = options.skipPreflight === true;
    if (!skipPreflight) {
      this.verifyOrThrow(tx);
      let err: TransactionErrorValue | null;
      let simulation: SimulationResult = { err: null, logs: [], unitsConsumed: 0 };
      if (!this.isBlockhashValid(tx.recentBlockhash)) err = TxError.BlockhashNotFound;
      else if (this.statusCache.has(tx.signatureKey) || this.building?.statuses.has(tx.signatureKey) === true || this.isQueued(tx.signatureKey)) {
        err = TxError.AlreadyProcessed;
      }
      else {
        simulation = this.simulate(tx);
        err = simulation.err as TransactionErrorValue | null;
      }
      if (err !== null) {
        throw rpcError(RpcErrorCode.SendTransactionPreflightFailure, `Transaction simulation failed: ${transactionErrorText(err)}`, {
          accounts: null,
          err,
          innerInstructions: null,
          loadedAccountsDataSize: 0,
          logs: simulation.logs,
          replacementBlockhash: null,
          returnData: null,
          unitsConsumed: simulation.unitsConsumed,
        });
      }
    }
    this.submitted.push({ tx, verified: !skipPreflight });
    return signature;
  }

  /**
   * Runs a transaction on the processed state without keeping anything. `accounts`: addresses
   * whose state after the simulation the result carries (null for those the transaction does not
   * load, as a node answers).
   */
  simulateTransaction(bytes: Uint8Array, options: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: readonly string[] } = {}): SimulationResult {
    const tx = this.parseOrThrow(bytes);
    if (options.sigVerify === true) this.verifyOrThrow(tx);
    if (options.replaceRecentBlockhash !== true && !this.isBlockhashValid(tx.recentBlockhash)) {
      return { err: TxError.BlockhashNotFound, logs: [], unitsConsumed: 0 };
    }
    return this.simulate(tx, options.accounts);
  }

  private simulate(tx: SimTransaction, accounts?: readonly string[]): SimulationResult & { accounts?: (AccountRecord | null)[] } {
    const result = this.runtime.execute(tx, this.db, {
      blockTime: blockTimeOf(this.processed + 1n, this.settings.slotMs),
      slot: this.processed + 1n,
      epoch: this.epochAt(this.processed + 1n),
      collectLogs: true,
    });
    if (!result.landed) return { err: result.err, logs: [], unitsConsumed: 0 };
    const out: SimulationResult & { accounts?: (AccountRecord | null)[] } = { err: result.err, logs: result.logs, unitsConsumed: result.unitsConsumed };
    if (accounts !== undefined) {
      const loaded = new Set(result.keys);
      out.accounts = accounts.map((a) => (loaded.has(a) ? result.changes.get(a) : null));
    }
    return out;
  }

  /**
   * A landed transaction submitted to this chain, with its status meta, once its slot has reached
   * `commitment` (confirmed or finalized); undefined otherwise.
   */
  transaction(signature: string, commitment: Commitment = 'confirmed'): ConfirmedTransaction | undefined {
    const record = this.history.get(signature);
    if (record === undefined || record.slot > this.slot(commitment)) return undefined;
    return record;
  }

  /** getRecentPrioritizationFees: the last 150 slots' minimum prices (see prioritization-fees.ts). */
  recentPrioritizationFees(accounts: readonly string[] = []): { slot: bigint; prioritizationFee: bigint }[] {
    return this.prioritizationFees.recent(accounts);
  }

  /** requestAirdrop: a System Transfer from the faucet, sent without preflight (faucet.ts). */
  requestAirdrop(to: string, lamports: bigint, options: AirdropOptions = {}): string {
    return this.faucet.airdrop(to, lamports, options);
  }

  /** simRequestTokens: mint (or wrap) into the owner's associated token account (faucet.ts). */
  requestTokens(owner: string, token: string, amount: bigint, commitment?: Commitment): TokenGrant {
    return this.faucet.grantTokens(owner, token, amount, commitment);
  }

  private isQueued(key: string): boolean {
    for (const s of this.submitted) if (s.tx.signatureKey === key) return true;
    return pieceHolds(this.work, key);
  }

  private parseOrThrow(bytes: Uint8Array): SimTransaction {
    const tx = this.parser.parse(bytes);
    if (!isParseError(tx)) return tx;
    throw rpcError(RpcErrorCode.InvalidParams, tx.kind === 'deserialize' ? tx.message : `invalid transaction: ${tx.message}`);
  }

  private verifyOrThrow(tx: SimTransaction): void {
    if (!verifyTransactionSignatures(tx, (k) => staticKeyBytes(tx, k))) {
      throw rpcError(RpcErrorCode.TransactionSignatureVerificationFailure, 'Transaction signature verification failure');
    }
  }

  /**
   * The status of a landed transaction: from the status cache (the last 300 slots), or with
   * `searchTransactionHistory` also from the kept history of submitted transactions (a node's
   * ledger; transaction-history.ts), which outlives the cache.
   */
  signatureStatus(signature: string, options: SignatureStatusOptions = {}): SignatureStatus | null {
    let bytes: Uint8Array;
    try {
      bytes = base58.decode(signature);
    } catch {
      return null;
    }
    if (bytes.length !== 64) return null;
    const found = this.statusCache.get(signatureKeyOf(bytes));
    if (found !== undefined) return this.statusAt(found.slot, found.err);
    if (options.searchTransactionHistory !== true) return null;
    const record = this.history.get(signature);
    return record === undefined ? null : this.statusAt(record.slot, record.meta.err);
  }

  private statusAt(slot: bigint, err: unknown): SignatureStatus {
    if (slot <= this.slot('finalized') && this.processed >= BigInt(FINALIZATION_DEPTH)) {
      return { slot, confirmations: null, err, confirmationStatus: 'finalized' };
    }
    return {
      slot,
      confirmations: Number(this.processed - slot),
      err,
      confirmationStatus: slot <= this.slot('confirmed') && this.processed > slot ? 'confirmed' : 'processed',
    };
  }

  /**
   * Block engine: up to 5 transactions, checked (deserialize, sanitize, signatures) now, run in
   * order in the next slot, all or none. Returns the Jito bundle id (deriveBundleId).
   */
  sendBundle(txs: Uint8Array[]): string {
    if (txs.length === 0 || txs.length > 5) {
      throw rpcError(RpcErrorCode.InvalidParams, `bundle must contain 1 to 5 transactions, got ${txs.length}`);
    }
    const parsed: SimTransaction[] = [];
    for (let i = 0; i < txs.length; i++) {
      let tx: SimTransaction;
      try {
        tx = this.parseOrThrow(txs[i]!);
      } catch (err) {
        throw rpcError(RpcErrorCode.InvalidParams, `transaction ${i}: ${(err as Error).message}`);
      }
      if (!verifyTransactionSignatures(tx, (k) => staticKeyBytes(tx, k))) {
        throw rpcError(RpcErrorCode.InvalidParams, `transaction ${i}: signature verification failed`);
      }
      parsed.push(tx);
    }
    const id = deriveBundleId(txs);
    // The block engine dedups by bundle id: a copy of a bundle already queued or already run
    // (a client re-sending after a lost answer) is accepted under the same id and run once.
    if (this.bundles.has(id) || this.bundleQueue.some((b) => b.id === id) || pieceHoldsBundle(this.work, id)) return id;
    this.bundleQueue.push({ id, txs: parsed, signatures: parsed.map((tx) => base58.encodeAt(tx.bytes, tx.signaturesOffset, 64)) });
    return id;
  }

  bundleStatus(bundleId: string): BundleStatus | null {
    const record = this.bundles.get(bundleId);
    if (record === undefined) return null;
    const status = record.status;
    if (status.err !== null) return status;
    const commitment: Commitment =
      status.slot <= this.slot('finalized') && this.processed >= BigInt(FINALIZATION_DEPTH)
        ? 'finalized'
        : status.slot <= this.slot('confirmed') && this.processed > status.slot
          ? 'confirmed'
          : 'processed';
    return { ...status, confirmationStatus: commitment };
  }

  tipAccounts(): string[] {
    return [...JITO_TIP_ACCOUNTS];
  }

  // ---- ChainBackend: subscriptions

  onSlot(listener: SlotListener): () => void {
    return this.listeners.onSlot(listener);
  }

  onAccount(address: string, listener: AccountListener): () => void {
    return this.listeners.onAccount(address, listener);
  }

  onEntries(listener: EntriesListener): () => void {
    return this.listeners.onEntries(listener);
  }

  /**
   * Every account write: each landed transaction's changes as it is applied to the slot being built
   * (before that slot commits, as a validator's Geyser plugin hears them during replay), and each
   * direct write (createPool, closePool, extendLookupTable) into the newest committed slot.
   */
  onAccountWrites(listener: AccountWritesListener): () => void {
    return this.listeners.onAccountWrites(listener);
  }

  /** Tells the account-write listeners of one landed transaction's writes, as they join the slot being built. */
  private announceApplied(slot: bigint, changes: ReadonlyMap<string, AccountRecord | null>, signature: Uint8Array): void {
    if (this.listeners.writes.size === 0 || changes.size === 0) return;
    for (const listener of [...this.listeners.writes]) this.call(() => listener(changes, slot, signature));
  }

  /** Tells the address's account subscribers and the account-write listeners of a write outside a slot build. */
  private announceWrite(address: string, record: AccountRecord | null, slot: bigint): void {
    const listeners = this.listeners.account.get(address);
    if (listeners !== undefined) for (const listener of [...listeners]) this.call(() => listener(record, slot));
    if (this.listeners.writes.size > 0) {
      const writes = new Map([[address, record]]);
      for (const listener of [...this.listeners.writes]) this.call(() => listener(writes, slot, undefined));
    }
  }

  // ---- MarketView

  tokens(): readonly SimToken[] {
    return this.oracle.tokens();
  }

  token(mint: string): SimToken | undefined {
    const i = this.tokenIndex.get(mint);
    return i === undefined ? undefined : this.oracle.tokens()[i];
  }

  pools(): readonly SimPoolView[] {
    return this.market.all();
  }

  pool(address: string): SimPoolView | undefined {
    return this.market.view(address);
  }

  poolsForPair(mintX: string, mintY: string): readonly SimPoolView[] {
    return this.market.forPair(mintX, mintY);
  }

  // ---- for tools and tests

  /** What the chain knows of each pool (vaults, arrays, program id). */
  poolInfo(address: string): SimPoolInfo | undefined {
    return this.poolInfos.get(address);
  }

  stats(): SimChainStats {
    return { ...this.counters };
  }

  // ---- address lookup tables

  /** Addresses of the chain's lookup tables: the shared table (token program, mints) first, then the pool tables. */
  lookupTableAddresses(): string[] {
    return this.genesis.lookupTables.tables.map((t) => t.address);
  }

  /** The genesis table holding `pool`'s swap accounts. */
  lookupTableOf(pool: string): string | undefined {
    return this.genesis.lookupTables.tables.find((t) => t.pools.includes(pool))?.address;
  }

  /** A lookup table's current state (processed), or null when `address` is not a lookup table. */
  lookupTable(address: string, commitment: Commitment = 'processed'): LookupTableState | null {
    const account = this.getAccount(address, commitment);
    if (account === null || account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM_ID) return null;
    return readLookupTable(account.data);
  }

  /**
   * Appends `addresses` to lookup table `table` now, as its authority's ExtendLookupTable landing in
   * the newest slot would: the next reads (getAccountInfo, getMultipleAccounts, at processed) show
   * the longer table with last_extended_slot = that slot, and transactions may use the new indexes
   * from the next slot on. Account subscribers are told. Throws LookupTableExtendError.
   */
  extendLookupTable(table: string, addresses: readonly string[]): LookupTableExtension {
    const account = this.db.get(table);
    if (account === null) throw new LookupTableExtendError('missing', table, 'no such account');
    const state = account.owner === ADDRESS_LOOKUP_TABLE_PROGRAM_ID ? readLookupTable(account.data) : null;
    if (state === null) throw new LookupTableExtendError('invalid', table, 'not an address lookup table');
    const slot = this.processed;
    const next = extendLookupTableState(table, state, addresses, slot);
    const record = lookupTableRecord(next);
    this.db.amend(table, record);
    this.announceWrite(table, record, slot);
    return { table, slot, startIndex: state.addresses.length, length: next.addresses.length };
  }

  /** Appends `pool`'s swap accounts (pool, vaults, AmmConfig, tick or bin arrays) to `table`. */
  addPoolToLookupTable(pool: string, table: string): LookupTableExtension {
    const info = this.poolInfos.get(pool);
    if (info === undefined) throw new LookupTableExtendError('addresses', table, `${pool} is not a pool of the chain`);
    return this.extendLookupTable(table, poolSwapAccounts(info));
  }

  // ---- pools created and closed after genesis (the market admin, discovery tests)

  /**
   * Creates a pool of `dex` for two of the chain's tokens, as its program's initialize would leave
   * it: every account (pool, vaults, tick or bin arrays, configs) written into the newest slot with
   * the genesis builders, account subscribers told. The generated flow does not trade it; swaps
   * sent to it do. Throws TpError UnknownMint for a token the chain does not have, ArgumentInvalid for one token twice.
   */
  createPool(request: { dex: Dex; tokenA: string; tokenB: string; tvlUsd?: number }): SimPoolInfo {
    const base = this.token(request.tokenA);
    const quote = this.token(request.tokenB);
    if (base === undefined || quote === undefined) {
      const mint = base === undefined ? request.tokenA : request.tokenB;
      throw new TpError(ErrorCode.UnknownMint, `no token ${mint} on this chain`, { context: { mint } });
    }
    if (base.mint === quote.mint) throw invalidArgument('tokenB', request.tokenB, 'a pool needs two different tokens');
    const index = 10_000 + this.createdPools++;
    const plan: PoolPlan = { dex: request.dex, index, seed: this.settings.seed, base, quote, tvlUsd: request.tvlUsd ?? 500_000, priceSkew: 0, mainPair: false };
    const accounts = new Map<string, AccountRecord>();
    const info = buildPool(plan, SimRandom.derive(this.settings.seed, `created-pool:${index}`), accounts);
    const slot = this.processed;
    for (const [address, record] of accounts) {
      if (this.db.get(address) !== null && address !== info.address && !info.arrays.some((a) => a.address === address)) continue; // shared: an existing AmmConfig
      this.db.amend(address, record);
      this.announceWrite(address, record, slot);
    }
    this.poolInfos.set(info.address, info);
    this.market.add(info);
    return info;
  }

  /** Closes a pool: its account is deleted in the newest slot (its vaults and arrays stay). Returns false for an address that is no pool. */
  closePool(address: string): boolean {
    if (!this.poolInfos.has(address)) return false;
    this.db.amend(address, null);
    this.flow.closePool(address);
    this.poolInfos.delete(address);
    this.market.remove(address);
    this.announceWrite(address, null, this.processed);
    return true;
  }

  /**
   * Writes `record` (null: deletes) at `address` into the newest committed slot, as an account
   * change no swap made (tests: a tick or bin array that changes without its pool account, as an
   * out-of-range position's liquidity does). Account subscribers and the account stream are told;
   * the pools' views are read again.
   */
  amendAccount(address: string, record: AccountRecord | null): void {
    const slot = this.processed;
    this.db.amend(address, record);
    this.market.invalidate(blockTimeOf(slot + 1n, this.settings.slotMs), this.epochAt(slot + 1n));
    this.announceWrite(address, record, slot);
  }

  /**
   * Writes `record` (null: deletes) at `address` in the slot being built, as an account change no
   * swap made (tests: a tick or bin array that changes without its pool account, as an out-of-range
   * position's liquidity does). The account stream hears it at once (no signature); it commits, and
   * reads and account subscribers see it, with that slot.
   */
  writeAccount(address: string, record: AccountRecord | null): void {
    this.settleFinish();
    const b = (this.building ??= this.beginSlot());
    b.state.set(address, record);
    if (this.listeners.writes.size === 0) return;
    const writes = new Map([[address, record]]);
    for (const listener of [...this.listeners.writes]) this.call(() => listener(writes, b.slot, undefined));
  }

  /**
   * Makes the next piece of the slot being built (a manual chain: tests that look inside a slot);
   * true when it finished the slot.
   */
  advancePiece(): boolean {
    return this.makePiece();
  }

  /** Counts of generated transactions by kind. */
  flowCounts(): Readonly<TransactionFlow['counts']> {
    return { ...this.flow.counts };
  }
}
