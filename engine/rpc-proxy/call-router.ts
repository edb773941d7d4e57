import type { EndpointSet } from './endpoint-set.js';
import type { PreboundCounterChild, PreboundHistogramChild } from '../obs/index.js';
import { arrayItems, member, objectMembers, replyKind } from './json-scan.js';
import type { RpcCall } from './json-rpc-request.js';
import { JsonRpcErrorCode, errorReply, httpStatusOf, type ProxyErrorData } from './proxy-errors.js';
import { ErrorKind, type RpcProxyMetrics } from './rpc-proxy-metrics.js';
import type { UpstreamAnswer, UpstreamEndpoint, UpstreamFailure } from './upstream-endpoint.js';

/**
 * Sends calls upstream with the proxy's delivery rules:
 * - a read goes to the next endpoint in rotation; on a network error, a timeout, an HTTP 5xx or
 *   429 it is tried again on another endpoint, up to `retryCount` more times;
 * - a write (every method not known as a read) is delivered to one endpoint, once. It moves to
 *   another endpoint only when the first provably never saw it (the connection could not be
 *   opened, or its deadline passed while it waited for one); once it has been handed to a
 *   connection it is never sent again, and a failure then answers -32092 (outcome unknown);
 * - a single call's bytes go upstream as they came and the endpoint's answer comes back as it
 *   came (status and body), so ids, params and results are never decoded and re-encoded;
 * - a batch is split into its reads and its writes; each part goes upstream as one batch (reads
 *   with the read rules, writes with the write rules), with ids replaced by the items' positions
 *   so that the answers can be matched whatever their order or the client's ids; the answers are
 *   put back in the client's order with the client's ids, raw bytes kept.
 */

export interface CallRouterOptions {
  set: EndpointSet;
  metrics: RpcProxyMetrics;
  retryCount: number;
  requestTimeoutMs: number;
}

/** What to send back for a single call over HTTP. */
export interface ProxyAnswer {
  status: number;
  body: Buffer;
  contentType: string;
}

type SendResult =
  | { ok: true; answer: UpstreamAnswer; endpoint: UpstreamEndpoint; attempts: number }
  | { ok: false; failure: UpstreamFailure; endpoint: UpstreamEndpoint; attempts: number; sentAnywhere: boolean };

const JSON_TYPE = 'application/json';

/** The metric children of one (endpoint, method), so the request path does not hash labels. */
interface Children {
  requests: PreboundCounterChild;
  duration: PreboundHistogramChild;
}

export class CallRouter {
  private readonly set: EndpointSet;
  private readonly metrics: RpcProxyMetrics;
  private readonly retryCount: number;
  private readonly timeoutMs: number;
  private readonly children: Map<string, Children>[];

  constructor(options: CallRouterOptions) {
    this.set = options.set;
    this.metrics = options.metrics;
    this.retryCount = options.retryCount;
    this.timeoutMs = options.requestTimeoutMs;
    this.children = options.set.list.map(() => new Map());
  }

  /** One call: its bytes upstream as they are; the endpoint's answer as it is, or the proxy's error. */
  async forward(call: RpcCall, method: string): Promise<ProxyAnswer> {
    const r = await this.send(call.raw, call.read, method);
    if (r.ok) {
      if (r.answer.status === 200 && replyKind(r.answer.body) === 'error') this.metrics.errors.labels(r.endpoint.name, method, ErrorKind.Rpc).inc();
      return { status: r.answer.status, body: r.answer.body, contentType: r.answer.contentType ?? JSON_TYPE };
    }
    const { code, message } = failureError(call.read, r);
    return { status: httpStatusOf(code, r.failure.kind === 'timeout'), body: errorReply(code, message, call.id, failureData(r)), contentType: JSON_TYPE };
  }

  /**
   * A batch: each item's answer in the client's order (errors for invalid items already in
   * `items`); null when every item is a notification (nothing is answered).
   */
  async forwardBatch(items: readonly (RpcCall | Buffer)[]): Promise<Buffer | null> {
    const replies = new Array<Buffer | null>(items.length).fill(null);
    const reads: number[] = [];
    const writes: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (Buffer.isBuffer(item)) replies[i] = item;
      else if (item.hasId) (item.read ? reads : writes).push(i);
    }
    const parts: Promise<void>[] = [];
    if (reads.length > 0) parts.push(this.subBatch(items as RpcCall[], reads, true, replies));
    if (writes.length > 0) parts.push(this.subBatch(items as RpcCall[], writes, false, replies));
    await Promise.all(parts);
    return batchReply(replies);
  }

  /** Sends the items at `positions` as one upstream batch and puts each answer at its position. */
  private async subBatch(items: readonly RpcCall[], positions: readonly number[], read: boolean, replies: (Buffer | null)[]): Promise<void> {
    const parts: Uint8Array[] = [OPEN_BRACKET];
    positions.forEach((pos, k) => {
      const call = items[pos]!;
      const params = call.params;
      parts.push(k === 0 ? ITEM_START : COMMA_ITEM_START, Buffer.from(String(k)), METHOD_KEY, call.methodBytes);
      if (params !== null) parts.push(PARAMS_KEY, params);
      parts.push(CLOSE_BRACE);
    });
    parts.push(CLOSE_BRACKET);
    const r = await this.send(Buffer.concat(parts), read, 'batch');
    const fail = (code: JsonRpcErrorCode, message: string, data: ProxyErrorData): void => {
      for (const pos of positions) if (replies[pos] === null) replies[pos] = errorReply(code, message, items[pos]!.id, data);
    };
    if (!r.ok) {
      const { code, message } = failureError(read, r);
      fail(code, message, failureData(r));
      return;
    }
    const data = { endpoint: r.endpoint.name, attempts: r.attempts };
    const lost = read ? JsonRpcErrorCode.UpstreamFailed : JsonRpcErrorCode.WriteOutcomeUnknown;
    const body = r.answer.body;
    if (r.answer.status !== 200) {
      fail(lost, `the endpoint answered the batch with HTTP ${r.answer.status}`, { ...data, reason: snippet(body) });
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      fail(lost, 'the endpoint answered the batch with invalid JSON', { ...data, reason: snippet(body) });
      return;
    }
    if (!Array.isArray(parsed)) {
      // One answer for the whole batch: an error the endpoint gives every item (batch refused).
      const members = objectMembers(body, 0, body.length);
      const error = members === null ? undefined : member(members, 'error');
      if (error === undefined) {
        fail(lost, 'the endpoint answered the batch with something else than an array', { ...data, reason: snippet(body) });
        return;
      }
      for (const pos of positions) replies[pos] = reply(ERROR_KEY, body.subarray(error.start, error.end), items[pos]!.id);
      return;
    }
    const spans = arrayItems(body, 0, body.length);
    if (spans === null || spans.length !== parsed.length) {
      fail(lost, 'the endpoint answered the batch with something else than an array', data);
      return;
    }
    for (let j = 0; j < parsed.length; j++) {
      const k = (parsed[j] as { id?: unknown } | null)?.id;
      if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k >= positions.length) continue;
      const pos = positions[k]!;
      if (replies[pos] !== null) continue;
      const members = objectMembers(body, spans[j]!.start, spans[j]!.end);
      if (members === null) continue;
      const result = member(members, 'result');
      const error = member(members, 'error');
      const id = items[pos]!.id;
      if (result !== undefined) replies[pos] = reply(RESULT_KEY, body.subarray(result.start, result.end), id);
      else if (error !== undefined) replies[pos] = reply(ERROR_KEY, body.subarray(error.start, error.end), id);
    }
    fail(lost, 'the endpoint\'s batch answer has no answer for this call', data);
  }

  /** Attempts with the delivery rules; see the file comment. */
  private async send(body: Buffer, read: boolean, method: string): Promise<SendResult> {
    const maxAttempts = read ? 1 + this.retryCount : this.set.list.length;
    let tried = 0;
    let attempts = 0;
    let sentAnywhere = false;
    for (;;) {
      const e = this.set.pick(tried);
      tried |= e.bit;
      attempts++;
      if (attempts > 1) this.metrics.retries.labels(e.name, method).inc();
      const m = this.childrenOf(e, method);
      m.requests.inc();
      e.requests++;
      const r = await e.post(body, this.timeoutMs);
      m.duration.observe(r.ms / 1000);
      if (r.ok) {
        const failed = r.status >= 500 || r.status === 429;
        if (r.status !== 200) {
          e.errors.http++;
          this.metrics.errors.labels(e.name, method, ErrorKind.Http).inc();
        }
        if (failed) this.set.recordFailure(e, `HTTP ${r.status}`);
        else this.set.recordSuccess(e);
        sentAnywhere = true;
        if (read && failed && attempts < maxAttempts) continue;
        return { ok: true, answer: r, endpoint: e, attempts };
      }
      e.errors[r.kind]++;
      this.metrics.errors.labels(e.name, method, r.kind).inc();
      this.set.recordFailure(e, r.message);
      sentAnywhere ||= r.sent;
      if (attempts < maxAttempts && (read || !r.sent)) continue;
      return { ok: false, failure: r, endpoint: e, attempts, sentAnywhere };
    }
  }

  private childrenOf(e: UpstreamEndpoint, method: string): Children {
    const map = this.children[e.index]!;
    let c = map.get(method);
    if (c === undefined) {
      c = { requests: this.metrics.requests.labels(e.name, method), duration: this.metrics.requestDuration.labels(e.name, method) };
      map.set(method, c);
    }
    return c;
  }
}

/** The proxy's error for calls that got no answer. */
function failureError(read: boolean, r: Extract<SendResult, { ok: false }>): { code: JsonRpcErrorCode; message: string } {
  if (!r.sentAnywhere) return { code: JsonRpcErrorCode.Unavailable, message: 'no RPC endpoint could be reached; the call was not sent' };
  if (read) return { code: JsonRpcErrorCode.UpstreamFailed, message: 'no RPC endpoint answered the call' };
  return {
    code: JsonRpcErrorCode.WriteOutcomeUnknown,
    message: 'the RPC endpoint took the call and failed before answering; it may have been applied and was not sent again',
  };
}

function failureData(r: Extract<SendResult, { ok: false }>): { endpoint: string; attempts: number; reason: string } {
  return { endpoint: r.endpoint.name, attempts: r.attempts, reason: `${r.failure.kind}: ${r.failure.message}` };
}

function snippet(body: Buffer): string {
  return body.subarray(0, 200).toString('utf8');
}

const OPEN_BRACKET = Buffer.from('[');
const CLOSE_BRACKET = Buffer.from(']');
const CLOSE_BRACE = Buffer.from('}');
const COMMA = Buffer.from(',');
const ITEM_START = Buffer.from('{"jsonrpc":"2.0","id":');
const COMMA_ITEM_START = Buffer.from(',{"jsonrpc":"2.0","id":');
const METHOD_KEY = Buffer.from(',"method":');
const PARAMS_KEY = Buffer.from(',"params":');
const RESULT_KEY = Buffer.from('{"jsonrpc":"2.0","result":');
const ERROR_KEY = Buffer.from('{"jsonrpc":"2.0","error":');
const ID_KEY = Buffer.from(',"id":');
const NULL = Buffer.from('null');

/** `{"jsonrpc":"2.0","result"|"error":<value>,"id":<id>}` from raw bytes. */
function reply(head: Buffer, value: Uint8Array, id: Uint8Array | null): Buffer {
  return Buffer.concat([head, value, ID_KEY, id ?? NULL, CLOSE_BRACE]);
}

/** A batch's answer: its items' replies in order (null: a notification, no reply), or null when none has one. */
export function batchReply(replies: readonly (Buffer | null)[]): Buffer | null {
  const out: Buffer[] = [];
  for (const r of replies) {
    if (r === null) continue;
    out.push(out.length === 0 ? OPEN_BRACKET : COMMA, r);
  }
  if (out.length === 0) return null;
  out.push(CLOSE_BRACKET);
  return Buffer.concat(out);
}
