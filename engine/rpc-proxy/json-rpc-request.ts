import { ErrorCode, TpError } from '../errors.js';
import { arrayItems, member, objectMembers, skipSpace, validStringEnd, validValueEnd, type Member, type Span } from './json-scan.js';
import { EMPTY_BATCH_REPLY, JsonRpcErrorCode, PARSE_ERROR_REPLY, errorReply } from './proxy-errors.js';
import { isReadMethod } from './rpc-methods.js';

/**
 * A request body (POST /rpc, or a WebSocket message) read into JSON-RPC 2.0 calls, as a Solana
 * node reads it: one call or a batch; `jsonrpc` must be "2.0"; `method` a string; `params` absent,
 * null, an array or an object; `id` absent (a notification), null, a string or an unsigned
 * integer; no other members. JSON.parse validates the text and gives the members' values; the
 * bytes of `id`, `method` and `params` are found with json-scan when the proxy has to rebuild a
 * call (batches) or to answer with its id, so that they go out exactly as they came in.
 */

const CALL_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'method', 'params', 'id']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One valid call. */
export class RpcCall {
  /** False for a notification (no `id`): never answered, and never forwarded. */
  readonly hasId: boolean;
  /** A read may be retried on another endpoint; anything else is a write (rpc-methods.ts). */
  readonly read: boolean;
  private members: Member[] | null | undefined;

  constructor(
    /** The bytes the call lies in. */
    readonly bytes: Buffer,
    /** Where its object is in `bytes`. */
    readonly span: Span,
    readonly method: string,
    hasId: boolean,
  ) {
    this.hasId = hasId;
    this.read = isReadMethod(method);
  }

  /** The call's own bytes (the whole body for a single call). */
  get raw(): Buffer {
    return this.span.start === 0 && this.span.end === this.bytes.length ? this.bytes : this.bytes.subarray(this.span.start, this.span.end);
  }

  /** The raw bytes of `id`; null for a notification. */
  get id(): Uint8Array | null {
    return this.hasId ? this.part('id') : null;
  }

  /** The raw bytes of `method` (a JSON string, quotes included). */
  get methodBytes(): Uint8Array {
    return this.part('method')!;
  }

  /** The raw bytes of `params`; null when absent. */
  get params(): Uint8Array | null {
    return this.part('params');
  }

  private part(key: string): Uint8Array | null {
    if (this.members === undefined) this.members = objectMembers(this.bytes, this.span.start, this.span.end);
    const span = this.members === null ? undefined : member(this.members, key);
    return span === undefined ? null : this.bytes.subarray(span.start, span.end);
  }
}

export type ParsedRequest =
  /** One valid call. */
  | { kind: 'call'; call: RpcCall }
  /** A batch of at least one item: each a valid call or the error reply of an invalid one. */
  | { kind: 'batch'; items: (RpcCall | Buffer)[] }
  /** Nothing to forward: the reply is ready (parse error, invalid single call, empty batch). */
  | { kind: 'reply'; reply: Buffer };

/** A valid `id` as a Solana node takes it: null, a string, or an unsigned integer. */
function isId(id: unknown): boolean {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id) && id >= 0);
}

/** Why `value` is not a valid call, or null when it is one. */
function invalidReason(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a call must be a JSON object';
  const c = value as Record<string, unknown>;
  for (const key in c) if (!CALL_KEYS.has(key)) return `unknown member ${JSON.stringify(key)}`;
  if (c.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof c.method !== 'string' || c.method === '') return 'method must be a non-empty string';
  const params = c.params;
  if (params !== undefined && params !== null && typeof params !== 'object') return 'params must be an array or an object';
  if ('id' in c && !isId(c.id)) return 'id must be null, a string or an unsigned integer';
  return null;
}

/** One item: the call, or its error reply (with its id when that id is valid). */
function readCall(value: unknown, bytes: Buffer, span: Span): RpcCall | Buffer {
  const why = invalidReason(value);
  if (why === null) {
    const c = value as { method: string };
    return new RpcCall(bytes, span, c.method, 'id' in (value as object));
  }
  let id: Uint8Array | null = null;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && isId((value as { id?: unknown }).id)) {
    const members = objectMembers(bytes, span.start, span.end);
    const idSpan = members === null ? undefined : member(members, 'id');
    if (idSpan !== undefined) id = bytes.subarray(idSpan.start, idSpan.end);
  }
  return errorReply(JsonRpcErrorCode.InvalidRequest, `Invalid request: ${why}`, id);
}

/**
 * Reads a request body; never throws. A batch of more than `maxBatchItems` calls is answered with
 * one Invalid Request error (id null) and none of its calls is read further: a cheap request must
 * not buy one error object per item.
 */
export function parseRequest(bytes: Buffer, maxBatchItems = Number.MAX_SAFE_INTEGER): ParsedRequest {
  const fast = plainSingleCall(bytes);
  if (fast !== null) return { kind: 'call', call: fast };
  return parseRequestWithJson(bytes, maxBatchItems);
}

/** @internal parseRequest without its fast path: every body through JSON.parse (the tests compare both). */
export function parseRequestWithJson(bytes: Buffer, maxBatchItems = Number.MAX_SAFE_INTEGER): ParsedRequest {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return { kind: 'reply', reply: PARSE_ERROR_REPLY };
  }
  if (!Array.isArray(value)) {
    const call = readCall(value, bytes, { start: 0, end: bytes.length });
    return call instanceof RpcCall ? { kind: 'call', call } : { kind: 'reply', reply: call };
  }
  if (value.length === 0) return { kind: 'reply', reply: EMPTY_BATCH_REPLY };
  if (value.length > maxBatchItems) {
    return { kind: 'reply', reply: errorReply(JsonRpcErrorCode.InvalidRequest, `Invalid request: a batch holds at most ${maxBatchItems} calls; this one holds ${value.length}`, null) };
  }
  const spans = arrayItems(bytes, 0, bytes.length);
  // JSON.parse took the text, so the scanner finds the same items; anything else is a bug of ours.
  if (spans === null || spans.length !== value.length) throw new TpError(ErrorCode.Internal, 'json-scan disagrees with JSON.parse on a batch');
  const items = new Array<RpcCall | Buffer>(value.length);
  for (let i = 0; i < value.length; i++) items[i] = readCall(value[i], bytes, spans[i]!);
  return { kind: 'batch', items };
}

const JSONRPC_2 = '"2.0"';
const NULL_BYTES = 'null';

/** Whether bytes[start, end) are exactly the ASCII text `text`. */
function bytesAre(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let k = 0; k < text.length; k++) if (bytes[start + k] !== text.charCodeAt(k)) return false;
  return true;
}

/**
 * The common case read without JSON.parse (which would build every params value only to throw it
 * away): one valid call, in ASCII, each member once, keys and method without escapes, jsonrpc
 * "2.0", params an array, an object or null, id absent, null, a string or plain digits. Its params
 * and id are checked as JSON.parse checks them (json-scan.ts validValueEnd). Anything else, valid
 * or not, answers null and is read by the JSON.parse path, which then gives the same call or the
 * error reply it always gave. Exported for its tests.
 */
export function plainSingleCall(bytes: Buffer): RpcCall | null {
  const end = bytes.length;
  let i = skipSpace(bytes, 0, end);
  if (bytes[i] !== 0x7b) return null;
  let method: string | null = null;
  let jsonrpc = false;
  let params = false;
  let hasId = false;
  i = skipSpace(bytes, i + 1, end);
  for (;;) {
    if (bytes[i] !== 0x22) return null;
    const keyEnd = validStringEnd(bytes, i, end);
    if (keyEnd < 0) return null;
    const keyStart = i;
    i = skipSpace(bytes, keyEnd, end);
    if (bytes[i] !== 0x3a) return null;
    const valueStart = skipSpace(bytes, i + 1, end);
    const valueEnd = validValueEnd(bytes, valueStart, end);
    if (valueEnd < 0) return null;
    const first = bytes[valueStart];
    if (bytesAre(bytes, keyStart, keyEnd, '"jsonrpc"')) {
      if (jsonrpc || !bytesAre(bytes, valueStart, valueEnd, JSONRPC_2)) return null;
      jsonrpc = true;
    } else if (bytesAre(bytes, keyStart, keyEnd, '"method"')) {
      if (method !== null || first !== 0x22 || valueEnd - valueStart < 3 || bytes.subarray(valueStart, valueEnd).includes(0x5c)) return null;
      method = bytes.toString('latin1', valueStart + 1, valueEnd - 1);
    } else if (bytesAre(bytes, keyStart, keyEnd, '"params"')) {
      if (params || (first !== 0x5b && first !== 0x7b && !bytesAre(bytes, valueStart, valueEnd, NULL_BYTES))) return null;
      params = true;
    } else if (bytesAre(bytes, keyStart, keyEnd, '"id"')) {
      if (hasId || !plainId(bytes, valueStart, valueEnd)) return null;
      hasId = true;
    } else {
      return null;
    }
    i = skipSpace(bytes, valueEnd, end);
    if (bytes[i] === 0x2c) {
      i = skipSpace(bytes, i + 1, end);
      continue;
    }
    if (bytes[i] !== 0x7d || skipSpace(bytes, i + 1, end) !== end) return null;
    break;
  }
  if (!jsonrpc || method === null) return null;
  return new RpcCall(bytes, { start: 0, end }, method, hasId);
}

/** An id the fast path takes as it is (already validated JSON): null, a string, or digits only (an unsigned integer). */
function plainId(bytes: Uint8Array, start: number, end: number): boolean {
  const first = bytes[start];
  if (first === 0x22) return true;
  if (bytesAre(bytes, start, end, NULL_BYTES)) return true;
  for (let k = start; k < end; k++) if (bytes[k]! < 0x30 || bytes[k]! > 0x39) return false;
  return end > start;
}
