import { MAX_COMPUTE_UNIT_LIMIT, TOKEN_PROGRAM_ID, associatedTokenAddress, buildFittedTransaction, createAssociatedTokenIdempotentInstruction, setComputeUnitLimitInstruction, setComputeUnitPriceInstruction, type FittedTransaction, type InstructionInput, type Keypair, type LookupTableInput } from '../chain/index.js';
import { ErrorCode, TpError, type ErrorContexts } from '../errors.js';
import { quoteSwap } from './quote.js';
import { swapInstructionFor, type SwapPool } from './swap-instruction.js';
import { Dex, SwapMode, type SwapQuote } from './types.js';

/**
 * A multi-hop (or arbitrage: back to the input mint) swap as one transaction: the hops quoted
 * with the engine's exact math, each hop's real swap instruction with its own slippage threshold,
 * the associated token accounts the route receives created idempotently, compute-budget
 * instructions in front, legacy or v0 as it fits (engine/chain fitted-transaction.ts).
 *
 * The DEX programs have no "use what the previous hop gave" amount, so every amount in the
 * transaction is fixed when it is built. Thresholds are therefore chained so that no hop can ask
 * for more of an intermediate token than the hop before it guarantees:
 *
 * - ExactIn: hop 0 sells `amount`; each hop's threshold (minimum out) is its quoted output less
 *   `slippageBps`, rounded down; hop k+1 sells exactly hop k's threshold, and is quoted on that
 *   amount. The route's minimum output is the last hop's threshold. When a hop does better than
 *   its minimum, the surplus of that intermediate token stays in the wallet (it shows in the
 *   transaction's token balance changes).
 * - ExactOut, built backwards: the last hop buys `amount`; each hop's threshold (maximum in) is its
 *   quoted input plus `slippageBps`, rounded up; hop k-1 buys exactly hop k's maximum input. The
 *   route's maximum input is hop 0's threshold; unspent intermediate tokens stay in the wallet.
 *
 * If the market moves against a hop by more than the slippage, that hop's program fails the
 * whole transaction (its own slippage error), so the wallet never ends below the route's minimum.
 */

/** Compute units each swap is budgeted at (above what the programs use on mainnet, typically). */
export const SWAP_COMPUTE_UNITS: Readonly<Record<Dex, number>> = Object.freeze({
  [Dex.Amm]: 60_000,
  [Dex.Clmm]: 180_000,
  [Dex.Whirlpool]: 150_000,
  [Dex.Dlmm]: 180_000,
});
/** Compute units of one CreateIdempotent (creating the account; ~5,000 when it exists). */
export const CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS = 30_000;
/** The two compute-budget instructions themselves. */
export const COMPUTE_BUDGET_UNITS = 300;
const BPS = 10_000n;
const U64_MAX = (1n << 64n) - 1n;

export interface SwapRouteRequest {
  /** Signs the swaps and owns the token accounts. */
  owner: string;
  /** Pays the rent of created token accounts. Default the owner. */
  payer?: string;
  /** The mint the first hop sells. */
  inputMint: string;
  /** The pools in order; each hop sells what the previous one bought. */
  hops: readonly SwapPool[];
  mode: SwapMode;
  /** ExactIn: what the first hop sells; ExactOut: what the last hop buys. Raw atoms. */
  amount: bigint;
  /** 0..10000. */
  slippageBps: number;
  /** The owner's token account per mint; default its associated token accounts. */
  tokenAccounts?: ReadonlyMap<string, string>;
  /** CreateIdempotent for each mint the route buys (default true; only for associated accounts). */
  createTokenAccounts?: boolean;
  /**
   * CreateIdempotent for the input mint's account too, first (default false): a flash-loaned input
   * arrives in it, so it must exist before the borrow even when the owner holds none.
   */
  createInputTokenAccount?: boolean;
}

export interface PlannedSwapHop {
  pool: string;
  dex: Dex;
  inputMint: string;
  outputMint: string;
  aToB: boolean;
  /** The instruction's amount (ExactIn: input; ExactOut: output). */
  amount: bigint;
  /** The instruction's threshold (ExactIn: minimum output; ExactOut: maximum input). */
  otherAmountThreshold: bigint;
  /** The engine's quote for `amount` on the pool's current state. */
  quote: SwapQuote;
}

export interface SwapRoutePlan {
  inputMint: string;
  outputMint: string;
  mode: SwapMode;
  /** ExactIn: the amount sold; ExactOut: what the first hop is quoted to take. */
  amountIn: bigint;
  /** ExactIn: what the last hop is quoted to give; ExactOut: the amount bought. */
  amountOut: bigint;
  /** ExactIn: the route's minimum output; ExactOut: its maximum input. */
  otherAmountThreshold: bigint;
  /**
   * What the route is expected to do with no slippage at all: ExactIn, the output when every hop
   * sells all the previous one is quoted to give; ExactOut, the input when every hop buys exactly
   * what the next one is quoted to take. `amountOut` / `amountIn` differ from it on routes of
   * several hops, whose later hops are quoted on the previous hop's threshold.
   */
  expectedAmount: bigint;
  hops: PlannedSwapHop[];
  /** CreateIdempotent instructions, one per mint bought (in hop order), the input's first when asked. */
  setupInstructions: InstructionInput[];
  /** The swap instructions, in hop order. */
  swapInstructions: InstructionInput[];
  /** Budget for the whole transaction (swaps, account creation, compute budget). */
  computeUnits: number;
}

function routeError(message: string, context?: ErrorContexts[typeof ErrorCode.RouteInvalid]): TpError<typeof ErrorCode.RouteInvalid> {
  return new TpError(ErrorCode.RouteInvalid, message, context === undefined ? {} : { context });
}

function lessSlippage(amount: bigint, bps: bigint): bigint {
  return (amount * (BPS - bps)) / BPS;
}

function plusSlippage(amount: bigint, bps: bigint): bigint {
  const v = (amount * (BPS + bps) + BPS - 1n) / BPS;
  return v > U64_MAX ? U64_MAX : v;
}

/** Quotes and builds the route. Throws TpError RouteInvalid (a hop refuses, mints do not chain, bad input). */
export function planSwapRoute(req: SwapRouteRequest): SwapRoutePlan {
  if (req.hops.length === 0) throw routeError('a route needs at least one hop');
  if (!Number.isInteger(req.slippageBps) || req.slippageBps < 0 || req.slippageBps > 10_000) {
    throw routeError(`slippageBps must be an integer in 0..10000, got ${req.slippageBps}`);
  }
  if (req.amount <= 0n || req.amount > U64_MAX) throw routeError(`amount must be a positive u64, got ${req.amount}`);
  const bps = BigInt(req.slippageBps);

  // Directions and mints along the route.
  const legs: { pool: SwapPool; aToB: boolean; inputMint: string; outputMint: string }[] = [];
  let mint = req.inputMint;
  for (const [i, hop] of req.hops.entries()) {
    const pool = hop.state.pool;
    if (pool.address === undefined) throw routeError(`hop ${i}: the pool has no address`);
    let aToB: boolean;
    if (mint === pool.tokenA) aToB = true;
    else if (mint === pool.tokenB) aToB = false;
    else throw routeError(`hop ${i}: pool ${pool.address} does not trade ${mint}`, { hop: i, pool: pool.address, mint });
    const outputMint = aToB ? pool.tokenB : pool.tokenA;
    legs.push({ pool: hop, aToB, inputMint: mint, outputMint });
    mint = outputMint;
  }

  // Quotes and thresholds, forwards for ExactIn, backwards for ExactOut.
  const planned = new Array<PlannedSwapHop>(legs.length);
  const quoteHop = (i: number, amount: bigint): SwapQuote => {
    const leg = legs[i]!;
    const result = quoteSwap(leg.pool.state.pool, { aToB: leg.aToB, mode: req.mode, amount }, leg.pool.state.context);
    if (!result.ok) {
      throw routeError(`hop ${i} (${leg.pool.state.pool.address}): ${result.message}`, { hop: i, pool: leg.pool.state.pool.address, reason: result.reason });
    }
    return result;
  };
  const record = (i: number, amount: bigint, threshold: bigint, quote: SwapQuote): void => {
    const leg = legs[i]!;
    const pool = leg.pool.state.pool;
    planned[i] = { pool: pool.address!, dex: pool.dex, inputMint: leg.inputMint, outputMint: leg.outputMint, aToB: leg.aToB, amount, otherAmountThreshold: threshold, quote };
  };
  let expectedAmount = req.amount;
  if (req.mode === SwapMode.ExactIn) {
    let amount = req.amount;
    for (let i = 0; i < legs.length; i++) {
      const quote = quoteHop(i, amount);
      const minimum = lessSlippage(quote.amountOut, bps);
      if (minimum === 0n) throw routeError(`hop ${i}: its minimum output rounds to 0`, { hop: i });
      record(i, amount, minimum, quote);
      amount = minimum;
      expectedAmount = i === 0 ? quote.amountOut : quoteHop(i, expectedAmount).amountOut;
    }
  } else {
    let amount = req.amount;
    for (let i = legs.length - 1; i >= 0; i--) {
      const quote = quoteHop(i, amount);
      const maximum = plusSlippage(quote.amountIn, bps);
      record(i, amount, maximum, quote);
      amount = maximum;
      expectedAmount = i === legs.length - 1 ? quote.amountIn : quoteHop(i, expectedAmount).amountIn;
    }
  }

  // Token accounts: given, else associated (created idempotently for what the route buys).
  const programOf = (m: string): string => {
    for (const leg of legs) {
      const pool = leg.pool.state.pool;
      if (pool.tokenA === m) return leg.pool.tokenProgramA ?? TOKEN_PROGRAM_ID;
      if (pool.tokenB === m) return leg.pool.tokenProgramB ?? TOKEN_PROGRAM_ID;
    }
    return TOKEN_PROGRAM_ID;
  };
  const accountOf = (m: string): string => req.tokenAccounts?.get(m) ?? associatedTokenAddress(req.owner, m, programOf(m));
  const setupInstructions: InstructionInput[] = [];
  if (req.createTokenAccounts !== false) {
    const created = new Set<string>([req.inputMint]);
    if (req.createInputTokenAccount === true && req.tokenAccounts?.has(req.inputMint) !== true) {
      setupInstructions.push(createAssociatedTokenIdempotentInstruction({ payer: req.payer ?? req.owner, owner: req.owner, mint: req.inputMint, tokenProgram: programOf(req.inputMint) }));
    }
    for (const leg of legs) {
      if (created.has(leg.outputMint) || req.tokenAccounts?.has(leg.outputMint) === true) continue;
      created.add(leg.outputMint);
      setupInstructions.push(
        createAssociatedTokenIdempotentInstruction({ payer: req.payer ?? req.owner, owner: req.owner, mint: leg.outputMint, tokenProgram: programOf(leg.outputMint) }),
      );
    }
  }

  const swapInstructions = legs.map((leg, i) => {
    const pool = leg.pool.state.pool;
    const hop = planned[i]!;
    return swapInstructionFor({
      pool: leg.pool,
      aToB: leg.aToB,
      mode: req.mode,
      amount: hop.amount,
      otherAmountThreshold: hop.otherAmountThreshold,
      owner: req.owner,
      tokenAccountA: accountOf(pool.tokenA),
      tokenAccountB: accountOf(pool.tokenB),
    });
  });

  let computeUnits = COMPUTE_BUDGET_UNITS + setupInstructions.length * CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS;
  for (const hop of planned) computeUnits += SWAP_COMPUTE_UNITS[hop.dex];
  const first = planned[0]!;
  const last = planned[planned.length - 1]!;
  const exactIn = req.mode === SwapMode.ExactIn;
  return {
    inputMint: req.inputMint,
    outputMint: last.outputMint,
    mode: req.mode,
    amountIn: exactIn ? req.amount : first.quote.amountIn,
    amountOut: exactIn ? last.quote.amountOut : req.amount,
    otherAmountThreshold: exactIn ? last.otherAmountThreshold : first.otherAmountThreshold,
    expectedAmount,
    hops: planned,
    setupInstructions,
    swapInstructions,
    computeUnits: Math.min(computeUnits, MAX_COMPUTE_UNIT_LIMIT),
  };
}

export interface SwapRouteTransactionOptions {
  /** Fee payer and signer (the route's owner unless `signers` holds the owner). */
  payer: Keypair;
  signers?: readonly Keypair[];
  recentBlockhash: string | Uint8Array;
  /** Micro-lamports per compute unit (SetComputeUnitPrice); none when 0 or absent. */
  computeUnitPrice?: bigint;
  /** SetComputeUnitLimit; default the plan's budget. */
  computeUnitLimit?: number;
  /** Tables for the v0 form (used only when the legacy form does not fit). */
  lookupTables?: readonly LookupTableInput[];
  /** Extra instructions after the swaps (a tip transfer, a memo). */
  after?: readonly InstructionInput[];
  /**
   * A loan around the swaps (a flash loan): `borrow` right before the first swap (after the token
   * accounts are created, so the lent tokens have somewhere to go), `repay(borrowIndex)` right after
   * the last, given the borrow's position among the instructions.
   */
  loan?: { borrow: InstructionInput; repay: (borrowIndex: number) => InstructionInput };
  version?: 'auto' | 'legacy' | 0;
}

/**
 * The signed transaction of a plan: SetComputeUnitLimit, SetComputeUnitPrice (when > 0), the
 * CreateIdempotent instructions, the loan's borrow, the swaps, its repay, `after`; legacy when it
 * fits, else v0 with the tables.
 */
export function buildSwapRouteTransaction(plan: SwapRoutePlan, options: SwapRouteTransactionOptions): FittedTransaction {
  const instructions: InstructionInput[] = [setComputeUnitLimitInstruction(options.computeUnitLimit ?? plan.computeUnits)];
  if (options.computeUnitPrice !== undefined && options.computeUnitPrice > 0n) instructions.push(setComputeUnitPriceInstruction(options.computeUnitPrice));
  instructions.push(...plan.setupInstructions);
  const borrowIndex = instructions.length;
  if (options.loan !== undefined) instructions.push(options.loan.borrow);
  instructions.push(...plan.swapInstructions);
  if (options.loan !== undefined) instructions.push(options.loan.repay(borrowIndex));
  instructions.push(...(options.after ?? []));
  return buildFittedTransaction({
    payer: options.payer,
    instructions,
    recentBlockhash: options.recentBlockhash,
    ...(options.signers !== undefined ? { signers: options.signers } : {}),
    ...(options.lookupTables !== undefined ? { lookupTables: options.lookupTables } : {}),
    ...(options.version !== undefined ? { version: options.version } : {}),
  });
}
