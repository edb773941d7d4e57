import { maskSecretsInText } from '../secret-mask.js';
import { invalidArgument } from '../errors.js';
import { rpcFailure, type RpcFailure } from './rpc-errors.js';
import { failsOver, openRpcEndpoint, type RpcEndpoint } from './rpc-endpoint.js';

/**
 * JSON-RPC 2.0 over HTTP (undici pools) to one endpoint or several: the one client every part of
 * the engine that speaks to the chain stands on (the scanner's RpcClient, the platform's
 * ChainClient, the block-engine client). A call goes out and comes back as the reply's bytes
 * (`callBytes`, for readers that take the bytes as they are) or as its text and parsed `result`
 * (`call`), or as an RpcFailure (kind rpc / timeout / http / network / malformed). Endpoints are
 * opened as rpc-endpoint.ts opens them: credentials as Basic auth, query keys kept, masked in every
 * error.
 *
 * Several endpoints: a call that gets no answer from one (network, timeout, HTTP 429 or 5xx) goes
 * to the next in turn. Where a call starts: at the last endpoint that answered (the default: a
 * client that follows one healthy node), or, with `spread`, at the next endpoint in round-robin
 * order (a reader that shares its load over every node, as the scanner does).
 */

export interface JsonRpcHttpClientOptions {
  /** One endpoint, or several (`urls`): a call that gets no answer from one goes to the next. */
  url?: string;
  urls?: readonly string[];
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Sent with every request (a block engine's `x-jito-auth`, for example). */
  headers?: Readonly<Record<string, string>>;
  /** Pool size per endpoint. Default 4. */
  connections?: number;
  /** Each call starts at the next endpoint in turn instead of the last that answered. */
  spread?: boolean;
}


/** Per call. */
export interface RpcCallOptions {
  /**
   * Aborts the request: its connection is closed (the node stops sending), no other endpoint is
   * tried, and the call rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/** A 200 reply as it came: its bytes, and the endpoint that sent it (masked). */
export interface RpcReplyBytes {
  readonly endpoint: string;
  readonly body: Buffer;
}

interface JsonRpcReply {
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown } | null;
}

export class JsonRpcHttpClient {
  /** Per request (connect, headers and body, each). */
  readonly timeoutMs: number;
  /** HTTP requests sent by this client (failovers count each attempt). */
  requests = 0;
  /** The endpoint in use, masked (never the URL with its credentials). */
  get url(): string {
    return this.endpoints[this.current]!.name;
  }
  private readonly endpoints: RpcEndpoint[];
  private readonly spread: boolean;
  /** The endpoint calls go to first: the last one that answered, or (spread) the next in turn. */
  private current = 0;
  private id = 0;

  constructor(options: JsonRpcHttpClientOptions) {
    const urls = options.urls ?? (options.url === undefined ? [] : [options.url]);
    if (urls.length === 0) throw invalidArgument('urls', 0, 'a JSON-RPC client needs at least one endpoint');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.spread = options.spread === true;
    const headers = options.headers === undefined ? {} : { headers: options.headers };
    this.endpoints = urls.map((u) => openRpcEndpoint(u, { timeoutMs: this.timeoutMs, connections: options.connections ?? 4, ...headers }));
  }

  /** Closes the keep-alive connections (requests in flight finish first). */
  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => e.pool.close()));
  }

  /**
   * One call; its `result` and the reply's text (for u64 fields a JSON.parse would round). A
   * JSON-RPC error is an RpcFailure of kind rpc (with the error's `data`), whatever the HTTP status.
   */
  async call(method: string, params: unknown[], options?: RpcCallOptions): Promise<{ text: string; result: unknown }> {
    const { endpoint, body } = await this.callBytes(method, params, options);
    const text = body.toString('utf8');
    let reply: JsonRpcReply;
    try {
      reply = JSON.parse(text) as JsonRpcReply;
    } catch (err) {
      throw rpcFailure('malformed', `${method}: reply is not JSON`, { endpoint, method, cause: err });
    }
    if (typeof reply !== 'object' || reply === null) throw rpcFailure('malformed', `${method}: no result`, { endpoint, method });
    const failure = rpcErrorOf(reply, method, endpoint, 200);
    if (failure !== undefined) throw failure;
    if (!('result' in reply)) throw rpcFailure('malformed', `${method}: no result`, { endpoint, method });
    return { text, result: reply.result };
  }

  /**
   * One call; the 200 reply's bytes as they came (a JSON-RPC error inside them is the caller's to
   * read). Another status is an RpcFailure: of kind rpc when the body holds a JSON-RPC error (a
   * block engine answers 400 with one: the error says more than the status), else http.
   */
  async callBytes(method: string, params: unknown, options?: RpcCallOptions): Promise<RpcReplyBytes> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params });
    const count = this.endpoints.length;
    const first = this.current;
    if (this.spread) this.current = (first + 1) % count;
    for (let k = 0; ; k++) {
      const i = (first + k) % count;
      try {
        const reply = await this.post(this.endpoints[i]!, method, body, signal);
        if (!this.spread) this.current = i;
        return reply;
      } catch (err) {
        if (k + 1 >= count || signal?.aborted === true || !failsOver(err)) throw err;
      }
    }
  }

  /** An RpcFailure of kind malformed for `method` at this endpoint. */
  malformed(method: string, what: string): RpcFailure {
    return rpcFailure('malformed', `${method}: ${what}`, { endpoint: this.url, method });
  }

  private async post(endpoint: RpcEndpoint, method: string, body: string, signal: AbortSignal | undefined): Promise<RpcReplyBytes> {
    const at = endpoint.name;
    this.requests++;
    let bytes: Uint8Array;
    let status: number;
    try {
      const res = await endpoint.pool.request({ path: endpoint.path, method: 'POST', headers: endpoint.headers, body, ...(signal === undefined ? {} : { signal }) });
      bytes = await res.body.bytes();
      status = res.statusCode;
    } catch (err) {
      // Aborted by the caller (its deadline, its close): the request is gone, the reason is theirs.
      if (signal?.aborted === true) throw signal.reason as Error;
      const code = (err as { code?: unknown } | null)?.code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        throw rpcFailure('timeout', `${method}: no answer within ${this.timeoutMs} ms`, { endpoint: at, method, cause: err });
      }
      const suffix = typeof code === 'string' && code !== '' ? ` (${code})` : '';
      throw rpcFailure('network', `${method}: ${maskSecretsInText((err as Error).message)}${suffix} at ${at}`, { endpoint: at, method, cause: err });
    }
    const reply = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (status === 200) return { endpoint: at, body: reply };
    let parsed: unknown;
    try {
      parsed = JSON.parse(reply.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const failure = typeof parsed === 'object' && parsed !== null ? rpcErrorOf(parsed as JsonRpcReply, method, at, status) : undefined;
    throw failure ?? rpcFailure('http', `${method}: HTTP ${status} at ${at}`, { endpoint: at, method, httpStatus: status });
  }
}

/** The reply's JSON-RPC error as an RpcFailure of kind rpc (carrying its `data`), or undefined. */
function rpcErrorOf(reply: JsonRpcReply, method: string, endpoint: string, httpStatus: number): RpcFailure | undefined {
  const error = reply.error;
  if (error === undefined || error === null || typeof error !== 'object') return undefined;
  const code = typeof error.code === 'number' ? error.code : undefined;
  const message = typeof error.message === 'string' ? error.message : 'unknown error';
  return rpcFailure('rpc', `${method}: ${message}${code === undefined ? '' : ` (${code})`}`, {
    endpoint,
    method,
    rpcCode: code,
    data: error.data,
    ...(httpStatus === 200 ? {} : { httpStatus }),
  });
}
