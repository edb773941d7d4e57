/**
 * A ready-to-sign swap from a quote a client got from `GET /swap/v1/quote` (Jupiter Swap API v1
 * `POST /swap`, `POST /swap-instructions`), built from the route the quote names, on the pools'
 * state read again now:
 *
 *   quote ─▶ age check (its contextSlot against the node's slot) ─▶ the route's pools read over RPC
 *         ─▶ every hop re-quoted with the exact math (dex planSwapRoute: each hop's threshold from
 *            the quote's slippage) ─▶ still within the quote's threshold? ─▶ instructions:
 *
 *   compute budget  SetComputeUnitLimit, SetComputeUnitPrice (the priority fee)
 *   setup           wSOL in: CreateIdempotent + System Transfer + SyncNative (wrapAndUnwrapSol);
 *                   CreateIdempotent of each token account the route receives that is missing
 *   swap            one instruction per hop, each with its own slippage threshold
 *   cleanup         CloseAccount of the wSOL account when SOL goes in or out (unwraps it)
 *   other           a Jito tip transfer (prioritizationFeeLamports.jitoTipLamports)
 *
 * then an unsigned transaction (v0 by default, legacy on request; the operator's lookup tables
 * when the route does not fit without them).
 *
 * Refusals, in the swap API's error shape (engine/swap-api): a quote older than `maxQuoteAgeSlots`
 * (QUOTE_EXPIRED, naming its age), a route the current state no longer carries within the quote's
 * threshold (SLIPPAGE_TOLERANCE_EXCEEDED, naming both amounts), a pool that is not what the quote
 * says (INVALID_REQUEST), a hop the math refuses now (COULD_NOT_FIND_ANY_ROUTE), a pool that cannot
 * be read (503 POOL_UNAVAILABLE), a route too large for one transaction (INVALID_REQUEST).
 */
import {
  JITO_TIP_ACCOUNTS,
  base58,
  MAX_COMPUTE_UNIT_LIMIT,
  TOKEN_PROGRAM_ID,
  WSOL_MINT,
  associatedTokenAddress,
  buildFittedTransaction,
  closeAccountInstruction,
  createAssociatedTokenIdempotentInstruction,
  setComputeUnitLimitInstruction,
  setComputeUnitPriceInstruction,
  syncNativeInstruction,
  systemTransferInstruction,
  type FittedTransaction,
  type InstructionInput,
  type LookupTableInput,
} from '../chain/index.js';
import { CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS, SwapMode, planSwapRoute, type DecoderRegistry, type SwapPool, type SwapRoutePlan } from '../dex/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import { swapPoolOfLoaded, type LoadedPool, type PoolLoader } from '../pools/index.js';
import type { AccountReader, ChainClient } from '../rpc/index.js';
import {
  AUTO_PRIORITY_MAX_LAMPORTS,
  PriorityLevel,
  quoteApiError,
  type QuoteApiError,
  QuoteErrorCode,
  instructionToJson,
  type PrioritizationFee,
  type SwapInstructionsResponse,
  type SwapRequest,
  type SwapResponse,
} from '../swap-api/index.js';

/** A quote older than this many slots (about a minute: a blockhash's lifetime) is refused. */
export const DEFAULT_MAX_QUOTE_AGE_SLOTS = 150;
/** Slot length the age in seconds is given with (the cluster's target). */
const SLOT_MS = 400;
/** Units of the wrap (System Transfer, SyncNative) and the unwrap (CloseAccount). */
const WRAP_COMPUTE_UNITS = 150 + 3_000;
const UNWRAP_COMPUTE_UNITS = 3_000;
/** Margin over a simulation's units (dynamicComputeUnitLimit). */
const SIMULATION_MARGIN = 1.1;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const PERCENTILE: Readonly<Record<PriorityLevel, number>> = { medium: 50, high: 75, veryHigh: 95 };

export interface SwapBuilderOptions {
  /** Reads the route's pools (with their mints: the token programs). */
  loader: PoolLoader;
  registry: DecoderRegistry;
  /** Whether the user's token accounts exist. */
  accounts: Pick<AccountReader, 'fetch'>;
  chain: Pick<ChainClient, 'getSlot' | 'getLatestBlockhash' | 'getRecentPrioritizationFees' | 'simulateTransaction'>;
  /** The operator's address lookup tables (engine/rpc OperatorLookupTables); none by default. */
  lookupTables?: { current(): Promise<LookupTableInput[]> };
  maxQuoteAgeSlots?: number;
  /** Jito tip accounts; the mainnet eight by default. */
  tipAccounts?: readonly string[];
  /** For the tip account's choice. */
  random?: () => number;
}

/** The parts of a swap, before they are put in a transaction or written out. */
export interface BuiltSwap {
  computeBudget: InstructionInput[];
  setup: InstructionInput[];
  swaps: InstructionInput[];
  cleanup: InstructionInput | undefined;
  other: InstructionInput[];
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  prioritizationFeeLamports: bigint;
  lookupTables: LookupTableInput[];
  simulationError?: string;
  plan: SwapRoutePlan;
}

function invalid(message: string): QuoteApiError {
  return quoteApiError(QuoteErrorCode.InvalidRequest, message);
}

/** The `p`th percentile (nearest rank) of `values`; 0 for none. */
function percentile(values: readonly bigint[], p: number): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export class SwapBuilder {
  private readonly maxAge: bigint;
  private readonly tipAccounts: readonly string[];
  private readonly random: () => number;

  constructor(private readonly options: SwapBuilderOptions) {
    this.maxAge = BigInt(options.maxQuoteAgeSlots ?? DEFAULT_MAX_QUOTE_AGE_SLOTS);
    this.tipAccounts = options.tipAccounts ?? JITO_TIP_ACCOUNTS;
    this.random = options.random ?? Math.random;
  }

  /** `POST /swap`: the unsigned transaction. */
  async transaction(req: SwapRequest): Promise<SwapResponse> {
    const built = await this.build(req);
    const { blockhash, lastValidBlockHeight } = await this.options.chain.getLatestBlockhash();
    const tx = this.compile(req, built, blockhash);
    return {
      swapTransaction: Buffer.from(tx.bytes).toString('base64'),
      lastValidBlockHeight: Number(lastValidBlockHeight),
      prioritizationFeeLamports: Number(built.prioritizationFeeLamports),
      otherAmountThreshold: built.plan.otherAmountThreshold.toString(),
      computeUnitLimit: built.computeUnitLimit,
      ...(built.simulationError === undefined ? {} : { simulationError: built.simulationError }),
    };
  }

  /** `POST /swap-instructions`: the instructions (a route of several hops: see engine/swap-api swap-response.ts). */
  async instructions(req: SwapRequest): Promise<SwapInstructionsResponse> {
    const built = await this.build(req);
    // The tables a v0 transaction of these instructions loads through (compiled once to know).
    const compiled = built.lookupTables.length === 0 ? undefined : this.compile({ ...req, asLegacyTransaction: false }, built, '11111111111111111111111111111111');
    const tables = compiled === undefined ? [] : compiled.message.addressTableLookups.map((l) => base58.encode(l.accountKey));
    const swaps = built.swaps.map(instructionToJson);
    return {
      otherInstructions: built.other.map(instructionToJson),
      computeBudgetInstructions: built.computeBudget.map(instructionToJson),
      setupInstructions: [...built.setup.map(instructionToJson), ...swaps.slice(0, -1)],
      swapInstruction: swaps[swaps.length - 1]!,
      ...(built.cleanup === undefined ? {} : { cleanupInstruction: instructionToJson(built.cleanup) }),
      addressLookupTableAddresses: tables,
      swapInstructions: swaps,
      otherAmountThreshold: built.plan.otherAmountThreshold.toString(),
      computeUnitLimit: built.computeUnitLimit,
      prioritizationFeeLamports: Number(built.prioritizationFeeLamports),
      ...(built.simulationError === undefined ? {} : { simulationError: built.simulationError }),
    };
  }

  /** Checks the quote against the current state and makes every instruction of the swap. */
  async build(req: SwapRequest): Promise<BuiltSwap> {
    const { quote } = req;
    const slot = await this.options.chain.getSlot();
    const age = slot > quote.contextSlot ? slot - quote.contextSlot : 0n;
    if (age > this.maxAge) {
      const seconds = (Number(age) * SLOT_MS) / 1000;
      throw quoteApiError(
        QuoteErrorCode.QuoteExpired,
        `the quote is ${age} slots old (about ${seconds.toFixed(1)} s: contextSlot ${quote.contextSlot}, now ${slot}); quotes older than ${this.maxAge} slots are not built: ask /swap/v1/quote again`,
      );
    }
    const loaded = await this.loadRoute(req);
    const pools = loaded.map((l) => swapPoolOfLoaded(l, this.options.registry));
    const programs = tokenProgramsOf(pools);
    const user = req.userPublicKey;
    const exactIn = quote.swapMode === SwapMode.ExactIn;
    const tokenAccounts = new Map<string, string>();
    if (req.destinationTokenAccount !== undefined) tokenAccounts.set(quote.outputMint, req.destinationTokenAccount);
    let plan: SwapRoutePlan;
    try {
      plan = planSwapRoute({
        owner: user,
        payer: req.payer,
        inputMint: quote.inputMint,
        hops: pools,
        mode: quote.swapMode,
        amount: exactIn ? quote.inAmount : quote.outAmount,
        slippageBps: quote.slippageBps,
        tokenAccounts,
        createTokenAccounts: false,
      });
    } catch (err) {
      if (isTpError(err, ErrorCode.RouteInvalid)) throw quoteApiError(QuoteErrorCode.CouldNotFindAnyRoute, `the route cannot be traded on the current state: ${err.message}`);
      throw err;
    }
    const newest = loaded.reduce((s, l) => (l.slot > s ? l.slot : s), 0n);
    if (exactIn && plan.expectedAmount < quote.otherAmountThreshold) {
      throw quoteApiError(
        QuoteErrorCode.SlippageToleranceExceeded,
        `on the state of slot ${newest} the route gives ${plan.expectedAmount} of ${quote.outputMint}, below the quote's minimum ${quote.otherAmountThreshold} (slippageBps ${quote.slippageBps}): ask /swap/v1/quote again`,
      );
    }
    if (!exactIn && plan.expectedAmount > quote.otherAmountThreshold) {
      throw quoteApiError(
        QuoteErrorCode.SlippageToleranceExceeded,
        `on the state of slot ${newest} the route needs ${plan.expectedAmount} of ${quote.inputMint}, above the quote's maximum ${quote.otherAmountThreshold} (slippageBps ${quote.slippageBps}): ask /swap/v1/quote again`,
      );
    }

    // Token accounts: the input's must exist unless SOL is wrapped into it; each one the route
    // receives is created when missing.
    const wsol = associatedTokenAddress(user, WSOL_MINT);
    const wrapIn = req.wrapAndUnwrapSol && quote.inputMint === WSOL_MINT;
    const unwrapOut = req.wrapAndUnwrapSol && quote.outputMint === WSOL_MINT && req.destinationTokenAccount === undefined;
    const setup: InstructionInput[] = [];
    const accountOf = (mint: string): string => tokenAccounts.get(mint) ?? associatedTokenAddress(user, mint, programs.get(mint) ?? TOKEN_PROGRAM_ID);
    const bought = [...new Set(plan.hops.map((h) => h.outputMint))].filter((m) => !tokenAccounts.has(m));
    const exists = await this.existing(req, [accountOf(quote.inputMint), ...bought.map(accountOf)]);
    if (wrapIn) {
      const wrapped = exactIn ? quote.inAmount : plan.otherAmountThreshold;
      setup.push(createAssociatedTokenIdempotentInstruction({ payer: req.payer, owner: user, mint: WSOL_MINT }), systemTransferInstruction(user, wsol, wrapped), syncNativeInstruction(wsol));
    } else if (exists !== undefined && !exists.has(accountOf(quote.inputMint))) {
      throw invalid(`userPublicKey ${user} has no token account of the input mint ${quote.inputMint} (${accountOf(quote.inputMint)})`);
    }
    let creates = 0;
    for (const mint of bought) {
      if (mint === WSOL_MINT && wrapIn) continue; // created by the wrap
      if (exists !== undefined && exists.has(accountOf(mint))) continue;
      setup.push(createAssociatedTokenIdempotentInstruction({ payer: req.payer, owner: user, mint, tokenProgram: programs.get(mint) ?? TOKEN_PROGRAM_ID }));
      creates++;
    }
    const cleanup = wrapIn || unwrapOut ? closeAccountInstruction(wsol, user, user) : undefined;

    let computeUnitLimit = Math.min(
      MAX_COMPUTE_UNIT_LIMIT,
      plan.computeUnits + creates * CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS + (wrapIn ? WRAP_COMPUTE_UNITS + CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS : 0) + (cleanup === undefined ? 0 : UNWRAP_COMPUTE_UNITS),
    );
    const lookupTables = (await this.options.lookupTables?.current()) ?? [];
    const other: InstructionInput[] = [];
    const fee = req.prioritizationFee;
    if (fee.kind === 'jitoTip') {
      const tip = this.tipAccounts[Math.floor(this.random() * this.tipAccounts.length) % this.tipAccounts.length]!;
      other.push(systemTransferInstruction(req.payer, tip, fee.lamports));
    }
    const built: BuiltSwap = { computeBudget: [], setup, swaps: plan.swapInstructions, cleanup, other, computeUnitLimit, computeUnitPrice: 0n, prioritizationFeeLamports: 0n, lookupTables, plan };
    if (req.dynamicComputeUnitLimit) {
      const simulated = await this.simulatedUnits(req, built);
      if (typeof simulated === 'number') computeUnitLimit = Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.ceil(simulated * SIMULATION_MARGIN));
      else built.simulationError = simulated.error;
    }
    const price = req.computeUnitPriceMicroLamports ?? (await this.priceOf(fee, computeUnitLimit, plan));
    built.computeUnitLimit = computeUnitLimit;
    built.computeUnitPrice = price;
    built.prioritizationFeeLamports = (price * BigInt(computeUnitLimit) + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
    built.computeBudget = [setComputeUnitLimitInstruction(computeUnitLimit), ...(price > 0n ? [setComputeUnitPriceInstruction(price)] : [])];
    return built;
  }

  /** The route's pools read now, each checked to trade the hop the quote says it does. */
  private async loadRoute(req: SwapRequest): Promise<LoadedPool[]> {
    const hops = req.quote.hops;
    const results = await this.options.loader.load(hops.map((h) => h.pool));
    return results.map((r, i) => {
      const hop = hops[i]!;
      if (!r.ok) {
        if (r.error.reason === 'missing' || r.error.reason === 'unknown_owner' || r.error.reason === 'decode') {
          throw invalid(`quoteResponse.routePlan[${i}].swapInfo.ammKey ${hop.pool} is not a pool tidepool can trade (${r.error.reason}: ${r.error.message})`);
        }
        throw quoteApiError(QuoteErrorCode.PoolUnavailable, `pool ${hop.pool} could not be read: ${r.error.message}`, 503);
      }
      const { tokenA, tokenB } = r.value.pool;
      const trades = (hop.inputMint === tokenA && hop.outputMint === tokenB) || (hop.inputMint === tokenB && hop.outputMint === tokenA);
      if (!trades) throw invalid(`quoteResponse.routePlan[${i}]: pool ${hop.pool} trades ${tokenA} / ${tokenB}, not ${hop.inputMint} → ${hop.outputMint}`);
      return r.value;
    });
  }

  /** The accounts among `addresses` that exist; undefined when the request skips account reads. */
  private async existing(req: SwapRequest, addresses: readonly string[]): Promise<Set<string> | undefined> {
    if (req.skipUserAccountsRpcCalls) return undefined;
    const unique = [...new Set(addresses)];
    const found = await Promise.all(unique.map((a) => this.options.accounts.fetch(a, { fresh: true })));
    return new Set(unique.filter((_, i) => found[i] !== null));
  }

  /** The units a simulation of the swap used, or why it failed. */
  private async simulatedUnits(req: SwapRequest, built: BuiltSwap): Promise<number | { error: string }> {
    const probe: BuiltSwap = { ...built, computeBudget: [setComputeUnitLimitInstruction(MAX_COMPUTE_UNIT_LIMIT)] };
    const { blockhash } = await this.options.chain.getLatestBlockhash();
    const tx = this.compile(req, probe, blockhash);
    const outcome = await this.options.chain.simulateTransaction(tx.bytes, { replaceRecentBlockhash: true });
    if (outcome.err !== null) return { error: `simulation failed: ${JSON.stringify(outcome.err)}; the route's budget is used` };
    return outcome.unitsConsumed;
  }

  /** The compute unit price of the request's prioritization, in micro-lamports. */
  private async priceOf(fee: PrioritizationFee, limit: number, plan: SwapRoutePlan): Promise<bigint> {
    if (fee.kind === 'jitoTip') return 0n;
    if (fee.kind === 'lamports') return (fee.lamports * MICRO_LAMPORTS_PER_LAMPORT) / BigInt(limit);
    const level = fee.kind === 'level' ? fee.level : PriorityLevel.Medium;
    const cap = fee.kind === 'level' ? fee.maxLamports : AUTO_PRIORITY_MAX_LAMPORTS;
    const writable = [...new Set(plan.hops.map((h) => h.pool))];
    const fees = await this.options.chain.getRecentPrioritizationFees(writable);
    const price = percentile(
      fees.map((f) => f.prioritizationFee),
      PERCENTILE[level],
    );
    const capped = (cap * MICRO_LAMPORTS_PER_LAMPORT) / BigInt(limit);
    return price < capped ? price : capped;
  }

  /** The unsigned transaction of `built` (v0 unless asked for legacy; the tables when needed). */
  private compile(req: SwapRequest, built: BuiltSwap, blockhash: string): FittedTransaction {
    const instructions = [...built.computeBudget, ...built.setup, ...built.swaps, ...(built.cleanup === undefined ? [] : [built.cleanup]), ...built.other];
    try {
      return buildFittedTransaction({
        payer: req.payer,
        instructions,
        recentBlockhash: blockhash,
        version: req.asLegacyTransaction ? 'legacy' : 0,
        ...(req.asLegacyTransaction || built.lookupTables.length === 0 ? {} : { lookupTables: built.lookupTables }),
        unsigned: true,
      });
    } catch (err) {
      if (isTpError(err, ErrorCode.TransactionTooLarge)) {
        throw invalid(`the route does not fit in one transaction (${err.message}); ask for a quote with onlyDirectRoutes=true${req.asLegacyTransaction ? ', or a versioned transaction' : ', or configure address lookup tables (swap.lookupTables)'}`);
      }
      throw err;
    }
  }
}

/** The token program of each mint the route's pools name (SPL Token when the loader did not read the mint). */
function tokenProgramsOf(pools: readonly SwapPool[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of pools) {
    const { tokenA, tokenB } = p.state.pool;
    if (!out.has(tokenA) || p.tokenProgramA !== undefined) out.set(tokenA, p.tokenProgramA ?? TOKEN_PROGRAM_ID);
    if (!out.has(tokenB) || p.tokenProgramB !== undefined) out.set(tokenB, p.tokenProgramB ?? TOKEN_PROGRAM_ID);
  }
  return out;
}
