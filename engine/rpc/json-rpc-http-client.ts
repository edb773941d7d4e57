import { Pool } from 'undici';

import { RpcFailure } from './rpc-errors.js';

/**
 * One JSON-RPC 2.0 endpoint over HTTP (undici pool): a call goes out, the reply text and its parsed
 * `result` come back, or an RpcFailure (kind rpc / timeout / http / network / malformed). The
 * platform's Solana client (chain-client.ts) and the block-engine client stand on it.
 */

export interface JsonRpcHttpClientOptions {
  url: string;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Sent with every request (a block engine's `x-jito-auth`, for example). */
  headers?: Readonly<Record<string, string>>;
  /** Pool size. Default 4. */
  connections?: number;
}

/** An RpcFailure of kind `rpc` also carries the error's `data` (a failed preflight's simulation). */
export type RpcFailureWithData = RpcFailure & { data?: unknown };

export class JsonRpcHttpClient {
  readonly url: string;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private id = 0;

  constructor(options: JsonRpcHttpClientOptions) {
    const u = new URL(options.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError(`not an http(s) RPC URL: ${options.url}`);
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.url = options.url;
    this.path = `${u.pathname}${u.search}`;
    this.headers = { 'content-type': 'application/json', ...options.headers };
    this.pool = new Pool(u.origin, {
      connections: options.connections ?? 4,
      connectTimeout: timeoutMs,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** One call; the reply text after checking it is a result (RpcFailure otherwise). */
  async call(method: string, params: unknown[]): Promise<{ text: string; result: unknown }> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params });
    let text: string;
    let httpStatus: number;
    try {
      const res = await this.pool.request({ path: this.path, method: 'POST', headers: this.headers, body });
      text = await res.body.text();
      httpStatus = res.statusCode;
    } catch (err) {
      if (err instanceof RpcFailure) throw err;
      const code = (err as { code?: string }).code ?? '';
      const kind = /TIMEOUT/.test(code) ? 'timeout' : 'network';
      throw new RpcFailure(kind, `${method}: ${(err as Error).message}${code ? ` (${code})` : ''}`, { endpoint: this.url, method, cause: err });
    }
    let reply: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } } | undefined;
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch (err) {
      if (httpStatus === 200) throw new RpcFailure('malformed', `${method}: reply is not JSON`, { endpoint: this.url, method, cause: err });
    }
    // A JSON-RPC error may come with an HTTP error status (a block engine answers 400): the error
    // object says more than the status, so it wins; any other non-200 reply is an http failure.
    const error = typeof reply === 'object' && reply !== null ? reply.error : undefined;
    if (error !== undefined && error !== null && typeof error === 'object') {
      const code = typeof error.code === 'number' ? error.code : undefined;
      const message = typeof error.message === 'string' ? error.message : 'unknown error';
      const failure: RpcFailureWithData = new RpcFailure('rpc', `${method}: ${message}${code === undefined ? '' : ` (${code})`}`, {
        endpoint: this.url,
        method,
        rpcCode: code,
        ...(httpStatus === 200 ? {} : { httpStatus }),
      });
      failure.data = error.data;
      throw failure;
    }
    if (httpStatus !== 200) throw new RpcFailure('http', `${method}: HTTP ${httpStatus}`, { endpoint: this.url, method, httpStatus });
    if (typeof reply !== 'object' || reply === null || !('result' in reply)) throw new RpcFailure('malformed', `${method}: no result`, { endpoint: this.url, method });
    return { text, result: reply.result };
  }

  /** An RpcFailure of kind malformed for `method` at this endpoint. */
  malformed(method: string, what: string): RpcFailure {
    return new RpcFailure('malformed', `${method}: ${what}`, { endpoint: this.url, method });
  }
}
