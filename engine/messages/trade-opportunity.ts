/**
 * TradeOpportunity, version 1 (schemas/trade-opportunity.schema.json): what a planner publishes on
 * `trade.opportunities.<strategy>` and an executor consumes. Inside the engine amounts are bigint;
 * on the wire they are decimal strings.
 *
 *   encodeTradeOpportunity(op)    → JSON bytes, after `validateTradeOpportunity`
 *   decodeTradeOpportunity(bytes) → TradeOpportunity, or TP_ERR_MESSAGE_INVALID naming the field
 *
 * Beyond the schema, a valid opportunity keeps the rules of its format (checked both ways):
 * - the route chains: hop i's output mint and amount are hop i+1's input mint and amount; the first
 *   hop takes `inputMint`/`inputAmount`, the last gives `outputMint`/`expectedOutput`; steps 0..n-1;
 * - `costs.total = quotedFees + flashLoanFee + tip`; `costs.poolFees` has one entry per hop, equal
 *   to that hop's `fee`; `flashLoanFee` is the lender's fee (≥ 1) with a flash loan, else 0;
 * - arbitrage: a cycle (`outputMint = inputMint = profitMint`), funded by a flash loan or by the
 *   worker wallet's own balance (`flashLoan`), a tip of 5,000 to 6,000, and `expectedProfit = expectedOutput - inputAmount - costs.total` (spec 03's rule: the
 *   pool fees are inside the outputs already and are not subtracted twice);
 * - `expiresAt > createdAt`; `minimumOutput <= expectedOutput`.
 */
import { createHash, randomUUID } from 'node:crypto';

import { type Dex } from '../dex/index.js';
import { feeSfOfBps, flashLoanFee } from '../lending/index.js';
import { assertSchema, invalidMessage, parseMessageJson } from './message-schema.js';

export const TRADE_OPPORTUNITY_SCHEMA = 'trade-opportunity.schema.json';
export const TRADE_OPPORTUNITY_VERSION = 1;
export const TRADE_OPPORTUNITIES_SUBJECT_ROOT = 'trade.opportunities';

export const Strategy = { Arbitrage: 'arbitrage', Grid: 'grid', Dca: 'dca', Signal: 'signal' } as const;
export type Strategy = (typeof Strategy)[keyof typeof Strategy];
export const STRATEGIES: readonly Strategy[] = [Strategy.Arbitrage, Strategy.Grid, Strategy.Dca, Strategy.Signal];

/** Spec 03: the flash loan fee is 0.05% of the input amount (5 / 10,000). */
export const FLASH_LOAN_FEE_BPS = 5n;
/** Spec 03: the tip is between 5,000 and 6,000 smallest units. */
export const MIN_TIP = 5_000n;
export const MAX_TIP = 6_000n;
/** Solana's base fee per signature, lamports. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

export interface RouteHop {
  step: number;
  pool: string;
  dex: Dex;
  inputMint: string;
  outputMint: string;
  inputAmount: bigint;
  outputAmount: bigint;
  /** The pool's trade fee on this hop, in `feeMint` atoms, already inside `outputAmount`. */
  fee: bigint;
  feeMint: string;
  priceImpact: number;
  /** Slot of the pool state this hop was computed from. */
  slot: bigint;
}

export interface OpportunityCosts {
  poolFees: bigint[];
  quotedFees: bigint;
  flashLoanFee: bigint;
  tip: bigint;
  total: bigint;
}

export interface TradeOpportunity {
  version: typeof TRADE_OPPORTUNITY_VERSION;
  id: string;
  strategy: Strategy;
  strategyId: string;
  createdAt: number;
  expiresAt: number;
  /** The oldest slot of the states used. */
  slot: bigint;
  stateAgeMs: number;
  sourceEvent?: { id: string; receivedAt: number };
  side?: 'buy' | 'sell';
  inputMint: string;
  outputMint: string;
  inputAmount: bigint;
  expectedOutput: bigint;
  minimumOutput: bigint;
  expectedProfit: bigint;
  profitMint: string;
  flashLoan: boolean;
  costs: OpportunityCosts;
  route: RouteHop[];
  details?: Record<string, unknown>;
}

/** `trade.opportunities.<strategy>`, with an optional test prefix in front. */
export function tradeOpportunitySubject(strategy: Strategy, prefix = ''): string {
  return `${prefix}${TRADE_OPPORTUNITIES_SUBJECT_ROOT}.${strategy}`;
}

/** Spec 03's flash-loan fee, 0.05 %, as a klend reserve holds it (`flash_loan_fee_sf`). */
export const SPEC_FLASH_LOAN_FEE_SF = feeSfOfBps(Number(FLASH_LOAN_FEE_BPS));

/**
 * Spec 03's flash-loan fee of borrowing `input`, charged as Kamino Lending charges it: 0.05 % of
 * the amount, rounded, at least 1 atom (engine/lending flashLoanFee). A reserve with another fee
 * charges `flashLoanFee(input, itsFeeSf)`.
 */
export function flashLoanFeeOf(input: bigint): bigint {
  return flashLoanFee(input, SPEC_FLASH_LOAN_FEE_SF);
}

/**
 * The fees quoted to submit a transaction: 5,000 lamports per signature plus the priority fee
 * ceil(computeUnitPrice (micro-lamports) × computeUnits / 1e6), as the runtime charges them.
 */
export function quotedTransactionFees(signatures: number, computeUnits: number, computeUnitPriceMicroLamports: bigint): bigint {
  const priority = (computeUnitPriceMicroLamports * BigInt(computeUnits) + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(signatures) + priority;
}

/** Spec 03's arbitrage profit: output − input − quoted fees − flash-loan fee − tip. */
export function arbitrageProfit(input: bigint, output: bigint, costs: Pick<OpportunityCosts, 'quotedFees' | 'flashLoanFee' | 'tip'>): bigint {
  return output - input - costs.quotedFees - costs.flashLoanFee - costs.tip;
}

export function newOpportunityId(): string {
  return randomUUID();
}

/** A UUID (version-4 layout) derived from `seed`: the same decision gives the same id after a restart. */
export function deterministicUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

// ---- wire form -----------------------------------------------------------------------------------

type Wire = Record<string, unknown>;

function hopToWire(h: RouteHop): Wire {
  return {
    step: h.step,
    pool: h.pool,
    dex: h.dex,
    inputMint: h.inputMint,
    outputMint: h.outputMint,
    inputAmount: h.inputAmount.toString(),
    outputAmount: h.outputAmount.toString(),
    fee: h.fee.toString(),
    feeMint: h.feeMint,
    priceImpact: h.priceImpact,
    slot: h.slot.toString(),
  };
}

/** The JSON object of `op` (bigints as decimal strings), not validated. */
export function tradeOpportunityToJson(op: TradeOpportunity): Wire {
  const out: Wire = {
    version: op.version,
    id: op.id,
    strategy: op.strategy,
    strategyId: op.strategyId,
    createdAt: op.createdAt,
    expiresAt: op.expiresAt,
    slot: op.slot.toString(),
    stateAgeMs: op.stateAgeMs,
  };
  if (op.sourceEvent !== undefined) out['sourceEvent'] = { id: op.sourceEvent.id, receivedAt: op.sourceEvent.receivedAt };
  if (op.side !== undefined) out['side'] = op.side;
  Object.assign(out, {
    inputMint: op.inputMint,
    outputMint: op.outputMint,
    inputAmount: op.inputAmount.toString(),
    expectedOutput: op.expectedOutput.toString(),
    minimumOutput: op.minimumOutput.toString(),
    expectedProfit: op.expectedProfit.toString(),
    profitMint: op.profitMint,
    flashLoan: op.flashLoan,
    costs: {
      poolFees: op.costs.poolFees.map((f) => f.toString()),
      quotedFees: op.costs.quotedFees.toString(),
      flashLoanFee: op.costs.flashLoanFee.toString(),
      tip: op.costs.tip.toString(),
      total: op.costs.total.toString(),
    },
    route: op.route.map(hopToWire),
  });
  if (op.details !== undefined) out['details'] = op.details;
  return out;
}

/** Reads a schema-valid JSON object into the bigint form. */
function fromJson(w: Wire): TradeOpportunity {
  const c = w['costs'] as Wire;
  const op: TradeOpportunity = {
    version: TRADE_OPPORTUNITY_VERSION,
    id: w['id'] as string,
    strategy: w['strategy'] as Strategy,
    strategyId: w['strategyId'] as string,
    createdAt: w['createdAt'] as number,
    expiresAt: w['expiresAt'] as number,
    slot: BigInt(w['slot'] as string),
    stateAgeMs: w['stateAgeMs'] as number,
    inputMint: w['inputMint'] as string,
    outputMint: w['outputMint'] as string,
    inputAmount: BigInt(w['inputAmount'] as string),
    expectedOutput: BigInt(w['expectedOutput'] as string),
    minimumOutput: BigInt(w['minimumOutput'] as string),
    expectedProfit: BigInt(w['expectedProfit'] as string),
    profitMint: w['profitMint'] as string,
    flashLoan: w['flashLoan'] as boolean,
    costs: {
      poolFees: (c['poolFees'] as string[]).map((f) => BigInt(f)),
      quotedFees: BigInt(c['quotedFees'] as string),
      flashLoanFee: BigInt(c['flashLoanFee'] as string),
      tip: BigInt(c['tip'] as string),
      total: BigInt(c['total'] as string),
    },
    route: (w['route'] as Wire[]).map((h) => ({
      step: h['step'] as number,
      pool: h['pool'] as string,
      dex: h['dex'] as Dex,
      inputMint: h['inputMint'] as string,
      outputMint: h['outputMint'] as string,
      inputAmount: BigInt(h['inputAmount'] as string),
      outputAmount: BigInt(h['outputAmount'] as string),
      fee: BigInt(h['fee'] as string),
      feeMint: h['feeMint'] as string,
      priceImpact: h['priceImpact'] as number,
      slot: BigInt(h['slot'] as string),
    })),
  };
  if (w['sourceEvent'] !== undefined) op.sourceEvent = w['sourceEvent'] as { id: string; receivedAt: number };
  if (w['side'] !== undefined) op.side = w['side'] as 'buy' | 'sell';
  if (w['details'] !== undefined) op.details = w['details'] as Record<string, unknown>;
  return op;
}

// ---- rules beyond the schema ---------------------------------------------------------------------

const U64_MAX = (1n << 64n) - 1n;

/** Every rule of the format `op` breaks (see the module comment), as `path: message`. */
export function tradeOpportunityRuleViolations(op: TradeOpportunity): string[] {
  const v: string[] = [];
  const route = op.route;
  if (route.length === 0) return ['/route: must have at least one hop'];
  route.forEach((h, i) => {
    if (h.step !== i) v.push(`/route/${i}/step: must be ${i}`);
    if (i > 0) {
      const prev = route[i - 1]!;
      if (h.inputMint !== prev.outputMint) v.push(`/route/${i}/inputMint: must be hop ${i - 1}'s outputMint`);
      if (h.inputAmount !== prev.outputAmount) v.push(`/route/${i}/inputAmount: must be hop ${i - 1}'s outputAmount`);
    }
    if (h.feeMint !== h.inputMint && h.feeMint !== h.outputMint) v.push(`/route/${i}/feeMint: must be the hop's input or output mint`);
  });
  const first = route[0]!;
  const last = route[route.length - 1]!;
  if (first.inputMint !== op.inputMint) v.push('/inputMint: must be the first hop\'s inputMint');
  if (first.inputAmount !== op.inputAmount) v.push('/inputAmount: must be the first hop\'s inputAmount');
  if (last.outputMint !== op.outputMint) v.push('/outputMint: must be the last hop\'s outputMint');
  if (last.outputAmount !== op.expectedOutput) v.push('/expectedOutput: must be the last hop\'s outputAmount');
  if (op.minimumOutput > op.expectedOutput) v.push('/minimumOutput: must not exceed expectedOutput');
  if (op.expiresAt <= op.createdAt) v.push('/expiresAt: must be after createdAt');
  const c = op.costs;
  if (c.poolFees.length !== route.length || c.poolFees.some((f, i) => f !== route[i]!.fee)) v.push('/costs/poolFees: must list each hop\'s fee, in order');
  if (c.total !== c.quotedFees + c.flashLoanFee + c.tip) v.push('/costs/total: must be quotedFees + flashLoanFee + tip');
  if (c.total > U64_MAX) v.push('/costs/total: exceeds u64');
  if (op.flashLoan ? c.flashLoanFee < 1n : c.flashLoanFee !== 0n) v.push('/costs/flashLoanFee: must be at least 1 with a flash loan (the lender\'s fee) and 0 without');
  if (op.strategy === Strategy.Arbitrage) {
    if (op.outputMint !== op.inputMint || op.profitMint !== op.inputMint) v.push('/outputMint: an arbitrage route is a cycle back to inputMint, profit in inputMint');
    if (c.tip < MIN_TIP || c.tip > MAX_TIP) v.push(`/costs/tip: must be between ${MIN_TIP} and ${MAX_TIP}`);
    const profit = arbitrageProfit(op.inputAmount, op.expectedOutput, c);
    if (op.expectedProfit !== profit) v.push(`/expectedProfit: must be expectedOutput - inputAmount - costs.total = ${profit}`);
    if (op.side !== undefined) v.push('/side: arbitrage has no side');
  } else if (op.side === undefined) {
    v.push(`/side: is required for ${op.strategy}`);
  }
  return v;
}

/** Throws TP_ERR_MESSAGE_INVALID unless `op` conforms to the schema and the rules of its format. */
export function validateTradeOpportunity(op: TradeOpportunity): void {
  assertSchema(TRADE_OPPORTUNITY_SCHEMA, 'TradeOpportunity', tradeOpportunityToJson(op));
  const rules = tradeOpportunityRuleViolations(op);
  if (rules.length > 0) throw invalidMessage('TradeOpportunity', rules);
}

/** Validated JSON bytes of `op`. */
export function encodeTradeOpportunity(op: TradeOpportunity): Uint8Array {
  const json = tradeOpportunityToJson(op);
  assertSchema(TRADE_OPPORTUNITY_SCHEMA, 'TradeOpportunity', json);
  const rules = tradeOpportunityRuleViolations(op);
  if (rules.length > 0) throw invalidMessage('TradeOpportunity', rules);
  return Buffer.from(JSON.stringify(json), 'utf8');
}

/** Parses and validates a TradeOpportunity (bytes or an already parsed JSON value). */
export function decodeTradeOpportunity(input: Uint8Array | string | object): TradeOpportunity {
  const value = typeof input === 'object' && !(input instanceof Uint8Array) ? input : parseMessageJson('TradeOpportunity', input);
  if (typeof value === 'object' && value !== null && 'version' in value && (value as Wire)['version'] !== TRADE_OPPORTUNITY_VERSION) {
    throw invalidMessage('TradeOpportunity', [`/version: version ${String((value as Wire)['version'])} is not known (this build reads ${TRADE_OPPORTUNITY_VERSION})`]);
  }
  assertSchema(TRADE_OPPORTUNITY_SCHEMA, 'TradeOpportunity', value);
  const op = fromJson(value as Wire);
  const rules = tradeOpportunityRuleViolations(op);
  if (rules.length > 0) throw invalidMessage('TradeOpportunity', rules);
  return op;
}
