import type { Commitment } from '../chain/index.js';
import { invalidArgument } from '../errors.js';
import { JsonRpcHttpClient } from './json-rpc-http-client.js';
import { readMultipleAccountsReply } from './multiple-accounts-reply.js';
import { rpcFailure, type RpcFailure } from './rpc-errors.js';

export { basicAuthHeader } from './rpc-endpoint.js';
export type { Commitment };

/**
 * The scanner's chain reads: getMultipleAccounts (base64, ≤100 keys per call) and getEpochInfo,
 * over the engine's one JSON-RPC client (json-rpc-http-client.ts: undici's connection pools,
 * keep-alive, no WHATWG fetch layers, about half the cost of the global fetch per call on
 * loopback; a per-request timeout; typed failures), spread round-robin over several endpoints
 * (RPC_ENDPOINTS), a call one endpoint does not answer going to the next.
 *
 * u64 fields: the context slot and each account's lamports are read from the raw text as bigint
 * (JSON.parse would round values above 2^53); rentEpoch is not exposed.
 *
 * A getMultipleAccounts reply is read from its bytes (multiple-accounts-reply.ts: no UTF-8 decode,
 * no JSON.parse of hundreds of kilobytes of base64); whatever that reader does not take (an error
 * reply, an unusual one) goes through the text parser below, which answers or fails typed.
 */

/** The node's `MAX_MULTIPLE_ACCOUNTS`. */
export const MAX_KEYS_PER_CALL = 100;
export const DEFAULT_RPC_TIMEOUT_MS = 2000;


export interface AccountData {
  data: Uint8Array;
  /** Base58 program id. */
  owner: string;
  lamports: bigint;
  executable: boolean;
  /** `context.slot` of the reply that carried it. */
  slot: bigint;
}

export interface MultipleAccountsResult {
  /** `context.slot` of the answer. */
  slot: bigint;
  /** In request order; null for a missing account. */
  accounts: (AccountData | null)[];
}

/** getEpochInfo's answer (u64 fields read exactly from the text). */
export interface EpochInfo {
  epoch: bigint;
  slotIndex: bigint;
  slotsInEpoch: bigint;
  absoluteSlot: bigint;
  blockHeight: bigint;
  /** null when the node does not report it. */
  transactionCount: bigint | null;
}

export interface RpcClientOptions {
  /** At least one http(s) URL; calls rotate over them. */
  endpoints: readonly string[];
  /** Per request (connect + answer). Default 2000 ms. */
  timeoutMs?: number;
  /** Default `processed`. */
  commitment?: Commitment;
  /** Keep-alive connections per endpoint. Default 16. */
  connections?: number;
}

/** Parses `RPC_ENDPOINTS` (comma or whitespace separated URLs). */
export function parseRpcEndpoints(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const SLOT_RE = /"context"\s*:\s*\{[^{}]*?"slot"\s*:\s*(\d+)/;
const LAMPORTS_RE = /"lamports"\s*:\s*(\d+)/g;

export class RpcClient {
  readonly endpoints: readonly string[];
  readonly timeoutMs: number;
  readonly commitment: Commitment;
  /** The transport: spread over the endpoints in turn, failing over to the others. */
  private readonly rpc: JsonRpcHttpClient;

  constructor(options: RpcClientOptions) {
    if (options.endpoints.length === 0) throw invalidArgument('endpoints', 0, 'RpcClient needs at least one endpoint');
    this.endpoints = [...options.endpoints];
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    this.commitment = options.commitment ?? 'processed';
    this.rpc = new JsonRpcHttpClient({ urls: this.endpoints, timeoutMs: this.timeoutMs, connections: options.connections ?? 16, spread: true });
  }

  /** HTTP requests sent by this client (failovers count each attempt). */
  get requests(): number {
    return this.rpc.requests;
  }

  /** Closes the keep-alive connections (requests in flight finish first). */
  async close(): Promise<void> {
    await this.rpc.close();
  }

  /**
   * One getMultipleAccounts call; more than 100 keys is refused (split first, see AccountFetcher).
   * `signal` aborts the request (the call rejects with its reason).
   */
  async getMultipleAccounts(addresses: readonly string[], signal?: AbortSignal): Promise<MultipleAccountsResult> {
    if (addresses.length > MAX_KEYS_PER_CALL) {
      throw invalidArgument('addresses', addresses.length, `getMultipleAccounts takes at most ${MAX_KEYS_PER_CALL} keys, got ${addresses.length}`);
    }
    const method = 'getMultipleAccounts';
    const { endpoint, body } = await this.rpc.callBytes(method, [addresses, { encoding: 'base64', commitment: this.commitment }], signal === undefined ? undefined : { signal });
    // The bytes as they came; the text parser for whatever the byte reader does not take (an error
    // reply, anything unusual), which answers with the result or the typed failure.
    return readMultipleAccountsReply(body, addresses.length) ?? parseMultipleAccounts(body.toString('utf8'), addresses.length, endpoint, method);
  }

  /** getEpochInfo at the client's commitment: the current epoch and the slot's place in it. */
  async getEpochInfo(): Promise<EpochInfo> {
    const { endpoint, body } = await this.rpc.callBytes('getEpochInfo', [{ commitment: this.commitment }]);
    return parseEpochInfo(body.toString('utf8'), endpoint);
  }
}

interface UiAccountJson {
  data?: unknown;
  owner?: unknown;
  executable?: unknown;
  lamports?: unknown;
}

/** @internal Parses a getMultipleAccounts reply text (exported for tests). */
export function parseMultipleAccounts(
  text: string,
  expected: number,
  endpoint: string,
  method = 'getMultipleAccounts',
): MultipleAccountsResult {
  const malformed = (why: string): RpcFailure =>
    rpcFailure('malformed', `${method}: ${why}`, { endpoint, method });
  let reply: { result?: { context?: unknown; value?: unknown }; error?: { code?: unknown; message?: unknown } };
  try {
    reply = JSON.parse(text) as typeof reply;
  } catch (err) {
    throw rpcFailure('malformed', `${method}: reply is not JSON`, { endpoint, method, cause: err });
  }
  if (reply === null || typeof reply !== 'object') throw malformed('reply is not an object');
  if (reply.error !== undefined && reply.error !== null) {
    const code = typeof reply.error.code === 'number' ? reply.error.code : undefined;
    const message = typeof reply.error.message === 'string' ? reply.error.message : 'unknown error';
    throw rpcFailure('rpc', `${method}: ${message} (${code ?? '?'})`, { endpoint, method, rpcCode: code });
  }
  const value = reply.result?.value;
  if (!Array.isArray(value) || value.length !== expected) throw malformed('result.value is not an array of the keys asked');
  const slotMatch = SLOT_RE.exec(text);
  if (slotMatch === null) throw malformed('no result.context.slot');
  const slot = BigInt(slotMatch[1]!);
  // Exact lamports, in order of the non-null accounts (base64 data and base58 owners hold no quotes).
  const lamports: bigint[] = [];
  LAMPORTS_RE.lastIndex = 0;
  for (let m = LAMPORTS_RE.exec(text); m !== null; m = LAMPORTS_RE.exec(text)) lamports.push(BigInt(m[1]!));
  const accounts: (AccountData | null)[] = new Array(expected);
  let k = 0;
  for (let i = 0; i < expected; i++) {
    const v = value[i] as UiAccountJson | null;
    if (v === null) {
      accounts[i] = null;
      continue;
    }
    if (typeof v !== 'object') throw malformed(`account ${i} is not an object`);
    const data = v.data;
    if (!Array.isArray(data) || typeof data[0] !== 'string' || data[1] !== 'base64') {
      throw malformed(`account ${i} data is not [base64, "base64"]`);
    }
    if (typeof v.owner !== 'string') throw malformed(`account ${i} has no owner`);
    const exact = lamports[k++];
    if (exact === undefined) throw malformed(`account ${i} has no lamports`);
    const buf = Buffer.from(data[0], 'base64');
    accounts[i] = {
      data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
      owner: v.owner,
      lamports: exact,
      executable: v.executable === true,
      slot,
    };
  }
  return { slot, accounts };
}

const EPOCH_FIELDS = ['epoch', 'slotIndex', 'slotsInEpoch', 'absoluteSlot', 'blockHeight'] as const;

/** @internal Parses a getEpochInfo reply text (exported for tests). */
export function parseEpochInfo(text: string, endpoint: string): EpochInfo {
  const method = 'getEpochInfo';
  let reply: { result?: Record<string, unknown> | null; error?: { code?: unknown; message?: unknown } | null };
  try {
    reply = JSON.parse(text) as typeof reply;
  } catch (err) {
    throw rpcFailure('malformed', `${method}: reply is not JSON`, { endpoint, method, cause: err });
  }
  if (reply === null || typeof reply !== 'object') throw rpcFailure('malformed', `${method}: reply is not an object`, { endpoint, method });
  if (reply.error !== undefined && reply.error !== null) {
    const code = typeof reply.error.code === 'number' ? reply.error.code : undefined;
    const message = typeof reply.error.message === 'string' ? reply.error.message : 'unknown error';
    throw rpcFailure('rpc', `${method}: ${message} (${code ?? '?'})`, { endpoint, method, rpcCode: code });
  }
  const result = reply.result;
  if (result === null || result === undefined || typeof result !== 'object') throw rpcFailure('malformed', `${method}: no result object`, { endpoint, method });
  const out: Partial<Record<(typeof EPOCH_FIELDS)[number], bigint>> = {};
  for (const field of EPOCH_FIELDS) {
    // The digits as sent: JSON.parse would round values above 2^53.
    const match = new RegExp(`"${field}"\\s*:\\s*(\\d+)`).exec(text);
    if (typeof result[field] !== 'number' || match === null) throw rpcFailure('malformed', `${method}: result.${field} is not a u64`, { endpoint, method });
    out[field] = BigInt(match[1]!);
  }
  const count = /"transactionCount"\s*:\s*(\d+)/.exec(text);
  return {
    epoch: out.epoch!,
    slotIndex: out.slotIndex!,
    slotsInEpoch: out.slotsInEpoch!,
    absoluteSlot: out.absoluteSlot!,
    blockHeight: out.blockHeight!,
    transactionCount: typeof result.transactionCount === 'number' && count !== null ? BigInt(count[1]!) : null,
  };
}
