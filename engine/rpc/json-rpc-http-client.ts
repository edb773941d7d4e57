import { maskSecretsInText } from '../secret-mask.js';
import { RpcFailure } from './rpc-errors.js';
import { failsOver, openRpcEndpoint, type RpcEndpoint } from './rpc-endpoint.js';

/**
 * JSON-RPC 2.0 over HTTP (undici pools) to one endpoint or several with failover: a call goes out,
 * the reply text and its parsed `result` come back, or an RpcFailure (kind rpc / timeout / http /
 * network / malformed). The platform's Solana client (chain-client.ts) and the block-engine client
 * stand on it; endpoints are opened as every chain client opens them (rpc-endpoint.ts: credentials
 * as Basic auth, query keys kept, masked in every error).
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
}

/** An RpcFailure of kind `rpc` also carries the error's `data` (a failed preflight's simulation). */
export type RpcFailureWithData = RpcFailure & { data?: unknown };

export class JsonRpcHttpClient {
  /** The endpoint in use, masked (never the URL with its credentials). */
  get url(): string {
    return this.endpoints[this.current]!.name;
  }
  private readonly endpoints: RpcEndpoint[];
  /** The endpoint calls go to first: the last one that answered. */
  private current = 0;
  private id = 0;

  constructor(options: JsonRpcHttpClientOptions) {
    const urls = options.urls ?? (options.url === undefined ? [] : [options.url]);
    if (urls.length === 0) throw new RangeError('a JSON-RPC client needs at least one endpoint');
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.endpoints = urls.map((u) => openRpcEndpoint(u, { timeoutMs, connections: options.connections ?? 4, ...(options.headers === undefined ? {} : { headers: options.headers }) }));
  }

  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => e.pool.close()));
  }

  /**
   * One call, at the endpoint in use; one that gets no answer there (network, timeout, HTTP 429 or
   * 5xx) goes to the next endpoints in turn, and the one that answers is used from then on. The
   * failure of the last endpoint tried is thrown when none answers.
   */
  async call(method: string, params: unknown[]): Promise<{ text: string; result: unknown }> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params });
    const first = this.current;
    for (let k = 0; ; k++) {
      const i = (first + k) % this.endpoints.length;
      try {
        const answer = await this.callAt(this.endpoints[i]!, method, body);
        this.current = i;
        return answer;
      } catch (err) {
        if (k + 1 >= this.endpoints.length || !failsOver(err)) throw err;
      }
    }
  }

  private async callAt(endpoint: RpcEndpoint, method: string, body: string): Promise<{ text: string; result: unknown }> {
    const at = endpoint.name;
    let text: string;
    let httpStatus: number;
    try {
      const res = await endpoint.pool.request({ path: endpoint.path, method: 'POST', headers: endpoint.headers, body });
      text = await res.body.text();
      httpStatus = res.statusCode;
    } catch (err) {
      if (err instanceof RpcFailure) throw err;
      const code = (err as { code?: string }).code ?? '';
      const kind = /TIMEOUT/.test(code) ? 'timeout' : 'network';
      throw new RpcFailure(kind, `${method}: ${maskSecretsInText((err as Error).message)}${code ? ` (${code})` : ''} at ${at}`, { endpoint: at, method, cause: err });
    }
    let reply: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } } | undefined;
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch (err) {
      if (httpStatus === 200) throw new RpcFailure('malformed', `${method}: reply is not JSON`, { endpoint: at, method, cause: err });
    }
    // A JSON-RPC error may come with an HTTP error status (a block engine answers 400): the error
    // object says more than the status, so it wins; any other non-200 reply is an http failure.
    const error = typeof reply === 'object' && reply !== null ? reply.error : undefined;
    if (error !== undefined && error !== null && typeof error === 'object') {
      const code = typeof error.code === 'number' ? error.code : undefined;
      const message = typeof error.message === 'string' ? error.message : 'unknown error';
      const failure: RpcFailureWithData = new RpcFailure('rpc', `${method}: ${message}${code === undefined ? '' : ` (${code})`}`, {
        endpoint: at,
        method,
        rpcCode: code,
        ...(httpStatus === 200 ? {} : { httpStatus }),
      });
      failure.data = error.data;
      throw failure;
    }
    if (httpStatus !== 200) throw new RpcFailure('http', `${method}: HTTP ${httpStatus} at ${at}`, { endpoint: at, method, httpStatus });
    if (typeof reply !== 'object' || reply === null || !('result' in reply)) throw new RpcFailure('malformed', `${method}: no result`, { endpoint: at, method });
    return { text, result: reply.result };
  }

  /** An RpcFailure of kind malformed for `method` at this endpoint. */
  malformed(method: string, what: string): RpcFailure {
    return new RpcFailure('malformed', `${method}: ${what}`, { endpoint: this.url, method });
  }
}
