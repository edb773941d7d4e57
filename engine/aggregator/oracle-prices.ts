/**
 * The aggregator's oracle price source (contracts.ts `OraclePriceSource`; docs/architecture.md §3: the
 * oracle factor compares a quote with "the simulator's reference price, or a configured price
 * feed"). It polls a Price API v3 endpoint (the simulator's `/price/v3`, engine/sim/price-api, or
 * the real service) for the tracked mints and keeps each mint's USD price and decimals.
 *
 * - Polling: every `intervalMs` (default 1 s), the tracked mints in batches of at most 50 ids (the
 *   API's limit), batches in parallel; the next poll is scheduled when the last one ends, so a slow
 *   feed never stacks requests. Newly tracked mints trigger a poll at once.
 * - A mint's price is known for `maxAgeMs` (default 30 s) after the poll that last carried it; an
 *   older one counts as unknown, so a dead feed turns the oracle factor off instead of scoring
 *   quotes against yesterday's price.
 * - Failures (HTTP status, timeout, network, malformed body) are counted by kind and logged at most
 *   once per kind every 10 s; nothing is thrown.
 *
 * pairPrice(in, out): price = usdIn / usdOut (UI units of out per UI unit of in), atomPrice =
 * price × 10^(outDecimals − inDecimals) (base units per base unit), updatedAtMs = the older fetch.
 */
import { Pool } from 'undici';

import type { Logger } from '../obs/index.js';
import { LogThrottle } from '../obs/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import type { OraclePriceSource, PairOraclePrice } from './contracts.js';

export const DEFAULT_ORACLE_INTERVAL_MS = 1_000;
export const DEFAULT_ORACLE_MAX_AGE_MS = 30_000;
export const DEFAULT_ORACLE_TIMEOUT_MS = 2_000;
/** Price API v3: ids per request. */
export const ORACLE_MAX_IDS_PER_REQUEST = 50;
/** A mint nobody has asked about for this long is no longer polled. */
export const ORACLE_MINT_IDLE_MS = 10 * 60_000;
/** At most this many mints are polled; past it the least recently asked about is dropped. */
export const ORACLE_MAX_TRACKED_MINTS = 2_000;

export const OracleFailure = { Http: 'http', Timeout: 'timeout', Network: 'network', Malformed: 'malformed' } as const;
export type OracleFailure = (typeof OracleFailure)[keyof typeof OracleFailure];

export interface OraclePricesOptions {
  /** The Price API v3 URL, e.g. `http://127.0.0.1:8890/price/v3` or `https://lite-api.jup.ag/price/v3`. */
  url: string;
  logger: Logger;
  /** Poll period, ms. Default 1000. */
  intervalMs?: number;
  /** A price older than this is unknown, ms. Default 30,000. */
  maxAgeMs?: number;
  /** Deadline of one request, connect to last byte, ms. Default 2000. */
  timeoutMs?: number;
  /** Sent as `x-api-key` (the real API's key header) when set. */
  apiKey?: string;
}

export interface OraclePricesStats {
  tracked: number;
  /** Mints with a price younger than maxAgeMs. */
  fresh: number;
  /** Requests answered with a usable body. */
  polls: number;
  errors: number;
  errorsByKind: Record<OracleFailure, number>;
}

interface MintPrice {
  usdPrice: number;
  decimals: number;
  fetchedAtMs: number;
}

class OracleRequestFailure extends TpError<typeof ErrorCode.Unavailable> {
  constructor(
    readonly kind: OracleFailure,
    message: string,
  ) {
    super(ErrorCode.Unavailable, message, { context: { oracle: kind } });
  }
}

export class OraclePrices implements OraclePriceSource {
  private readonly log: Logger;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly intervalMs: number;
  private readonly maxAgeMs: number;
  private readonly timeoutMs: number;
  private readonly throttle = new LogThrottle(10_000);
  /** Mints polled, by when they were last asked about (Unix ms), least recent first. */
  private readonly tracked = new Map<string, number>();
  private readonly prices = new Map<string, MintPrice>();
  private readonly counters = { polls: 0, errors: 0, errorsByKind: { http: 0, timeout: 0, network: 0, malformed: 0 } as Record<OracleFailure, number> };
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** A track() during a poll asks for another poll right after it. */
  private pollAgain = false;
  private closed = false;

  constructor(options: OraclePricesOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidArgument('url', url.protocol, `oracle price URL must be http(s): ${url.protocol}//${url.host}`);
    this.log = options.logger;
    this.intervalMs = options.intervalMs ?? DEFAULT_ORACLE_INTERVAL_MS;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_ORACLE_MAX_AGE_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_ORACLE_TIMEOUT_MS;
    this.path = url.pathname;
    this.headers = { accept: 'application/json', ...(options.apiKey === undefined ? {} : { 'x-api-key': options.apiKey }) };
    this.pool = new Pool(url.origin, {
      connections: 4,
      keepAliveTimeout: 30_000,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  track(mints: readonly string[]): void {
    if (this.closed) return;
    const now = Date.now();
    let added = false;
    for (const mint of mints) {
      // Re-inserted, so the map stays ordered from least to most recently asked about.
      if (!this.tracked.delete(mint)) added = true;
      this.tracked.set(mint, now);
    }
    while (this.tracked.size > ORACLE_MAX_TRACKED_MINTS) {
      const oldest = this.tracked.keys().next().value!;
      this.tracked.delete(oldest);
      this.prices.delete(oldest);
    }
    if (!added) return;
    if (this.polling !== undefined) this.pollAgain = true;
    else this.schedule(0);
  }

  pairPrice(inputMint: string, outputMint: string): PairOraclePrice | undefined {
    const now = Date.now();
    const input = this.fresh(inputMint, now);
    const output = this.fresh(outputMint, now);
    if (input === undefined || output === undefined) return undefined;
    const price = input.usdPrice / output.usdPrice;
    return {
      price,
      atomPrice: price * 10 ** (output.decimals - input.decimals),
      inputDecimals: input.decimals,
      outputDecimals: output.decimals,
      updatedAtMs: Math.min(input.fetchedAtMs, output.fetchedAtMs),
    };
  }

  stats(): OraclePricesStats {
    const now = Date.now();
    let fresh = 0;
    for (const mint of this.tracked.keys()) if (this.fresh(mint, now) !== undefined) fresh++;
    return { tracked: this.tracked.size, fresh, polls: this.counters.polls, errors: this.counters.errors, errorsByKind: { ...this.counters.errorsByKind } };
  }

  /** Stops polling and drops the connections (a request in flight is aborted, not counted). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.pool.destroy().catch(() => undefined);
    await this.polling;
  }

  private fresh(mint: string, now: number): MintPrice | undefined {
    const p = this.prices.get(mint);
    return p === undefined || now - p.fetchedAtMs > this.maxAgeMs ? undefined : p;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.polling = this.pollOnce().finally(() => {
        this.polling = undefined;
        const again = this.pollAgain;
        this.pollAgain = false;
        this.schedule(again ? 0 : this.intervalMs);
      });
    }, delayMs);
    // Polling alone must not keep a process alive whose owner forgot close().
    this.timer.unref();
  }

  private async pollOnce(): Promise<void> {
    const idleBefore = Date.now() - ORACLE_MINT_IDLE_MS;
    for (const [mint, wantedAt] of this.tracked) {
      if (wantedAt >= idleBefore) break; // least recent first: the rest are newer
      this.tracked.delete(mint);
      this.prices.delete(mint);
    }
    const mints = [...this.tracked.keys()];
    const batches: string[][] = [];
    for (let i = 0; i < mints.length; i += ORACLE_MAX_IDS_PER_REQUEST) batches.push(mints.slice(i, i + ORACLE_MAX_IDS_PER_REQUEST));
    await Promise.all(batches.map((batch) => this.fetchBatch(batch)));
  }

  private async fetchBatch(mints: readonly string[]): Promise<void> {
    try {
      const body = await this.request(mints);
      const fetchedAtMs = Date.now();
      this.counters.polls++;
      for (const mint of mints) {
        const entry = body[mint];
        if (entry === undefined) continue; // the API omits mints it has no price for
        const parsed = parseEntry(entry);
        if (parsed === undefined) {
          this.fail(new OracleRequestFailure(OracleFailure.Malformed, `entry for ${mint} lacks a positive usdPrice or integer decimals`));
          continue;
        }
        this.prices.set(mint, { ...parsed, fetchedAtMs });
      }
    } catch (err) {
      if (this.closed) return;
      this.fail(err instanceof OracleRequestFailure ? err : new OracleRequestFailure(OracleFailure.Network, String(err)));
    }
  }

  private async request(mints: readonly string[]): Promise<Record<string, unknown>> {
    let text: string;
    let status: number;
    try {
      // One deadline over the whole exchange: a feed that drips its body cannot hold the poll open.
      const signal = AbortSignal.timeout(this.timeoutMs);
      const res = await this.pool.request({ path: `${this.path}?ids=${mints.map(encodeURIComponent).join(',')}`, method: 'GET', headers: this.headers, signal });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      const name = (err as { name?: unknown } | null)?.name;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || name === 'TimeoutError' || name === 'AbortError') {
        throw new OracleRequestFailure(OracleFailure.Timeout, `no answer within ${this.timeoutMs} ms`);
      }
      throw new OracleRequestFailure(OracleFailure.Network, (err as Error).message);
    }
    if (status !== 200) throw new OracleRequestFailure(OracleFailure.Http, `HTTP ${status}: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new OracleRequestFailure(OracleFailure.Malformed, 'body is not JSON');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new OracleRequestFailure(OracleFailure.Malformed, 'body is not an object keyed by mint');
    return body as Record<string, unknown>;
  }

  private fail(err: OracleRequestFailure): void {
    this.counters.errors++;
    this.counters.errorsByKind[err.kind]++;
    const suppressed = this.throttle.take(err.kind);
    if (suppressed >= 0) this.log.warn({ kind: err.kind, err: err.message, suppressed }, 'oracle prices: poll failed');
  }
}

function parseEntry(entry: unknown): { usdPrice: number; decimals: number } | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const { usdPrice, decimals } = entry as { usdPrice?: unknown; decimals?: unknown };
  if (typeof usdPrice !== 'number' || !Number.isFinite(usdPrice) || usdPrice <= 0) return undefined;
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255) return undefined;
  return { usdPrice, decimals };
}
