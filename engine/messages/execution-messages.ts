/**
 * ExecutionRequest and ExecutionResult, version 1 (schemas/execution-request.schema.json,
 * schemas/execution-result.schema.json): the executor's decision on an opportunity and the
 * trade's outcome. Inside the engine amounts are bigint; on the wire decimal strings.
 *
 *   encodeExecutionResult(r) → JSON bytes (validated); published on execution.orders.<strategy>
 *   decodeExecutionResult(bytes) → ExecutionResult, or TP_ERR_MESSAGE_INVALID naming the field
 *   (the same pair for ExecutionRequest, published on execution.orders.request.<strategy>)
 *
 * Both share the EXECUTION_ORDERS stream (`execution.orders.>`). A consumer of the results alone
 * filters on executionResultFilter (`execution.orders.*`: one token after the root, where a
 * request's subject has two); of the requests alone on executionRequestFilter.
 */
import { assertSchema, invalidMessage, parseMessageJson } from './message-schema.js';
import type { Strategy } from './trade-opportunity.js';

export const EXECUTION_REQUEST_SCHEMA = 'execution-request.schema.json';
export const EXECUTION_RESULT_SCHEMA = 'execution-result.schema.json';
export const EXECUTION_MESSAGE_VERSION = 1;
export const EXECUTION_ORDERS_SUBJECT_ROOT = 'execution.orders';

/** Spec 03's two executors: the bundle executor and the lower-cost direct executor. */
export const ExecutionPath = { Bundle: 'bundle', Direct: 'direct' } as const;
export type ExecutionPath = (typeof ExecutionPath)[keyof typeof ExecutionPath];

/** The token between the root and the strategy on a request's subject. */
export const EXECUTION_REQUEST_TOKEN = 'request';

/** `execution.orders.<strategy>`, with an optional test prefix in front. */
export function executionResultSubject(strategy: Strategy, prefix = ''): string {
  return `${prefix}${EXECUTION_ORDERS_SUBJECT_ROOT}.${strategy}`;
}

/** `execution.orders.request.<strategy>`: the executor's decision, published before anything is sent. */
export function executionRequestSubject(strategy: Strategy, prefix = ''): string {
  return `${prefix}${EXECUTION_ORDERS_SUBJECT_ROOT}.${EXECUTION_REQUEST_TOKEN}.${strategy}`;
}

/** Every strategy's results and no request: `execution.orders.*`. */
export function executionResultFilter(prefix = ''): string {
  return `${prefix}${EXECUTION_ORDERS_SUBJECT_ROOT}.*`;
}

/** Every strategy's requests and no result: `execution.orders.request.*`. */
export function executionRequestFilter(prefix = ''): string {
  return `${prefix}${EXECUTION_ORDERS_SUBJECT_ROOT}.${EXECUTION_REQUEST_TOKEN}.*`;
}

/** The message id of a trade's request (its result's is the trade id). */
export function executionRequestMessageId(tradeId: string): string {
  return `${tradeId}:${EXECUTION_REQUEST_TOKEN}`;
}

export interface ExecutionRequest {
  version: typeof EXECUTION_MESSAGE_VERSION;
  tradeId: string;
  opportunityId: string;
  strategy: Strategy;
  strategyId: string;
  executorId: string;
  walletId?: string;
  walletAddress?: string;
  path: ExecutionPath;
  paper: boolean;
  inputMint: string;
  outputMint: string;
  profitMint: string;
  inputAmount: bigint;
  expectedOutput: bigint;
  minimumOutput: bigint;
  expectedProfit: bigint;
  tip: bigint;
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  receivedAt: number;
}

/** The trades row's final statuses, as a result carries them. */
export type ExecutionStatus = 'confirmed' | 'failed' | 'expired' | 'paper';

export interface ExecutionLatency {
  receivedAt: number;
  submittedAt?: number;
  confirmedAt?: number;
  /** received → submitted, ms. */
  submitMs?: number;
  /** received → outcome, ms. */
  executionMs: number;
}

export interface ExecutionResult {
  version: typeof EXECUTION_MESSAGE_VERSION;
  tradeId: string;
  opportunityId: string;
  strategy: Strategy;
  strategyId: string;
  executorId: string;
  walletAddress?: string;
  path: ExecutionPath;
  status: ExecutionStatus;
  signature?: string;
  bundleId?: string;
  slot?: bigint;
  profitMint: string;
  expectedProfit: bigint;
  actualProfit?: bigint;
  /**
   * The wallet's actual spend of the input mint (confirmed, failed with a change, paper): its token
   * accounts' change; for wrapped SOL also the native SOL the swap wrapped, fees, tip and the rent
   * of new token accounts left out (engine/executor filledAmountsOf).
   */
  filledInput?: bigint;
  /** The wallet's actual receipt of the output mint (wrapped SOL: with the SOL unwrapped, as above). */
  filledOutput?: bigint;
  fees: bigint;
  tip: bigint;
  latency: ExecutionLatency;
  error?: string;
  completedAt: number;
}

type Wire = Record<string, unknown>;

const REQUEST_BIGINTS = ['inputAmount', 'expectedOutput', 'minimumOutput', 'expectedProfit', 'tip', 'computeUnitPrice'] as const;
const RESULT_BIGINTS = ['slot', 'expectedProfit', 'actualProfit', 'filledInput', 'filledOutput', 'fees', 'tip'] as const;

/** A copy with the named bigint fields as decimal strings (absent fields stay absent). */
function withStrings(value: object, fields: readonly string[]): Wire {
  const out: Wire = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[k] = fields.includes(k) && typeof v === 'bigint' ? v.toString() : v;
  }
  return out;
}

/** A copy with the named decimal string fields as bigint. */
function withBigints<T>(wire: Wire, fields: readonly string[]): T {
  const out: Wire = { ...wire };
  for (const f of fields) if (typeof out[f] === 'string') out[f] = BigInt(out[f]);
  if (typeof out['latency'] === 'object' && out['latency'] !== null) out['latency'] = { ...(out['latency'] as Wire) };
  return out as T;
}

function decodeWith<T>(title: string, schema: string, fields: readonly string[], input: Uint8Array | string | object): T {
  const value = typeof input === 'object' && !(input instanceof Uint8Array) ? input : parseMessageJson(title, input);
  if (typeof value === 'object' && value !== null && 'version' in value && (value as Wire)['version'] !== EXECUTION_MESSAGE_VERSION) {
    throw invalidMessage(title, [`/version: version ${String((value as Wire)['version'])} is not known (this build reads ${EXECUTION_MESSAGE_VERSION})`]);
  }
  assertSchema(schema, title, value);
  return withBigints<T>(value as Wire, fields);
}

export function executionRequestToJson(r: ExecutionRequest): Wire {
  return withStrings(r, REQUEST_BIGINTS);
}

export function executionResultToJson(r: ExecutionResult): Wire {
  return withStrings(r, RESULT_BIGINTS);
}

export function encodeExecutionRequest(r: ExecutionRequest): Uint8Array {
  const json = executionRequestToJson(r);
  assertSchema(EXECUTION_REQUEST_SCHEMA, 'ExecutionRequest', json);
  return Buffer.from(JSON.stringify(json), 'utf8');
}

export function decodeExecutionRequest(input: Uint8Array | string | object): ExecutionRequest {
  return decodeWith<ExecutionRequest>('ExecutionRequest', EXECUTION_REQUEST_SCHEMA, REQUEST_BIGINTS, input);
}

export function encodeExecutionResult(r: ExecutionResult): Uint8Array {
  const json = executionResultToJson(r);
  assertSchema(EXECUTION_RESULT_SCHEMA, 'ExecutionResult', json);
  return Buffer.from(JSON.stringify(json), 'utf8');
}

export function decodeExecutionResult(input: Uint8Array | string | object): ExecutionResult {
  return decodeWith<ExecutionResult>('ExecutionResult', EXECUTION_RESULT_SCHEMA, RESULT_BIGINTS, input);
}
