/**
 * The paper fill: what the real path would do with an opportunity, without sending anything. The
 * route is re-quoted on the given (live) pool states with the engine's exact math
 * (`route-requote.ts`), then the wallet pays what the real path would:
 *
 *   transaction fees = 5,000 lamports × the signatures the wallet pays for
 *                      + the priority fee ⌈computeUnitPrice × computeUnitLimit / 10⁶⌉
 *   tip              = the bundle's tip (0 on the direct path)
 *
 * The signatures: 1 on the direct path (the swap transaction); on the bundle path the swap
 * transaction and the tip transfer the bundle carries beside it (`BUNDLE_SIGNATURES`).
 *
 * The balance changes are those the real transaction would show (`BalanceChanges`): the input mint
 * down by the input (plus the lender's fee with a flash loan: the loan is repaid with its fee), the
 * output mint up by the output (a cycle nets the two), lamports down by the fees and tip; the actual profit is read from them exactly as for a landed trade
 * (`trade-profit.ts`). Token accounts are assumed to exist (a real first trade may also pay rent
 * for a new associated token account).
 */
import { MAX_COMPUTE_UNIT_LIMIT } from '../chain/index.js';
import { COMPUTE_BUDGET_UNITS, CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS, SWAP_COMPUTE_UNITS } from '../dex/index.js';
import { LAMPORTS_PER_SIGNATURE, quotedTransactionFees, type RouteHop, type TradeOpportunity, ExecutionPath } from '../messages/index.js';
import { FLASH_LOAN_COMPUTE_UNITS } from './flash-loans.js';
import { selectExecutionPath, tipFor } from './path-selection.js';
import { requoteRoute, type RouteRequoteRefused, type RouteStateSource } from './route-requote.js';
import { type BalanceChanges } from './submission.js';
import { actualProfitOf } from './trade-profit.js';

/** Signatures a bundle costs the wallet: its swap transaction and its tip transfer. */
export const BUNDLE_SIGNATURES = 2;

export interface RealPathCosts {
  /** Default: spec 03's selection (`selectExecutionPath`). */
  path?: ExecutionPath;
  /** The swap transaction's compute unit limit (the priority fee is charged on it); default `routeComputeUnits`. */
  computeUnitLimit?: number;
  /** Micro-lamports per compute unit; default 0. */
  computeUnitPriceMicroLamports?: bigint;
  /** Bundle tip; default the opportunity's (`tipFor`). Ignored on the direct path. */
  tip?: bigint;
}

export interface PaperFill {
  ok: true;
  status: 'paper';
  path: ExecutionPath;
  /** The route as re-quoted. */
  hops: RouteHop[];
  input: bigint;
  output: bigint;
  /** Transaction fees, lamports. */
  fees: bigint;
  /** Tip, lamports. */
  tip: bigint;
  /** Profit by the opportunity's own cost rules on the re-quoted output. */
  expectedProfit: bigint;
  /** The profit mint's balance change the real path would show (`actualProfitOf`). */
  actualProfit: bigint;
  balanceChanges: BalanceChanges;
  /** Whether the re-quoted output still meets the opportunity's minimumOutput. */
  meetsMinimum: boolean;
  /** The oldest slot of the states used. */
  slot: bigint;
}

/**
 * The compute unit limit the executor's swap transaction asks for (`planSwapRoute`'s budget): the
 * compute-budget instructions, one CreateIdempotent per mint the route buys other than its input
 * mint (and the input's with a flash loan, with the borrow and repay), and each hop's swap units.
 */
export function routeComputeUnits(route: readonly Pick<RouteHop, 'dex' | 'outputMint'>[], inputMint: string, flashLoan = false): number {
  const bought = new Set(route.map((h) => h.outputMint));
  // A flash loan creates the input's account too (the loan is lent to it), and borrows and repays.
  if (!flashLoan) bought.delete(inputMint);
  else bought.add(inputMint);
  let units = COMPUTE_BUDGET_UNITS + bought.size * CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS + (flashLoan ? FLASH_LOAN_COMPUTE_UNITS : 0);
  for (const h of route) units += SWAP_COMPUTE_UNITS[h.dex];
  return Math.min(units, MAX_COMPUTE_UNIT_LIMIT);
}

/** The fees the wallet pays on `path`: signatures plus the priority fee. */
export function realPathFees(path: ExecutionPath, computeUnitLimit: number, computeUnitPriceMicroLamports = 0n): bigint {
  const signatures = path === ExecutionPath.Bundle ? BUNDLE_SIGNATURES : 1;
  return quotedTransactionFees(1, computeUnitLimit, computeUnitPriceMicroLamports) + LAMPORTS_PER_SIGNATURE * BigInt(signatures - 1);
}

/**
 * The balance changes of a paper fill of `op` that sold `input` and bought `output` (see the module
 * comment): also how a paper trade's fill is read back from its route rows after a redelivery.
 */
export function paperBalanceChanges(op: Pick<TradeOpportunity, 'inputMint' | 'outputMint' | 'flashLoan' | 'costs'>, input: bigint, output: bigint, fees: bigint, tip: bigint): BalanceChanges {
  const tokens = new Map<string, bigint>();
  tokens.set(op.inputMint, -(input + (op.flashLoan ? op.costs.flashLoanFee : 0n)));
  tokens.set(op.outputMint, (tokens.get(op.outputMint) ?? 0n) + output);
  return { lamports: -(fees + tip), tokens, fee: fees, tip };
}

/** Fills `op` on paper against `source`, or the re-quote's refusal. */
export function paperFill(op: TradeOpportunity, source: RouteStateSource, costs: RealPathCosts): PaperFill | RouteRequoteRefused {
  const requote = requoteRoute(op, source);
  if (!requote.ok) return requote;
  const path = costs.path ?? selectExecutionPath(op);
  const tip = path === ExecutionPath.Direct ? 0n : (costs.tip ?? tipFor(op, path));
  const fees = realPathFees(path, costs.computeUnitLimit ?? routeComputeUnits(op.route, op.inputMint, op.flashLoan), costs.computeUnitPriceMicroLamports ?? 0n);
  const balanceChanges = paperBalanceChanges(op, requote.input, requote.output, fees, tip);
  return {
    ok: true,
    status: 'paper',
    path,
    hops: requote.hops,
    input: requote.input,
    output: requote.output,
    fees,
    tip,
    expectedProfit: requote.profit,
    actualProfit: actualProfitOf(op.profitMint, balanceChanges),
    balanceChanges,
    meetsMinimum: requote.meetsMinimum,
    slot: requote.slot,
  };
}
