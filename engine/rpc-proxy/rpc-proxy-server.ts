/**
 * The RPC proxy's HTTP and WebSocket server, over uWebSockets.js:
 *
 *   POST /rpc          a JSON-RPC call or batch, proxied (call-router.ts)
 *   WS   /rpc/ws       PubSub subscriptions (subscription-hub.ts); other calls are answered as on POST /rpc
 *   GET  /rpc/health   the endpoints' health (JSON); 200 while one is in rotation, else 503
 *   GET  /rpc/metrics  Prometheus text
 *   GET  /health       liveness: 200 while the process serves
 *   GET  /ready        readiness: 200 while an endpoint is in rotation and the proxy is not draining
 *
 * Request bodies over `maxBodyBytes` are refused (413 with a JSON-RPC -32600 body, connection
 * closed) without being buffered; WebSocket messages over it close the connection (uWS's
 * maxPayloadLength). With a rate limiter, each client (its API key or JWT subject when auth is on,
 * else its remote address, as the quote service keys it) gets `rps` calls a second, burst 2 × rps:
 * an HTTP request over it gets 429 with Retry-After and a -32093 body (its body read, not parsed),
 * a WebSocket message a -32093 reply with the call's id. A WebSocket client that leaves more than
 * `maxWsBufferedBytes` of answers and notifications unread is disconnected. uWS rules kept: request headers are read in the handler, every response
 * written later is guarded by onAborted and corked; a WebSocket is never used after its close.
 */
import { performance } from 'node:perf_hooks';

import uws from '@trufflesuite/uws-js-unofficial';

import { httpStatusOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { ClientAddressKeys, type RateLimiter } from '../common/index.js';
import { batchReply, type CallRouter, type ProxyAnswer } from './call-router.js';
import { replyKind } from './json-scan.js';
import { parseRequest, type RpcCall } from './json-rpc-request.js';
import { JsonRpcErrorCode, errorReply, httpStatusOf as proxyHttpStatusOf } from './proxy-errors.js';
import { DEFAULT_MAX_BATCH_ITEMS, DEFAULT_MAX_WS_BUFFERED_BYTES } from './rpc-proxy-config.js';
import { isSubscribeMethod, isUnsubscribeMethod, methodLabel } from './rpc-methods.js';
import { ErrorKind, NO_ENDPOINT, type RpcProxyMetrics } from './rpc-proxy-metrics.js';
import type { SubscriptionHub, WsClient } from './subscription-hub.js';
import type { Credentials, ProxyAuthorizer } from './client-auth.js';
import { DeadlineQueue, type Deadline } from './deadline-queue.js';

/**
 * How long an HTTP call may wait for its answer before the proxy answers it with an error itself.
 * uWebSockets.js closes a connection whose response is not sent within 10 s (its HTTP idle timeout,
 * fixed at build time): a call still waiting then (the upstream slow, a retry after a 10 s
 * request_timeout) would lose its connection without a word, and the client's other pipelined
 * calls with it. The proxy answers first, with the JSON-RPC error of a call that got no answer.
 */
export const DEFAULT_RESPONSE_LIMIT_MS = 9_000;

export const RpcProxyPath = {
  Rpc: '/rpc',
  Ws: '/rpc/ws',
  Health: '/rpc/health',
  Metrics: '/rpc/metrics',
  Live: '/health',
  Ready: '/ready',
} as const;

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

function statusLine(status: number): string {
  return STATUS_LINES[status] ?? `${status} Status`;
}

const JSON_TYPE = 'application/json';
/** The port's own error bodies (`{"error":{"code","message"}}`), statuses from the code table. */
const NOT_FOUND_BODY = JSON.stringify({ error: { code: ErrorCode.NotFound, message: 'not found' } });
const METRICS_FAILED_BODY = JSON.stringify({ error: { code: ErrorCode.Internal, message: 'metrics failed' } });
const SHUTTING_DOWN_BODY = JSON.stringify({ error: { code: ErrorCode.RpcProxyUnavailable, message: 'shutting down' } });
const EMPTY = Buffer.alloc(0);

export interface RpcProxyServerOptions {
  host: string;
  maxBodyBytes: number;
  /** Calls a batch may hold; default DEFAULT_MAX_BATCH_ITEMS. */
  maxBatchItems?: number;
  /** Calls a second per client (rate_limit_rps); absent: no limit. */
  rateLimiter?: RateLimiter | undefined;
  /** Unread bytes a WebSocket client may leave before it is disconnected; default DEFAULT_MAX_WS_BUFFERED_BYTES. */
  maxWsBufferedBytes?: number;
  /** Who may call /rpc and /rpc/ws (client-auth.ts); absent: anyone (auth off). */
  authorize?: ProxyAuthorizer;
  router: CallRouter;
  hub: SubscriptionHub;
  metrics: RpcProxyMetrics;
  /** The /rpc/health body and whether an endpoint is in rotation. */
  health(): { body: string; ok: boolean };
  metricsText(): Promise<{ text: string; contentType: string }>;
  logger?: Logger;
  /** Serve HTTPS/WSS with these files (tls.certFile / tls.keyFile, already checked); undefined: plain. */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** An HTTP call not answered in this long is answered with an error (DEFAULT_RESPONSE_LIMIT_MS). */
  responseLimitMs?: number;
}

/**
 * A POST /rpc whose body is being read; the shared onData handler keeps no closure per chunk. While
 * its answer is awaited it waits in the server's response-limit queue (a Deadline).
 */
class PendingPost implements Deadline {
  aborted = false;
  refused = false;
  /** Answered by the response limit: the upstream's later answer is dropped. */
  answered = false;
  /** The body, kept while the answer is awaited (the response limit's error names the calls' ids). */
  body: Buffer | null = null;
  deadlineAt = 0;
  prevDeadline: Deadline | null = null;
  nextDeadline: Deadline | null = null;
  /** The caller's credentials being checked (auth on), settled before the body is answered: its identity. */
  authorized: Promise<string | undefined> | undefined;
  /** Over its client's rate limit (known at the headers, auth off): the Retry-After seconds; else 0. */
  retryAfter = 0;
  /** The client's rate-limit key by address (read at the headers; a verified identity takes its place). */
  addressKey = '';
  chunks: Buffer[] | null = null;
  size = 0;

  constructor(
    readonly server: RpcProxyServer,
    readonly res: uws.HttpResponse,
    readonly started: number,
  ) {}

  expire(): void {
    this.server.responseLimitPassed(this);
  }

  onData(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.refused) return;
    this.size += chunk.byteLength;
    if (this.size > this.server.maxBodyBytes) {
      this.refused = true;
      this.chunks = null;
      this.server.refuseTooLarge(this);
      return;
    }
    if (this.retryAfter > 0) {
      // Refused whatever it holds: read to its end (the connection stays usable), never kept.
      if (isLast) this.server.refuseRateLimited(this, this.retryAfter);
      return;
    }
    // uWS reuses the chunk's memory once this returns: copy it.
    const copy = Buffer.copyBytesFrom(new Uint8Array(chunk));
    if (isLast && this.chunks === null) {
      this.server.handlePost(this, copy);
      return;
    }
    (this.chunks ??= []).push(copy);
    if (isLast) this.server.handlePost(this, Buffer.concat(this.chunks, this.size));
  }
}

interface CallMetrics {
  http: ReturnType<RpcProxyMetrics['calls']['labels']>;
  ws: ReturnType<RpcProxyMetrics['calls']['labels']>;
  duration: ReturnType<RpcProxyMetrics['callDuration']['labels']>;
}

interface SocketData {
  client: WsClient | null;
  closed: boolean;
  /** The client's rate-limit key: its verified identity, else `addr:` its address. */
  key: string;
}

export class RpcProxyServer {
  readonly maxBodyBytes: number;
  readonly maxBatchItems: number;
  readonly maxWsBufferedBytes: number;
  private readonly limiter: RateLimiter | undefined;
  private readonly addressKeys = new ClientAddressKeys();
  /** The 429 bodies by Retry-After seconds: a refusal builds nothing. */
  private readonly rateLimitedBodies = new Map<number, Buffer>();
  private readonly app: uws.TemplatedApp;
  private readonly options: RpcProxyServerOptions;
  /** HTTP calls awaiting their answer, by the response limit (DEFAULT_RESPONSE_LIMIT_MS). */
  private readonly responseLimits: DeadlineQueue;
  private readonly router: CallRouter;
  private readonly hub: SubscriptionHub;
  private readonly metrics: RpcProxyMetrics;
  private readonly log: Logger | undefined;
  private readonly sockets = new Set<uws.WebSocket<SocketData>>();
  private readonly byMethod = new Map<string, CallMetrics>();
  private listenSocket: uws.us_listen_socket | undefined;
  private boundPort = 0;
  private draining = false;
  private inflight = 0;
  private idle: (() => void) | null = null;
  private readonly tooLargeReply: Buffer;

  constructor(options: RpcProxyServerOptions) {
    this.options = options;
    this.responseLimits = new DeadlineQueue(options.responseLimitMs ?? DEFAULT_RESPONSE_LIMIT_MS);
    this.maxBodyBytes = options.maxBodyBytes;
    this.maxBatchItems = options.maxBatchItems ?? DEFAULT_MAX_BATCH_ITEMS;
    this.maxWsBufferedBytes = options.maxWsBufferedBytes ?? DEFAULT_MAX_WS_BUFFERED_BYTES;
    this.limiter = options.rateLimiter;
    this.router = options.router;
    this.hub = options.hub;
    this.metrics = options.metrics;
    this.log = options.logger;
    this.tooLargeReply = errorReply(JsonRpcErrorCode.InvalidRequest, `Invalid request: the body exceeds ${options.maxBodyBytes} bytes`, null);
    this.app = (options.tls === undefined ? uws.App() : uws.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile }))
      .post(RpcProxyPath.Rpc, (res, req) => this.onPost(res, req))
      .any(RpcProxyPath.Rpc, (res) => {
        this.write(res, 405, errorReply(JsonRpcErrorCode.InvalidRequest, 'Invalid request: JSON-RPC calls are POSTed', null), JSON_TYPE);
      })
      .ws<SocketData>(RpcProxyPath.Ws, {
        compression: uws.DISABLED,
        maxPayloadLength: options.maxBodyBytes,
        // sendWs disconnects first (counted, logged); uWS's own limit is the net under it.
        maxBackpressure: this.maxWsBufferedBytes,
        closeOnBackpressureLimit: 1,
        idleTimeout: 120,
        sendPingsAutomatically: true,
        upgrade: (res, req, context) => this.onUpgrade(res, req, context),
        open: (ws) => this.onOpen(ws),
        message: (ws, message) => this.onWsMessage(ws, message),
        close: (ws) => this.onWsClose(ws),
      })
      .get(RpcProxyPath.Health, (res) => {
        const { body, ok } = this.options.health();
        this.write(res, ok ? 200 : 503, body, JSON_TYPE);
      })
      .get(RpcProxyPath.Metrics, (res) => this.onMetrics(res))
      .get(RpcProxyPath.Live, (res) => this.write(res, 200, '{"status":"ok"}', JSON_TYPE))
      .get(RpcProxyPath.Ready, (res) => {
        const ready = !this.draining && this.options.health().ok;
        this.write(res, ready ? 200 : 503, ready ? '{"status":"ready"}' : `{"status":"${this.draining ? 'draining' : 'no endpoint in rotation'}"}`, JSON_TYPE);
      })
      .any('/*', (res) => this.write(res, httpStatusOf(ErrorCode.NotFound), NOT_FOUND_BODY, JSON_TYPE));
  }

  get port(): number {
    return this.boundPort;
  }

  /** Binds `port` (0: any free port); resolves with the bound port. */
  start(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.options.host, port, (socket) => {
        if (socket === false) {
          reject(new TpError(ErrorCode.Io, `rpc proxy cannot listen on ${this.options.host}:${port}`, { context: { host: this.options.host, port } }));
          return;
        }
        this.listenSocket = socket;
        this.limiter?.startSweeping();
        this.boundPort = uws.us_socket_local_port(socket as unknown as uws.us_socket);
        resolve(this.boundPort);
      });
    });
  }

  /**
   * Stops taking connections and calls (new calls get -32090, HTTP 503) and waits up to
   * `timeoutMs` for the calls in flight to be answered.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.listenSocket !== undefined) {
      uws.us_listen_socket_close(this.listenSocket);
      this.listenSocket = undefined;
    }
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Calls answered or not: closes every WebSocket (1001) and connection. */
  close(): void {
    this.draining = true;
    this.limiter?.stopSweeping();
    this.responseLimits.stop();
    for (const ws of [...this.sockets]) ws.end(1001, 'rpc proxy shutting down');
    this.sockets.clear();
    if (this.listenSocket !== undefined) {
      uws.us_listen_socket_close(this.listenSocket);
      this.listenSocket = undefined;
    }
    (this.app as unknown as { close?: () => void }).close?.();
  }

  private onPost(res: uws.HttpResponse, req: uws.HttpRequest): void {
    const declared = Number(req.getHeader('content-length'));
    const started = performance.now();
    if (this.draining) {
      this.metrics.errors.labels(NO_ENDPOINT, 'none', ErrorKind.ShuttingDown).inc();
      this.write(res, 503, errorReply(JsonRpcErrorCode.Unavailable, 'the rpc proxy is shutting down; the call was not sent', null), JSON_TYPE, true);
      return;
    }
    const pending = new PendingPost(this, res, started);
    if (this.limiter !== undefined) {
      pending.addressKey = this.addressKeys.of(res);
      // Auth off: the address is the client, known now; auth on: its identity, once checked.
      if (this.options.authorize === undefined) pending.retryAfter = this.limiter.take(pending.addressKey);
    }
    // Headers are only readable now (uWS); the check runs while the body arrives.
    if (this.options.authorize !== undefined) {
      pending.authorized = this.options.authorize(credentialsOf(req));
      // Handled even when the body never completes (too large, aborted): no unhandled rejection.
      pending.authorized.catch(() => undefined);
    }
    if (Number.isFinite(declared) && declared > this.maxBodyBytes) {
      pending.refused = true;
      this.refuseTooLarge(pending);
      return;
    }
    res.onAborted(() => {
      pending.aborted = true;
    });
    res.onData((chunk, isLast) => pending.onData(chunk, isLast));
  }

  /** @internal 413 with the JSON-RPC error; the connection closes (the rest of the body is not read). */
  refuseTooLarge(p: PendingPost): void {
    this.metrics.errors.labels(NO_ENDPOINT, 'none', ErrorKind.TooLarge).inc();
    if (p.aborted) return;
    p.aborted = true;
    p.res.cork(() => {
      p.res.writeStatus(statusLine(413)).writeHeader('Content-Type', JSON_TYPE).end(this.tooLargeReply, true);
    });
  }

  /** @internal 429 with Retry-After and a -32093 body: the request is over its client's rate limit. */
  refuseRateLimited(p: PendingPost, retryAfter: number): void {
    this.metrics.rateLimited.labels('http').inc();
    if (p.aborted) return;
    const body = this.rateLimitedBody(retryAfter);
    p.res.cork(() => {
      p.res.writeStatus(statusLine(429)).writeHeader('Content-Type', JSON_TYPE).writeHeader('Retry-After', String(retryAfter)).end(body, this.draining);
    });
  }

  private rateLimitedBody(retryAfter: number): Buffer {
    let body = this.rateLimitedBodies.get(retryAfter);
    if (body === undefined) {
      body = this.rateLimitedReply(retryAfter, null);
      if (this.rateLimitedBodies.size < 64) this.rateLimitedBodies.set(retryAfter, body);
    }
    return body;
  }

  private rateLimitedReply(retryAfter: number, id: Uint8Array | null): Buffer {
    const message = `rate limit of ${this.limiter?.rps ?? 0} calls per second exceeded; the call was not sent`;
    return errorReply(JsonRpcErrorCode.RateLimited, message, id, { retryAfter });
  }

  /** @internal A complete POST body. */
  handlePost(p: PendingPost, body: Buffer): void {
    if (p.authorized !== undefined) {
      const check = p.authorized;
      p.authorized = undefined;
      this.inflight++;
      check.then(
        (identity) => {
          this.inflight--;
          const retryAfter = this.limiter?.take(identity ?? p.addressKey) ?? 0;
          if (retryAfter > 0) this.refuseRateLimited(p, retryAfter);
          else this.handlePost(p, body);
        },
        (err: unknown) => {
          this.metrics.errors.labels(NO_ENDPOINT, 'none', ErrorKind.Unauthenticated).inc();
          this.finishPost(p, { status: 401, body: errorReply(JsonRpcErrorCode.InvalidRequest, (err as Error).message, null), contentType: JSON_TYPE });
        },
      );
      return;
    }
    this.inflight++;
    let answer: Promise<ProxyAnswer> | ProxyAnswer;
    try {
      answer = this.answerHttp(body, p.started);
    } catch (err) {
      answer = this.internalError(err);
    }
    if (!(answer instanceof Promise)) {
      this.finishPost(p, answer);
      return;
    }
    p.body = body;
    this.responseLimits.add(p);
    answer.then(
      (a) => this.finishPost(p, a),
      (err: unknown) => this.finishPost(p, this.internalError(err)),
    );
  }

  private finishPost(p: PendingPost, a: ProxyAnswer): void {
    this.responseLimits.remove(p);
    p.body = null;
    if (!p.aborted && !p.answered) {
      p.res.cork(() => {
        p.res.writeStatus(statusLine(a.status)).writeHeader('Content-Type', a.contentType).end(a.body, this.draining);
      });
    }
    if (--this.inflight === 0 && this.idle !== null) {
      this.idle();
      this.idle = null;
    }
  }

  /**
   * @internal The response limit passed with the call still unanswered: the JSON-RPC error of a
   * call that got no answer for each call that has an id (a write's outcome is unknown: it may have
   * been applied), written now; the answer that comes later is dropped.
   */
  responseLimitPassed(p: PendingPost): void {
    const body = p.body;
    p.body = null;
    if (p.aborted || body === null) return;
    p.answered = true;
    const limitMs = this.responseLimits.lengthMs;
    const data = { reason: `no answer within the proxy's response limit of ${limitMs} ms` };
    const errorOf = (call: RpcCall): Buffer =>
      call.read
        ? errorReply(JsonRpcErrorCode.UpstreamFailed, 'no RPC endpoint answered the call in time', call.id, data)
        : errorReply(JsonRpcErrorCode.WriteOutcomeUnknown, 'the RPC endpoint did not answer in time; the call may have been applied and was not sent again', call.id, data);
    const parsed = parseRequest(body, this.maxBatchItems);
    let reply: Buffer;
    let status = 200;
    if (parsed.kind === 'call') {
      reply = errorOf(parsed.call);
      status = proxyHttpStatusOf(parsed.call.read ? JsonRpcErrorCode.UpstreamFailed : JsonRpcErrorCode.WriteOutcomeUnknown, true);
    } else if (parsed.kind === 'batch') {
      reply = batchReply(parsed.items.map((item) => (Buffer.isBuffer(item) ? item : item.hasId ? errorOf(item) : null))) ?? EMPTY_BATCH;
    } else return;
    this.metrics.errors.labels(NO_ENDPOINT, 'none', ErrorKind.Timeout).inc();
    p.res.cork(() => {
      p.res.writeStatus(statusLine(status)).writeHeader('Content-Type', JSON_TYPE).end(reply, this.draining);
    });
  }

  private answerHttp(body: Buffer, started: number): Promise<ProxyAnswer> | ProxyAnswer {
    const parsed = parseRequest(body, this.maxBatchItems);
    if (parsed.kind === 'reply') {
      this.refused(parsed.reply, 'http');
      return { status: 200, body: parsed.reply, contentType: JSON_TYPE };
    }
    if (parsed.kind === 'call') {
      const call = parsed.call;
      const method = methodLabel(call.method);
      this.callMetrics(method).http.inc();
      if (!call.hasId) return { status: 200, body: EMPTY, contentType: JSON_TYPE };
      return this.router.forward(call, method).then((a) => {
        this.callMetrics(method).duration.observe((performance.now() - started) / 1000);
        return a;
      });
    }
    const methods = this.countBatch(parsed.items, 'http');
    return this.router.forwardBatch(parsed.items).then((reply) => {
      const seconds = (performance.now() - started) / 1000;
      for (const m of methods) this.callMetrics(m).duration.observe(seconds);
      return { status: 200, body: reply ?? EMPTY, contentType: JSON_TYPE };
    });
  }

  /** Counts a batch's calls; the method labels of those answered. */
  private countBatch(items: readonly (RpcCall | Buffer)[], transport: 'http' | 'ws'): string[] {
    const methods: string[] = [];
    for (const item of items) {
      if (Buffer.isBuffer(item)) {
        this.refused(item, transport);
        continue;
      }
      const m = methodLabel(item.method);
      this.callMetrics(m)[transport].inc();
      if (item.hasId) methods.push(m);
    }
    return methods;
  }

  /** Counts what the proxy answered itself: a parse error or an invalid call. */
  private refused(reply: Buffer, transport: 'http' | 'ws'): void {
    const kind = reply.includes('"code":-32700') ? ErrorKind.ParseError : ErrorKind.InvalidRequest;
    this.metrics.errors.labels(NO_ENDPOINT, 'none', kind).inc();
    this.callMetrics('other')[transport].inc();
  }

  private internalError(err: unknown): ProxyAnswer {
    this.log?.error({ err }, 'rpc proxy failed to answer a call');
    return { status: 500, body: errorReply(JsonRpcErrorCode.Internal, 'Internal error', null), contentType: JSON_TYPE };
  }

  private onMetrics(res: uws.HttpResponse): void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    this.options.metricsText().then(
      ({ text, contentType }) => {
        if (!aborted) res.cork(() => res.writeStatus(statusLine(200)).writeHeader('Content-Type', contentType).end(text));
      },
      (err: unknown) => {
        this.log?.error({ err }, 'metrics failed');
        if (!aborted) res.cork(() => res.writeStatus(statusLine(httpStatusOf(ErrorCode.Internal))).writeHeader('Content-Type', JSON_TYPE).end(METRICS_FAILED_BODY));
      },
    );
  }

  private onUpgrade(res: uws.HttpResponse, req: uws.HttpRequest, context: uws.us_socket_context_t): void {
    if (this.draining) {
      res.writeStatus(statusLine(httpStatusOf(ErrorCode.RpcProxyUnavailable))).writeHeader('Content-Type', JSON_TYPE).end(SHUTTING_DOWN_BODY, true);
      return;
    }
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const authorize = this.options.authorize;
    const addressKey = this.addressKeys.of(res);
    if (authorize === undefined) {
      res.upgrade<SocketData>({ client: null, closed: false, key: addressKey }, key, protocol, extensions, context);
      return;
    }
    // The check is asynchronous: the upgrade happens later, if the socket is still there.
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    authorize(credentialsOf(req)).then(
      (identity) => {
        if (!aborted) res.cork(() => res.upgrade<SocketData>({ client: null, closed: false, key: identity ?? addressKey }, key, protocol, extensions, context));
      },
      (err: unknown) => {
        this.metrics.errors.labels(NO_ENDPOINT, 'none', ErrorKind.Unauthenticated).inc();
        if (!aborted) res.cork(() => res.writeStatus(statusLine(401)).writeHeader('Content-Type', JSON_TYPE).end(errorReply(JsonRpcErrorCode.InvalidRequest, (err as Error).message, null), true));
      },
    );
  }

  private onOpen(ws: uws.WebSocket<SocketData>): void {
    const data = ws.getUserData();
    this.sockets.add(ws);
    // Sends happen outside uWS's callbacks (upstream events, answers): corked, as uWS wants them.
    data.client = this.hub.connect((bytes) => this.sendWs(ws, bytes));
  }

  /**
   * Sends to a WebSocket client unless it has left too much unread: a client with bytes still
   * buffered that would hold more than maxWsBufferedBytes is disconnected (counted, logged), so
   * clients that never read cannot pile the proxy's memory up. One message of any size is sent to
   * a client with nothing buffered.
   */
  private sendWs(ws: uws.WebSocket<SocketData>, bytes: Uint8Array): void {
    const data = ws.getUserData();
    if (data.closed) return;
    const buffered = ws.getBufferedAmount();
    if (buffered > 0 && buffered + bytes.length > this.maxWsBufferedBytes) {
      data.closed = true;
      this.metrics.wsSlowClientsClosed.inc();
      this.log?.warn({ client: data.key, bufferedBytes: buffered, maxWsBufferedBytes: this.maxWsBufferedBytes }, 'rpc proxy disconnected a WebSocket client that does not read its answers');
      ws.close();
      return;
    }
    ws.cork(() => ws.send(bytes, false));
  }

  private onWsClose(ws: uws.WebSocket<SocketData>): void {
    const data = ws.getUserData();
    data.closed = true;
    this.sockets.delete(ws);
    if (data.client !== null) this.hub.disconnect(data.client);
  }

  private onWsMessage(ws: uws.WebSocket<SocketData>, message: ArrayBuffer): void {
    const data = ws.getUserData();
    const client = data.client;
    if (client === null) return;
    const started = performance.now();
    const bytes = Buffer.copyBytesFrom(new Uint8Array(message));
    const send = (reply: Buffer | null): void => {
      if (reply !== null) this.sendWs(ws, reply);
    };
    const fail = (err: unknown): void => send(this.internalError(err).body);
    let parsed;
    try {
      parsed = parseRequest(bytes, this.maxBatchItems);
    } catch (err) {
      fail(err);
      return;
    }
    const retryAfter = this.limiter?.take(data.key) ?? 0;
    if (retryAfter > 0) {
      // Over the client's rate limit: nothing sent upstream; a call gets the error with its id.
      this.metrics.rateLimited.labels('ws').inc();
      if (parsed.kind === 'call' && !parsed.call.hasId) return;
      send(this.rateLimitedReply(retryAfter, parsed.kind === 'call' ? parsed.call.id : null));
      return;
    }
    if (parsed.kind === 'reply') {
      this.refused(parsed.reply, 'ws');
      send(parsed.reply);
      return;
    }
    if (parsed.kind === 'call') {
      const method = methodLabel(parsed.call.method);
      this.callMetrics(method).ws.inc();
      this.answerWs(client, parsed.call, method).then((reply) => {
        if (parsed.call.hasId) this.callMetrics(method).duration.observe((performance.now() - started) / 1000);
        send(reply);
      }, fail);
      return;
    }
    const items = parsed.items;
    const methods = this.countBatch(items, 'ws');
    Promise.all(items.map((item) => (Buffer.isBuffer(item) ? item : this.answerWs(client, item, methodLabel(item.method))))).then((replies) => {
      const seconds = (performance.now() - started) / 1000;
      for (const m of methods) this.callMetrics(m).duration.observe(seconds);
      const present = replies.filter((r): r is Buffer => r !== null);
      if (present.length > 0) send(Buffer.concat([Buffer.from('['), ...present.flatMap((r, i) => (i === 0 ? [r] : [COMMA, r])), Buffer.from(']')]));
    }, fail);
  }

  /** One call over the WebSocket: a subscription, or a call answered as POST /rpc answers it. */
  private async answerWs(client: WsClient, call: RpcCall, method: string): Promise<Buffer | null> {
    if (!call.hasId) return null;
    if (this.draining) return errorReply(JsonRpcErrorCode.Unavailable, 'the rpc proxy is shutting down; the call was not sent', call.id);
    if (isSubscribeMethod(call.method)) return this.hub.subscribe(client, call);
    if (isUnsubscribeMethod(call.method)) return this.hub.unsubscribe(client, call);
    const a = await this.router.forward(call, method);
    if (a.status === 200 && replyKind(a.body) !== null) return a.body;
    if (a.status !== 200 && replyKind(a.body) === 'error') return a.body;
    // An HTTP-level answer (429, 5xx text, ...) has no place on a WebSocket: say it as a JSON-RPC error.
    return errorReply(call.read ? JsonRpcErrorCode.UpstreamFailed : JsonRpcErrorCode.WriteOutcomeUnknown, `the endpoint answered HTTP ${a.status}`, call.id, {
      reason: a.body.subarray(0, 200).toString('utf8'),
    });
  }

  /** The per-method metric children, looked up once per method rather than hashed per call. */
  private callMetrics(method: string): CallMetrics {
    let m = this.byMethod.get(method);
    if (m === undefined) {
      m = { http: this.metrics.calls.labels(method, 'http'), ws: this.metrics.calls.labels(method, 'ws'), duration: this.metrics.callDuration.labels(method) };
      this.byMethod.set(method, m);
    }
    return m;
  }

  private write(res: uws.HttpResponse, status: number, body: string | Buffer, contentType: string, close = false): void {
    res.writeStatus(statusLine(status)).writeHeader('Content-Type', contentType).end(body, close);
  }
}

const COMMA = Buffer.from(',');
/** What the response limit answers for a batch of notifications only (as it always did). */
const EMPTY_BATCH = Buffer.from('[]');

/** What a request presents to the proxy's auth: its Authorization header, its API key (header, else query). */
function credentialsOf(req: uws.HttpRequest): Credentials {
  const apiKey = req.getHeader('x-api-key') || (new URLSearchParams(req.getQuery() ?? '').get('api-key') ?? '');
  return { authorization: req.getHeader('authorization'), apiKey };
}
