/**
 * One `GET /quote` to the provider per call, over undici's keep-alive connection pool (as
 * engine/rpc/rpc-client.ts does). A call never throws: every way it can end is a PollOutcome, so
 * the poller decides what each means for the breaker, the uptime and the streams in one place.
 *
 * - The query is the configured URL's own query (e.g. `onlyDirectRoutes=true`) plus `inputMint`,
 *   `outputMint`, `amount` and `slippageBps` (ExactIn, the default swap mode); the quote engine's
 *   fallback (fallback-quoter.ts) adds `swapMode=ExactOut` and its route filter when it has them.
 * - The API key goes in `x-api-key` and nowhere else (never in the URL, never logged).
 * - The deadline covers the whole call, connect to last byte; undici's own phase timeouts are set to
 *   the same value as a backstop.
 */
import { Pool } from 'undici';

import { invalidArgument } from '../errors.js';
import { NO_ROUTE_ERROR_CODES, ProviderResponseError, parseErrorBody, parseQuoteResponse, type ProviderQuote } from './provider-response.js';

/** How a poll ended; `outcome` is also the `outcome` label of `external_quotes_requests_total`. */
export const PollOutcomeKind = {
  Ok: 'ok',
  /** 400 COULD_NOT_FIND_ANY_ROUTE / TOKEN_NOT_TRADABLE. */
  NoRoute: 'no_route',
  /** Any other 4xx except 429. */
  Rejected: 'rejected',
  RateLimited: 'rate_limited',
  ServerError: 'server_error',
  Timeout: 'timeout',
  ConnectionError: 'connection_error',
  /** 200 whose body is not the documented shape. */
  Malformed: 'malformed',
} as const;
export type PollOutcomeKind = (typeof PollOutcomeKind)[keyof typeof PollOutcomeKind];

export type PollOutcome =
  | { kind: typeof PollOutcomeKind.Ok; quote: ProviderQuote; durationMs: number }
  | { kind: typeof PollOutcomeKind.RateLimited; retryAfterMs: number; durationMs: number; message: string }
  | {
      kind: Exclude<PollOutcomeKind, typeof PollOutcomeKind.Ok | typeof PollOutcomeKind.RateLimited>;
      /** HTTP status when an answer came. */
      httpStatus?: number;
      message: string;
      durationMs: number;
    };

/** The pair a poll asks for. */
export interface PollRequest {
  inputMint: string;
  outputMint: string;
  /** The input (ExactIn) or the output (ExactOut). */
  amount: bigint;
  slippageBps: number;
  /** Sent only when ExactOut (ExactIn is the API's default). */
  swapMode?: 'ExactIn' | 'ExactOut';
  /** Sent only when true. */
  onlyDirectRoutes?: boolean;
  /** DEX labels (`dexes` / `excludeDexes`, comma separated); sent only when given. */
  dexes?: readonly string[];
  excludeDexes?: readonly string[];
}

export interface ProviderClientOptions {
  quoteUrl: string;
  apiKey?: string;
  timeoutMs: number;
  /** Pause after a 429 without a readable Retry-After. Default 1000 ms. */
  defaultRetryAfterMs?: number;
  /** Longest pause a Retry-After may ask for. Default 300,000 ms. */
  maxRetryAfterMs?: number;
  /** Wall clock (HTTP-date Retry-After). Default Date.now. */
  now?: () => number;
}

export const DEFAULT_RETRY_AFTER_MS = 1000;
export const MAX_RETRY_AFTER_MS = 300_000;

/**
 * `Retry-After` in ms: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); the default when absent or
 * unreadable; clamped to [0, max].
 */
export function retryAfterMs(header: string | string[] | undefined, now: number, fallback = DEFAULT_RETRY_AFTER_MS, max = MAX_RETRY_AFTER_MS): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return fallback;
  let ms: number;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return fallback;
    ms = at - now;
  }
  return Math.min(max, Math.max(0, Math.ceil(ms)));
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export class ProviderClient {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly baseQuery: URLSearchParams;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly defaultRetryAfterMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly now: () => number;
  /** Requests sent by this client. */
  requests = 0;

  constructor(options: ProviderClientOptions) {
    const url = new URL(options.quoteUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidArgument('quoteUrl', url.protocol, `quoteUrl is not an http(s) URL: ${url.protocol}//${url.host}`);
    this.timeoutMs = options.timeoutMs;
    this.defaultRetryAfterMs = options.defaultRetryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
    this.now = options.now ?? Date.now;
    this.path = url.pathname;
    this.baseQuery = url.searchParams;
    this.headers = { accept: 'application/json' };
    if (options.apiKey !== undefined && options.apiKey !== '') this.headers['x-api-key'] = options.apiKey;
    this.pool = new Pool(url.origin, {
      connections: 16,
      keepAliveTimeout: 30_000,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /** Closes the keep-alive connections (requests in flight finish first). Idempotent. */
  async close(): Promise<void> {
    if (this.pool.closed || this.pool.destroyed) return;
    await this.pool.close();
  }

  /** The request path with its query, as sent for `req`. */
  pathFor(req: PollRequest): string {
    const q = new URLSearchParams(this.baseQuery);
    q.set('inputMint', req.inputMint);
    q.set('outputMint', req.outputMint);
    q.set('amount', req.amount.toString());
    q.set('slippageBps', String(req.slippageBps));
    if (req.swapMode === 'ExactOut') q.set('swapMode', 'ExactOut');
    if (req.onlyDirectRoutes === true) q.set('onlyDirectRoutes', 'true');
    if (req.dexes !== undefined) q.set('dexes', req.dexes.join(','));
    if (req.excludeDexes !== undefined) q.set('excludeDexes', req.excludeDexes.join(','));
    return `${this.path}?${q.toString()}`;
  }

  /** One poll. Never rejects. */
  async fetchQuote(req: PollRequest): Promise<PollOutcome> {
    const started = performance.now();
    const elapsed = (): number => performance.now() - started;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    this.requests++;
    try {
      const res = await this.pool.request({ path: this.pathFor(req), method: 'GET', headers: this.headers, signal: controller.signal });
      const body = await res.body.text();
      const durationMs = elapsed();
      const status = res.statusCode;
      if (status === 200) {
        try {
          return { kind: PollOutcomeKind.Ok, quote: parseQuoteResponse(body, req), durationMs };
        } catch (err) {
          const message = err instanceof ProviderResponseError ? err.message : 'unreadable answer';
          return { kind: PollOutcomeKind.Malformed, httpStatus: status, message, durationMs };
        }
      }
      const error = parseErrorBody(body);
      const message = `HTTP ${status}${error.errorCode === '' ? '' : ` ${error.errorCode}`}${error.message === '' ? '' : `: ${error.message}`}`;
      if (status === 429) {
        return { kind: PollOutcomeKind.RateLimited, retryAfterMs: retryAfterMs(res.headers['retry-after'], this.now(), this.defaultRetryAfterMs, this.maxRetryAfterMs), durationMs, message };
      }
      if (status >= 500) return { kind: PollOutcomeKind.ServerError, httpStatus: status, message, durationMs };
      if (status === 400 && NO_ROUTE_ERROR_CODES.has(error.errorCode)) return { kind: PollOutcomeKind.NoRoute, httpStatus: status, message, durationMs };
      if (status >= 400) return { kind: PollOutcomeKind.Rejected, httpStatus: status, message, durationMs };
      // 1xx/3xx (redirects are not followed) and other 2xx: not the documented answer.
      return { kind: PollOutcomeKind.Malformed, httpStatus: status, message: `unexpected ${message}`, durationMs };
    } catch (err) {
      const durationMs = elapsed();
      const code = (err as { code?: unknown } | null)?.code;
      if (timedOut || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
        return { kind: PollOutcomeKind.Timeout, message: `no answer within ${this.timeoutMs} ms`, durationMs };
      }
      const why = typeof code === 'string' && CONNECTION_CODES.has(code) ? code : (err as Error).message;
      return { kind: PollOutcomeKind.ConnectionError, message: `cannot reach the provider: ${why}`, durationMs };
    } finally {
      clearTimeout(timer);
    }
  }
}
