/**
 * The one host every long-running platform service is assembled by (issue 25, item 2): an app
 * supplies only what is its own (its consumers, its routes, what /ready asks of its
 * dependencies), the host owns the rest, the same way in every service:
 *
 *   bus        one BusConnection (`openBus`), reconnecting forever once made; start waits for the
 *              first connect at most `startWaitMs` (5 s), then fails with TP_ERR_BUS_UNAVAILABLE
 *              naming the setting (bus.servers, BUS_SERVERS); refused credentials stay
 *              TP_ERR_BUS_AUTH
 *   ops port   one node:http port with the shared `http.*` limits: GET /health, /ready, /metrics
 *              (the service's prom-client registry), /debug/pprof/heap (engine/common
 *              ops-endpoints; sampling on with `heapProfile`, debug.heapProfile), plus the routes the app registers,
 *              those marked `auth` behind the JWT authorizer (engine/auth createHttpAuth). A port
 *              in use is TP_ERR_IO naming the setting that moves it
 *   heartbeat  `system:health:{service}` (engine/state HealthHeartbeat) every few seconds while it
 *              runs, `stopped` when it closes
 *   metrics    the registry's samples on `system.metrics.<service>` every 15 s once the app has
 *              made the platform streams (`publishMetrics`; system-metrics-publisher.ts)
 *   C heap     trimmed every 30 s while it runs (engine/common CHeapTrim: glibc's malloc_trim gives
 *              back what a start-up freed; a no-op without the add-on)
 *   shutdown   SIGTERM, SIGINT, SIGHUP or the parent process gone (shutdown.ts) → close
 *   close      one stack, unwound in reverse order of opening; an app that fails half way through
 *              its start closes exactly what it had opened (`assemble`)
 *   cancel     `host.signal`, given to the app's build: aborted by close, and by a shutdown that
 *              arrives while the app starts (its build, then its own `start`, until
 *              `untilShutdown` takes the shutdown over); `assemble` then closes what the build had
 *              opened and rejects with TP_ERR_ABORTED. The app's start waits (`openBus`, `wait`,
 *              `open`, or what it gives the signal to) end at the abort
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import type { Registry } from 'prom-client';

import type { HttpAuthorizer } from '../auth/index.js';
import { BusConnection, redactServer } from '../bus/index.js';
import { CHeapTrim, heapProfileResponse, opsFailure } from '../common/index.js';
import { DEFAULT_HTTP_LIMITS, type BusAuth, type HttpLimitValues } from '../config/index.js';
import { clientErrorOf } from '../error-status.js';
import { ErrorCode, TpError, isTpError } from '../errors.js';
import { abortable, sharedAbortController } from '../rpc/index.js';
import { acquireHeapSampling, closeServer, createLimitedServer, createMetricsRegistry, listenOn, releaseHeapSampling, requestTarget, type Logger } from '../obs/index.js';
import { HealthHeartbeat, HeartbeatStatus, type KeySpace } from '../state/index.js';
import { closeOnShutdown, waitForShutdown, type ShutdownReason } from './shutdown.js';
import { SystemMetricsPublisher } from './system-metrics-publisher.js';

/** TP_ERR_ABORTED: the host (its start, or what runs on it) was cancelled by `reason`. */
function aborted(service: string, reason: string): TpError {
  return new TpError(ErrorCode.Aborted, `${service}: cancelled (${reason})`, { context: { reason } });
}

/** How long a service waits for the bus at start before it gives up (TP_ERR_BUS_UNAVAILABLE). */
export const BUS_START_WAIT_MS = 5_000;
/** Time between two `system:health:{service}` beats. */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** How the bus servers' setting is named in messages (every service's schema has it so). */
export const BUS_SERVERS_SETTING = 'bus.servers (BUS_SERVERS, --bus-servers)';

export interface HostRoute {
  method: string;
  /** The exact path, or `/prefix/*`: any path of one more segment under `/prefix` (`/strategies/{id}`). */
  path: string;
  /** Ask the host's authorizer first: 401 TP_ERR_UNAUTHENTICATED without a valid bearer token. */
  auth?: boolean;
  /** Answers the request; a TpError it throws is answered with its code's status. */
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

export interface ServiceHostBusOptions {
  servers: readonly string[];
  auth?: BusAuth;
  /** Connection name shown by the server; default `tidepool-{service}`. */
  name?: string;
  /** The setting named when no server answers; default BUS_SERVERS_SETTING. */
  setting?: string;
  /** How long `openBus` waits for the first connect; 0: not at all (the service picks the bus up later). Default 5 s. */
  startWaitMs?: number;
  /** How long close waits for the drain before it drops the connection; default no bound. */
  closeTimeoutMs?: number;
}

/** One of the app's own serving ports (gRPC, its HTTP API): where it binds and the setting that moves it. */
export interface PortBinding {
  /** What listens there, for the message: `aggregator gRPC`. */
  what: string;
  host: string;
  port: number;
  /** The setting that moves the port, as a person writes it: `grpcPort (AGGREGATOR_GRPC_PORT, --grpc-port)`. */
  setting: string;
}

/** TP_ERR_IO for a port that cannot be bound, naming the setting that moves it (one line). */
export function portBindError(binding: PortBinding, err: unknown): TpError {
  const cause = isTpError(err) && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  return new TpError(ErrorCode.Io, `${binding.what} cannot listen on ${binding.host}:${binding.port} (${cause.split('\n')[0]}): free the port or set ${binding.setting}`, {
    context: { setting: binding.setting, host: binding.host, port: binding.port },
    cause: err,
  });
}

export interface ServiceHostHttpOptions {
  host: string;
  port: number;
  /** The setting that moves the port, as a person writes it: `planner.port (PLANNER_PORT, --port)`. */
  portSetting: string;
  /** The `http.*` limits; default DEFAULT_HTTP_LIMITS. */
  limits?: HttpLimitValues;
  /** Checks the routes registered with `auth: true`; undefined: auth off for this port. */
  authorize?: HttpAuthorizer;
}

export interface ReadyAnswer {
  ok: boolean;
  detail?: Record<string, unknown>;
}

export interface ServiceHostOptions {
  /** The service's name: `system:health:{service}`, logs, the bus connection name. */
  service: string;
  logger: Logger;
  /** The service's metrics; default a fresh registry. */
  registry?: Registry;
  bus?: ServiceHostBusOptions;
  http?: ServiceHostHttpOptions;
  /** Where the heartbeat goes (or `heartbeatTo` later); none: no heartbeat. */
  heartbeat?: { keys: KeySpace; intervalMs?: number };
  /** Fields of GET /health besides `status: 'ok'` (which they may override). */
  health?: () => Record<string, unknown>;
  /** What GET /ready asks of the app's own dependencies; the host adds the bus. */
  ready?: () => Promise<ReadyAnswer>;
  /** Keep the sampling heap profiler on while the host runs, for /debug/pprof/heap (`debug.heapProfile`). */
  heapProfile?: boolean;
  /** The heartbeat's status; default `ok`, `degraded` while the bus is not connected. */
  heartbeatStatus?: () => { status: HeartbeatStatus; detail?: Record<string, unknown> };
  /** The C heap's trim, started by `start` and stopped at close; default every 30 s (CHeapTrim). */
  cHeapTrim?: CHeapTrim;
  /**
   * What cancels a start under way (`assemble`): default the process's SIGTERM, SIGINT, SIGHUP or
   * its parent gone (waitForShutdown), watched from the build on until `untilShutdown` (which then
   * waits for the same shutdown) or close; the watch stops at the abort of its signal.
   */
  startShutdown?: (signal: AbortSignal) => Promise<ShutdownReason>;
}

interface Closer {
  what: string;
  close: () => Promise<unknown>;
}

/** Drains the bus within `ms`; an unresponsive server must not hold shutdown past it (then dropped). */
async function closeWithin(bus: BusConnection, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    const drained = await Promise.race([bus.close().then(() => true), timedOut]);
    if (!drained) await bus.connection?.close().catch(() => undefined);
  } finally {
    clearTimeout(timer);
  }
}

/** JSON with bigints as decimal strings. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** Answers `body` as JSON with `status`, unless an answer already went. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(jsonText(body));
}

function sendError(res: ServerResponse, http: number, code: string, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(http, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ error: { code, message } }));
}

export class ServiceHost {
  readonly registry: Registry;
  readonly log: Logger;
  private readonly options: ServiceHostOptions;
  private readonly closers: Closer[] = [];
  private readonly routes = new Map<string, HostRoute[]>();
  private busConnection: BusConnection | undefined;
  private server: Server | undefined;
  private heartbeatWriter: HealthHeartbeat | undefined;
  private closing: Promise<void> | undefined;
  private boundUrl: string | undefined;
  private heartbeatTarget: { keys: KeySpace; intervalMs?: number } | undefined;
  private sampling = false;
  private trimming = false;
  /** Every start wait and every read the app gives host.signal listens to it: no bound. */
  private readonly cancel = sharedAbortController();
  /** Stops the shutdown watch `assemble` started (at close). */
  private readonly watching = new AbortController();
  /** The shutdown `assemble` watches, for `untilShutdown` to wait on. */
  private watchedShutdown: Promise<ShutdownReason> | undefined;

  constructor(options: ServiceHostOptions) {
    this.options = options;
    this.log = options.logger;
    this.registry = options.registry ?? createMetricsRegistry();
    this.heartbeatTarget = options.heartbeat;
  }

  /**
   * Builds an app on a new host: when `build` throws, everything it had put on the host's close
   * stack is closed (in reverse) before the error goes on. A shutdown (`startShutdown`) or a close
   * that arrives while it builds aborts `signal` (= host.signal): once the build has settled, what
   * it opened is closed and assemble rejects with TP_ERR_ABORTED, whatever the build returned.
   * The shutdown stays watched after the build (the app's own `start` waits on the signal too)
   * until `untilShutdown` waits for it, or the host closes.
   */
  static async assemble<T>(options: ServiceHostOptions, build: (host: ServiceHost, signal: AbortSignal) => Promise<T>): Promise<T> {
    const host = new ServiceHost(options);
    const shutdown = (options.startShutdown ?? ((signal) => waitForShutdown({ signal })))(host.watching.signal);
    host.watchedShutdown = shutdown;
    void shutdown.then((reason) => host.cancel.abort(aborted(host.service, `shutdown: ${reason}`)));
    try {
      const app = await build(host, host.signal);
      host.signal.throwIfAborted();
      return app;
    } catch (err) {
      const cancelled = host.signal.aborted;
      await host.close();
      if (cancelled) throw host.signal.reason as TpError;
      throw err;
    }
  }

  /**
   * `promise`, or the host's abort (TP_ERR_ABORTED) if it comes first: a start wait on something
   * that opens nothing (a stream set up, a first read). The promise itself goes on.
   */
  wait<T>(promise: Promise<T>): Promise<T> {
    return abortable(promise, this.signal);
  }

  /**
   * Waits for `opening` as `wait` does, and puts its result on the close stack as `what`
   * (`close(result)`), also when it comes after the abort: it is then closed at once.
   */
  open<T>(what: string, opening: Promise<T>, close: (opened: T) => Promise<unknown> | unknown): Promise<T> {
    const opened = opening.then((value) => {
      this.onClose(what, () => close(value));
      return value;
    });
    opened.catch(() => undefined); // after the abort nobody waits for it; onClose has closed it
    return this.wait(opened);
  }

  /**
   * Aborted when the host closes, or when a shutdown arrives while `assemble` builds the app (the
   * reason a TP_ERR_ABORTED): what the app starts with it stops waiting.
   */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  get service(): string {
    return this.options.service;
  }

  /** The bus, once `openBus` was called. */
  get bus(): BusConnection | undefined {
    return this.busConnection;
  }

  /** The heartbeat writer, once started. */
  get heartbeat(): HealthHeartbeat | undefined {
    return this.heartbeatWriter;
  }

  /** `http://host:port` of the ops port, once bound. */
  get url(): string | undefined {
    return this.boundUrl;
  }

  /** Puts `close` on the stack: it runs when the host closes, before everything put there earlier. */
  onClose(what: string, close: () => Promise<unknown> | unknown): void {
    if (this.closing !== undefined) {
      // A start that went on after close (it did not watch the signal): close it now, stop the start.
      void (async () => close())().catch((err: unknown) => this.log.warn({ err: (err as Error).message, what }, `${this.service}: close failed`));
      throw aborted(this.service, `${what} opened after close`);
    }
    this.closers.push({ what, close: async () => close() });
  }

  /**
   * Opens the service's one bus connection and waits for its first connect (`bus.startWaitMs`).
   * Throws TP_ERR_BUS_UNAVAILABLE naming the setting when no server answers in time, TP_ERR_BUS_AUTH
   * when the server refuses the credentials, TP_ERR_CONFIG_INVALID for unusable credentials.
   */
  async openBus(): Promise<BusConnection> {
    const o = this.options.bus;
    if (o === undefined) throw new TpError(ErrorCode.Internal, `${this.service}: no bus settings given to its host`);
    if (this.busConnection !== undefined) return this.busConnection;
    const bus = this.openBusInBackground();
    const waitMs = o.startWaitMs ?? BUS_START_WAIT_MS;
    if (waitMs > 0) await this.wait(this.waitForBus(bus, waitMs, o));
    return bus;
  }

  /**
   * Opens the service's one bus connection without waiting for its first connect, for an app built
   * synchronously that starts with the bus down (its `startWaitMs` is 0). Throws TP_ERR_CONFIG_INVALID
   * for unusable credentials.
   */
  openBusInBackground(): BusConnection {
    const o = this.options.bus;
    if (o === undefined) throw new TpError(ErrorCode.Internal, `${this.service}: no bus settings given to its host`);
    if (this.busConnection !== undefined) return this.busConnection;
    const bus = BusConnection.open({ servers: o.servers, name: o.name ?? `tidepool-${this.service}`, logger: this.log.child({ component: 'bus' }), ...(o.auth === undefined ? {} : { auth: o.auth }) });
    this.busConnection = bus;
    const closeTimeoutMs = o.closeTimeoutMs;
    this.onClose('bus', () => (closeTimeoutMs === undefined ? bus.close() : closeWithin(bus, closeTimeoutMs)));
    // The heartbeat says `ok` again as soon as the bus is back, not one interval later.
    bus.onConnect(() => this.heartbeatWriter?.beat());
    return bus;
  }

  private async waitForBus(bus: BusConnection, waitMs: number, o: ServiceHostBusOptions): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), waitMs)));
    try {
      const outcome = await Promise.race([bus.ready().then(() => 'ready' as const), timedOut]);
      if (outcome === 'ready' && bus.connection !== undefined) return;
    } finally {
      clearTimeout(timer);
    }
    const servers = o.servers.map(redactServer).join(',');
    const setting = o.setting ?? BUS_SERVERS_SETTING;
    throw new TpError(ErrorCode.BusUnavailable, `${this.service}: no bus server answered within ${waitMs / 1000} s at ${servers || '(none)'}: start NATS there or set ${setting}`, {
      context: { setting, servers, waitMs },
    });
  }

  /**
   * Publishes the registry's samples on `system.metrics.<service>` (stream SYSTEM_METRICS) every
   * `intervalMs` from now until close, and once more at close. Call it once the platform streams
   * exist (ensurePlatformBus), with the deployment's subject prefix.
   */
  publishMetrics(options: { prefix: string; intervalMs?: number }): SystemMetricsPublisher {
    const bus = this.busConnection;
    if (bus === undefined) throw new TpError(ErrorCode.Internal, `${this.service}: publishMetrics before openBus`);
    const publisher = new SystemMetricsPublisher({ bus, registry: this.registry, service: this.service, logger: this.log.child({ component: 'system-metrics' }), ...options });
    publisher.start();
    this.onClose('system metrics', () => publisher.close());
    return publisher;
  }

  /** Where the heartbeat goes, for a key space the app opens itself (before `start`). */
  heartbeatTo(keys: KeySpace, intervalMs?: number): void {
    this.heartbeatTarget = { keys, ...(intervalMs === undefined ? {} : { intervalMs }) };
  }

  /** Adds a route of the ops port (before `start`). */
  route(route: HostRoute): void {
    const same = this.routes.get(route.path) ?? [];
    same.push(route);
    this.routes.set(route.path, same);
  }

  /**
   * Binds the ops port and starts the heartbeat and the C heap's trim; all go on the close stack.
   * Returns the port's URL (undefined without one). Throws TP_ERR_IO naming the port's setting when it cannot bind.
   */
  async start(): Promise<{ http?: string }> {
    if (this.options.heapProfile === true && !this.sampling) {
      this.sampling = true;
      await acquireHeapSampling();
      this.onClose('heap sampling', () => releaseHeapSampling());
    }
    const http = this.options.http;
    if (http !== undefined && this.server === undefined) {
      const server = createLimitedServer((req, res) => void this.handle(req, res), http.limits ?? DEFAULT_HTTP_LIMITS);
      this.server = server;
      this.onClose('ops port', () => closeServer(server));
      const port = await this.listen({ what: this.service, host: http.host, port: http.port, setting: http.portSetting }, () => listenOn(server, http.host, http.port, `${this.service} port`));
      this.boundUrl = `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${port}`;
    }
    if (!this.trimming) {
      this.trimming = true;
      const trim = this.options.cHeapTrim ?? new CHeapTrim();
      trim.start();
      this.onClose('C heap trim', () => trim.stop());
    }
    const beat = this.heartbeatTarget;
    if (beat !== undefined && this.heartbeatWriter === undefined) {
      const writer = new HealthHeartbeat(beat.keys, {
        service: this.service,
        intervalMs: beat.intervalMs ?? HEARTBEAT_INTERVAL_MS,
        status: () => this.heartbeatStatus(),
        logger: this.log.child({ component: 'heartbeat' }),
      });
      this.heartbeatWriter = writer;
      this.onClose('heartbeat', () => writer.close());
      await writer.start();
    }
    return this.boundUrl === undefined ? {} : { http: this.boundUrl };
  }

  private heartbeatStatus(): { status: HeartbeatStatus; detail?: Record<string, unknown> } {
    if (this.options.heartbeatStatus !== undefined) return this.options.heartbeatStatus();
    const bus = this.busConnection;
    if (bus !== undefined && !bus.connected) return { status: HeartbeatStatus.Degraded, detail: { bus: bus.status } };
    return { status: HeartbeatStatus.Ok };
  }

  /**
   * Binds one of the app's own serving ports with `bind` (which resolves with the bound port); a
   * failure is TP_ERR_IO naming the setting that moves it. The app puts the port's close on the
   * stack itself (before binding, so a half-bound start closes it).
   */
  async listen(binding: PortBinding, bind: () => Promise<number>): Promise<number> {
    try {
      return await bind();
    } catch (err) {
      throw portBindError(binding, err);
    }
  }

  /** Closes everything on the stack, last opened first; a failure is logged and the rest still closes. Idempotent. */
  close(): Promise<void> {
    if (!this.cancel.signal.aborted) this.cancel.abort(aborted(this.service, 'closed'));
    this.watching.abort();
    this.closing ??= (async () => {
      while (this.closers.length > 0) {
        const c = this.closers.pop()!;
        try {
          await c.close();
        } catch (err) {
          this.log.warn({ err: (err as Error).message, what: c.what }, `${this.service}: close failed`);
        }
      }
    })();
    return this.closing;
  }

  /**
   * Runs until SIGTERM, SIGINT, SIGHUP or the parent process exits (the shutdown `assemble`
   * watches, which may have come already), then closes the host (and with it the app) and
   * resolves with exit code 0.
   */
  untilShutdown(signal: Promise<ShutdownReason> = this.watchedShutdown ?? waitForShutdown({ signal: this.watching.signal })): Promise<number> {
    return closeOnShutdown(this.log, this.service, () => this.close(), signal);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = requestTarget(req);
    try {
      const own = this.routes.get(path) ?? (path.lastIndexOf('/') > 0 ? this.routes.get(`${path.slice(0, path.lastIndexOf('/'))}/*`) : undefined);
      if (own !== undefined) {
        const route = own.find((r) => r.method === req.method);
        if (route === undefined) return sendError(res, 405, ErrorCode.MethodNotAllowed, `${path} takes ${own.map((r) => r.method).join(', ')}`, { allow: own.map((r) => r.method).join(', ') });
        if (route.auth === true) await this.options.http?.authorize?.(req.headers.authorization);
        return await route.handle(req, res);
      }
      const builtIn = path === '/health' || path === '/ready' || path === '/metrics' || path === '/debug/pprof/heap';
      if (builtIn && req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, ErrorCode.MethodNotAllowed, `${path} takes GET`, { allow: 'GET' });
      if (path === '/health') return sendJson(res, 200, { status: 'ok', ...this.options.health?.() });
      if (path === '/ready') {
        const { ok, body } = await this.readiness();
        return sendJson(res, ok ? 200 : 503, body);
      }
      if (path === '/metrics') return void res.writeHead(200, { 'content-type': this.registry.contentType }).end(await this.registry.metrics());
      if (path === '/debug/pprof/heap') {
        const r = await heapProfileResponse(query.get('format') ?? '').catch(() => opsFailure());
        return void res.writeHead(r.status, Object.fromEntries(r.headers)).end(r.body);
      }
      sendError(res, 404, ErrorCode.NotFound, `no route ${path}`);
    } catch (err) {
      const failure = err instanceof TpError ? clientErrorOf(err.code, err.message) : clientErrorOf(ErrorCode.Internal, 'internal error');
      if (failure.code === ErrorCode.Internal) this.log.error({ err, path }, `${req.method ?? ''} ${path} failed`);
      if (!req.complete) res.setHeader('Connection', 'close');
      sendError(res, failure.http, failure.code, failure.message);
    }
  }

  /** /ready: the bus connected (when the service has one) and the app's own answer. */
  async readiness(): Promise<{ ok: boolean; body: Record<string, unknown> }> {
    const app = (await this.options.ready?.()) ?? { ok: true };
    const bus = this.busConnection;
    const busOk = bus === undefined || bus.connected;
    const ok = busOk && app.ok;
    return { ok, body: { status: ok ? 'ready' : 'not_ready', ...(bus === undefined ? {} : { bus: busOk }), ...app.detail } };
  }
}
