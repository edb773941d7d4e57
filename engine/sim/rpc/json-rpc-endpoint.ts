import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Logger } from '../../obs/index.js';
import { isRpcError, RpcErrorCode } from '../chain-backend.js';
import type { FaultInjector, RpcFault } from '../faults.js';
import { writeId, writeJson } from './json-text.js';

/**
 * JSON-RPC 2.0 requests to responses, as jsonrpc-core (the node's library) handles them: single
 * calls and batches, notifications (no `id`: never answered, and never run, since the node
 * registers no notification handlers), `Parse error` for bad JSON,
 * `Invalid request` for calls of the wrong shape, `Method not found`, and injected faults.
 * Transport-free: the HTTP and WebSocket servers hand it text and send back what it returns.
 */

/** Answers one call: the `result` as JSON text. Throws RpcError for an error response. */
export type RpcMethodHandler<T> = (target: T, params: unknown) => string;

/** The text to send for a request: null when nothing is answered (notifications only). */
export type RpcReply = string | null | Promise<string | null>;

export interface JsonRpcEndpointOptions {
  /** Consulted before each call of a known method: added latency, then an injected error. */
  faults?: FaultInjector;
  logger?: Logger;
}

const PARSE_ERROR = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}';
const CALL_KEYS = new Set(['jsonrpc', 'method', 'params', 'id']);

export function resultText(result: string, id: unknown): string {
  return '{"jsonrpc":"2.0","result":' + result + ',"id":' + writeId(id) + '}';
}

export function errorText(code: number, message: string, data: unknown, id: unknown): string {
  const dataText = data === undefined ? '' : ',"data":' + writeJson(data, true);
  return (
    '{"jsonrpc":"2.0","error":{"code":' + code + ',"message":' + JSON.stringify(message) + dataText + '},"id":' + writeId(id) + '}'
  );
}

/** A valid `Id`: null, a string or a u64. */
function isId(id: unknown): boolean {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id) && id >= 0);
}

export class JsonRpcEndpoint<T> {
  private readonly faults: FaultInjector | undefined;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly methods: ReadonlyMap<string, RpcMethodHandler<T>>,
    options: JsonRpcEndpointOptions = {},
  ) {
    this.faults = options.faults;
    this.logger = options.logger;
  }

  handle(target: T, text: string): RpcReply {
    let request: unknown;
    try {
      request = JSON.parse(text);
    } catch {
      return PARSE_ERROR;
    }
    return Array.isArray(request) ? this.answerBatch(target, request) : this.answer(target, request);
  }

  private answerBatch(target: T, calls: unknown[]): RpcReply {
    const replies: (string | null | Promise<string | null>)[] = new Array(calls.length);
    let pending = false;
    for (let i = 0; i < calls.length; i++) {
      const reply = this.answer(target, calls[i]);
      if (reply !== null && typeof reply === 'object') pending = true;
      replies[i] = reply;
    }
    if (!pending) return joinBatch(replies as (string | null)[]);
    return Promise.all(replies).then(joinBatch);
  }

  /** One call: its reply text, null for a notification, or a promise when a fault delays it. */
  answer(target: T, call: unknown): RpcReply {
    if (call === null || typeof call !== 'object' || Array.isArray(call)) return invalidRequest(null);
    const c = call as Record<string, unknown>;
    const hasId = 'id' in c;
    const id = c.id;
    for (const key in c) {
      if (!CALL_KEYS.has(key)) return invalidRequest(id);
    }
    const method = c.method;
    const params = c.params;
    if (
      typeof method !== 'string' ||
      (c.jsonrpc !== undefined && c.jsonrpc !== '2.0') ||
      (params !== undefined && params !== null && typeof params !== 'object') ||
      (hasId && !isId(id))
    ) {
      return invalidRequest(id);
    }
    if (!hasId) return null;
    if (c.jsonrpc === undefined) {
      return errorText(RpcErrorCode.InvalidRequest, 'Unsupported JSON-RPC protocol version', undefined, id);
    }
    const handler = this.methods.get(method);
    if (handler === undefined) return errorText(RpcErrorCode.MethodNotFound, 'Method not found', undefined, id);
    const fault = this.faults?.rpcFault(method);
    if (fault !== undefined) {
      if (fault.latencyMs > 0) return this.answerLate(target, handler, method, params, id, fault);
      if (this.faults!.happens(fault.errorRate)) return errorText(fault.errorCode, fault.errorMessage, undefined, id);
    }
    return this.run(target, handler, method, params, id);
  }

  private async answerLate(
    target: T,
    handler: RpcMethodHandler<T>,
    method: string,
    params: unknown,
    id: unknown,
    fault: RpcFault,
  ): Promise<string> {
    // Timers may fire a little early; the injected latency is a floor.
    const until = performance.now() + fault.latencyMs;
    for (let left = fault.latencyMs; left > 0; left = until - performance.now()) await sleep(Math.ceil(left));
    if (this.faults!.happens(fault.errorRate)) return errorText(fault.errorCode, fault.errorMessage, undefined, id);
    return this.run(target, handler, method, params, id);
  }

  private run(target: T, handler: RpcMethodHandler<T>, method: string, params: unknown, id: unknown): string {
    try {
      return resultText(handler(target, params), id);
    } catch (err) {
      if (isRpcError(err)) return errorText(err.context.rpcCode, err.message, err.context.data, id);
      this.logger?.error({ err, method }, 'json-rpc handler failed');
      return errorText(RpcErrorCode.Internal, 'Internal error', undefined, id);
    }
  }
}

function invalidRequest(id: unknown): string {
  return errorText(RpcErrorCode.InvalidRequest, 'Invalid request', undefined, isId(id) ? id : null);
}

function joinBatch(replies: (string | null)[]): string | null {
  let out = '';
  for (const reply of replies) {
    if (reply === null) continue;
    out += out === '' ? '[' + reply : ',' + reply;
  }
  return out === '' ? null : out + ']';
}
