import { performance } from 'node:perf_hooks';

import { Pool, type Dispatcher } from 'undici';

import { basicAuthHeader } from '../rpc/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { DeadlineQueue, type Deadline } from './deadline-queue.js';

/**
 * One upstream Solana RPC endpoint: its keep-alive connection pool (undici), its health as the
 * health checker and the request path see it, and its counters.
 *
 * `post()` makes one HTTP attempt and never rejects. Its answer says whether the request left the
 * proxy: undici hands a request to a connection (`onRequestStart`) right before writing it, so a
 * failure before that point (connection refused, DNS, connect timeout, a deadline passed while the
 * request was still queued) proves that the endpoint never saw it; after it, the endpoint may
 * have. The write path relies on this to never deliver a write twice. undici itself never resends
 * a POST: it is not idempotent, so it is neither pipelined nor replayed after a socket error.
 */

export const EndpointState = {
  /** Not checked yet: in rotation until the first check says otherwise. */
  Unknown: 'unknown',
  Up: 'up',
  /** Failing: its checks fail or time out, or too many requests in a row failed. */
  Down: 'down',
  /** Answering, but more than max_slot_lag slots behind the best endpoint. */
  Lagging: 'lagging',
} as const;
export type EndpointState = (typeof EndpointState)[keyof typeof EndpointState];

export interface UpstreamAnswer {
  ok: true;
  status: number;
  body: Buffer;
  /** The answer's content type, when it named one. */
  contentType: string | undefined;
  ms: number;
}

export interface UpstreamFailure {
  ok: false;
  kind: 'connect' | 'network' | 'timeout';
  /** False when the request provably never left the proxy. */
  sent: boolean;
  message: string;
  ms: number;
}

export type UpstreamResult = UpstreamAnswer | UpstreamFailure;

/**
 * Answers are relayed as they come, so they must come uncompressed: without Accept-Encoding a
 * server may pick any coding.
 */
const JSON_HEADERS = { 'content-type': 'application/json', 'accept-encoding': 'identity' };

const CONTENT_TYPE = 'content-type';

/**
 * One attempt, as undici's low-level handler in its raw form (onConnect, onHeaders with the raw
 * header list, onData, onComplete): no streams, no parsed header object, the body gathered as
 * chunks. Its deadline waits in the endpoint's DeadlineQueue, not in a timer of its own.
 */
class Attempt implements Dispatcher.DispatchHandler, Deadline {
  private readonly started0 = performance.now();
  private abort: ((err?: Error) => void) | null = null;
  private sent = false;
  private settled = false;
  private status = 0;
  private contentType: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  deadlineAt = 0;
  prevDeadline: Deadline | null = null;
  nextDeadline: Deadline | null = null;

  constructor(
    private readonly endpoint: UpstreamEndpoint,
    private readonly deadlines: DeadlineQueue,
    private readonly resolve: (result: UpstreamResult) => void,
  ) {
    deadlines.add(this, this.started0);
  }

  onConnect(abort: (err?: Error) => void): void {
    // The deadline passed while the request waited for a connection: abort before it is written.
    if (this.settled) {
      abort(new TpError(ErrorCode.Deadline, 'deadline passed while queued'));
      return;
    }
    this.abort = abort;
    this.sent = true;
  }

  onHeaders(statusCode: number, headers: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    // Raw headers: name, value, name, value ...; the first Content-Type wins, as before.
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = headers[i]!;
      if (name.length === CONTENT_TYPE.length && name.toString('latin1').toLowerCase() === CONTENT_TYPE) {
        this.contentType = headers[i + 1]!.toString('latin1');
        break;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.remove(this);
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.finish({ ok: true, status: this.status, body, contentType: this.contentType, ms: performance.now() - this.started0 });
  }

  onError(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.remove(this);
    const code = (err as { code?: string }).code ?? '';
    this.finish({
      ok: false,
      kind: this.sent ? 'network' : 'connect',
      sent: this.sent,
      message: code !== '' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message,
      ms: performance.now() - this.started0,
    });
  }

  /** The deadline passed (DeadlineQueue). */
  expire(): void {
    if (this.settled) return;
    this.settled = true;
    this.finish({ ok: false, kind: 'timeout', sent: this.sent, message: `no answer within ${this.deadlines.lengthMs} ms`, ms: performance.now() - this.started0 });
    // Frees the connection (an answer may still be coming on it); a queued request is aborted in onConnect.
    this.abort?.(new TpError(ErrorCode.Deadline, `no answer within ${this.deadlines.lengthMs} ms`));
  }

  private finish(result: UpstreamResult): void {
    this.endpoint.inFlight--;
    this.resolve(result);
  }
}

export interface UpstreamEndpointOptions {
  index: number;
  name: string;
  url: string;
  wsUrl: string;
  maxConnections: number;
}

export class UpstreamEndpoint {
  readonly index: number;
  /** This endpoint's bit in a set of endpoints (a request's tried endpoints). */
  readonly bit: number;
  /** host:port, what logs, metrics and /rpc/health show (never the URL: it may carry an API key). */
  readonly name: string;
  readonly url: string;
  readonly wsUrl: string;
  private readonly pool: Pool;
  /** The health checks' own two connections: a probe never waits behind the traffic's queue. */
  private readonly probes: Pool;
  private readonly path: string;

  state: EndpointState = EndpointState.Unknown;
  /** Why it is out of rotation, or what the last check said. */
  reason: string | null = null;
  slot: bigint | null = null;
  slotLag: number | null = null;
  /** Round trip of the last health check's getSlot. */
  latencyMs: number | null = null;
  lastCheckUnixMs: number | null = null;
  lastChangeUnixMs: number = Date.now();
  /** Failed requests in a row (network error, timeout, 5xx), reset by any other answer. */
  consecutiveFailures = 0;
  requests = 0;
  inFlight = 0;
  readonly errors: Record<'connect' | 'network' | 'timeout' | 'http' | 'rpc', number> = { connect: 0, network: 0, timeout: 0, http: 0, rpc: 0 };

  private readonly headers: Record<string, string>;
  /** The attempts' deadlines: the queue of the first length asked for, and any others by length. */
  private deadlines: DeadlineQueue | null = null;
  private readonly otherDeadlines = new Map<number, DeadlineQueue>();

  constructor(options: UpstreamEndpointOptions) {
    this.index = options.index;
    this.bit = 2 ** options.index;
    this.name = options.name;
    this.url = options.url;
    this.wsUrl = options.wsUrl;
    const url = new URL(options.url);
    this.path = `${url.pathname}${url.search}`;
    // The pools are keyed by the origin, which drops the URL's user info: send it as Basic auth.
    this.headers = { ...JSON_HEADERS, ...basicAuthHeader(url) };
    // Attempts have their own deadline (Attempt, DeadlineQueue), so undici's own timeouts are off. An idle
    // connection is dropped after 4 s (undici's default) unless the server's Keep-Alive header says
    // how long it keeps one: servers that close idle connections silently (uWS after 10 s) would
    // otherwise race our next request on a socket they are closing, taking a healthy endpoint out
    // on ECONNRESET and turning a write into an unknown outcome.
    const common = { pipelining: 1, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 };
    this.pool = new Pool(url.origin, { ...common, connections: options.maxConnections });
    this.probes = new Pool(url.origin, { ...common, connections: 2 });
  }

  /** In rotation: up, or not checked yet. */
  get inRotation(): boolean {
    return this.state === EndpointState.Up || this.state === EndpointState.Unknown;
  }

  /** One POST of a JSON body with a deadline; never rejects. */
  post(body: Buffer | string, timeoutMs: number): Promise<UpstreamResult> {
    return this.dispatch(this.pool, body, timeoutMs);
  }

  /** A health check's POST, on the checks' own connections: a busy pool does not make a healthy endpoint look down. */
  probe(body: Buffer | string, timeoutMs: number): Promise<UpstreamResult> {
    return this.dispatch(this.probes, body, timeoutMs);
  }

  private dispatch(pool: Pool, body: Buffer | string, timeoutMs: number): Promise<UpstreamResult> {
    this.inFlight++;
    return new Promise<UpstreamResult>((resolve) => {
      const attempt = new Attempt(this, this.deadlinesOf(timeoutMs), resolve);
      try {
        pool.dispatch({ path: this.path, method: 'POST', headers: this.headers, body }, attempt);
      } catch (err) {
        // A closed or destroyed pool throws synchronously.
        attempt.onError(err as Error);
      }
    });
  }

  /** The queue of deadlines `timeoutMs` long (one in practice: request_timeout). */
  private deadlinesOf(timeoutMs: number): DeadlineQueue {
    if (this.deadlines !== null && this.deadlines.lengthMs === timeoutMs) return this.deadlines;
    let q = this.otherDeadlines.get(timeoutMs);
    if (q === undefined) {
      q = new DeadlineQueue(timeoutMs);
      if (this.deadlines === null) this.deadlines = q;
      else this.otherDeadlines.set(timeoutMs, q);
    }
    return q;
  }

  /** Keep-alive connections: open and busy. */
  connections(): { open: number; busy: number; queued: number } {
    const s = this.pool.stats;
    return { open: s.connected, busy: s.running, queued: s.pending };
  }

  /** Lets requests in flight finish, then closes the connections. */
  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.probes.close()]);
  }

  /** Closes the connections now; requests in flight fail. */
  async destroy(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.probes.destroy()]);
  }
}

/**
 * Names of endpoints: `host:port` of each URL; when two share it (two keys on one provider),
 * `host:port/2` and so on, by position.
 */
export function endpointNames(urls: readonly string[]): string[] {
  const bases = urls.map((u) => {
    const url = new URL(u);
    return url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  });
  return bases.map((b, i) => (bases.filter((x) => x === b).length > 1 ? `${b}/${bases.slice(0, i + 1).filter((x) => x === b).length}` : b));
}
