/**
 * The services' connection to the message bus (NATS, `bus.servers`). It never gives up: the first
 * connect is retried with jittered exponential backoff, and once connected the client reconnects
 * forever (unlimited attempts, jittered waits), so a bus that is down at start or goes down later is
 * picked up again without a restart. Meanwhile `status` says where it stands, for /health:
 *
 *   'connecting'   → first connect not done yet (retrying)
 *   'connected'    → a server holds the connection
 *   'reconnecting' → the connection dropped; the client is retrying
 *   'disconnected' → closed (by `close()`)
 *   'disabled'     → `bus.enabled` is false (see `disabledBusStatus`)
 *
 * Credentials and TLS (`auth`, engine/bus/bus-auth.ts) are checked when the connection is opened
 * (TP_ERR_CONFIG_INVALID, thrown by `open`); credentials the server refuses, or a failed TLS
 * handshake, end the attempts: `ready()` rejects with TP_ERR_BUS_AUTH, `failure` holds it and the
 * status is 'disconnected' (a wrong password does not get better by retrying).
 *
 * `onConnect(listener)` runs the listener at every (re)connect, so users redo what a fresh server may
 * have lost (stream and consumer setup). `close()` drains: subscriptions finish what they hold and
 * publishes in flight are flushed before the socket closes.
 */
import { connect, Events, DebugEvents, type ConnectionOptions, type NatsConnection, type JetStreamClient, type JetStreamManager } from 'nats';

import type { TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { Backoff, Jitter } from '../common/index.js';
import type { BusAuth } from '../config/index.js';
import { busAuthError, natsConnectOptions, redactServer } from './bus-auth.js';

export const BusStatus = {
  Connecting: 'connecting',
  Connected: 'connected',
  Reconnecting: 'reconnecting',
  Disconnected: 'disconnected',
  Disabled: 'disabled',
} as const;
export type BusStatus = (typeof BusStatus)[keyof typeof BusStatus];

/** The status of a service whose bus is turned off. */
export const disabledBusStatus = (): BusStatus => BusStatus.Disabled;

export interface BusConnectionOptions {
  /** `nats://host:port` URLs (`bus.servers`). */
  servers: readonly string[];
  /** Connection name shown by the server (`tidepool-scanner`, `tidepool-quote-service`). */
  name: string;
  logger?: Logger;
  /** Wait between reconnect attempts of a live client, ms. Default 1000 (plus up to 1000 jitter). */
  reconnectWaitMs?: number;
  /** First-connect retry backoff ceiling, ms. Default 5000. */
  connectBackoffCapMs?: number;
  /** Per-attempt connect timeout, ms. Default 2000. */
  connectTimeoutMs?: number;
  /** Token, user/password, creds file and TLS (none: no auth, plain TCP). */
  auth?: BusAuth;
}

export type ConnectListener = (nc: NatsConnection) => void | Promise<void>;

export class BusConnection {
  private readonly options: BusConnectionOptions;
  private readonly log: Logger | undefined;
  private nc: NatsConnection | undefined;
  private state: BusStatus = BusStatus.Connecting;
  private readonly listeners: ConnectListener[] = [];
  private closing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private wakeRetry: (() => void) | undefined;
  private readonly opened: Promise<void>;
  private readonly connectOptions: Partial<ConnectionOptions>;
  private authFailure: TpError | undefined;

  private constructor(options: BusConnectionOptions) {
    this.options = options;
    this.log = options.logger;
    this.connectOptions = natsConnectOptions(options.auth ?? {});
    this.opened = this.connectLoop();
    // ready() hands the rejection to whoever asks; nobody asking is not a crash.
    this.opened.catch(() => undefined);
  }

  /** Starts connecting in the background; returns at once. Throws TP_ERR_CONFIG_INVALID for unusable `auth`. */
  static open(options: BusConnectionOptions): BusConnection {
    return new BusConnection(options);
  }

  get status(): BusStatus {
    return this.state;
  }

  get connected(): boolean {
    return this.state === BusStatus.Connected;
  }

  /** The client, once the first connect succeeded (it may be reconnecting). */
  get connection(): NatsConnection | undefined {
    return this.nc;
  }

  /** JetStream publish/consume API, undefined before the first connect. */
  jetstream(): JetStreamClient | undefined {
    return this.nc?.jetstream();
  }

  async jetstreamManager(): Promise<JetStreamManager | undefined> {
    return this.nc === undefined ? undefined : this.nc.jetstreamManager();
  }

  /**
   * Runs `listener` at every connect and reconnect (at once when already connected). Errors it
   * throws are logged, never propagated.
   */
  onConnect(listener: ConnectListener): void {
    this.listeners.push(listener);
    if (this.nc !== undefined && this.state === BusStatus.Connected) this.runListener(listener, this.nc);
  }

  /** The refusal that ended the attempts (TP_ERR_BUS_AUTH), if any. */
  get failure(): TpError | undefined {
    return this.authFailure;
  }

  /** Resolves at the first successful connect (or when closed first); rejects with TP_ERR_BUS_AUTH. */
  async ready(): Promise<void> {
    await this.opened;
  }

  /** Drains and closes. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
      this.wakeRetry?.();
      await this.opened.catch(() => undefined);
      const nc = this.nc;
      if (nc !== undefined && !nc.isClosed()) {
        try {
          await nc.drain();
        } catch {
          await nc.close().catch(() => undefined);
        }
      }
      this.state = BusStatus.Disconnected;
    })();
    return this.closing;
  }

  private async connectLoop(): Promise<void> {
    const backoff = new Backoff({ baseMs: 200, capMs: this.options.connectBackoffCapMs ?? 5000, jitter: Jitter.Decorrelated });
    const reconnectWait = this.options.reconnectWaitMs ?? 1000;
    for (;;) {
      if (this.closing !== undefined) return;
      try {
        const nc = await connect({
          servers: [...this.options.servers],
          name: this.options.name,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: reconnectWait,
          reconnectJitter: reconnectWait,
          timeout: this.options.connectTimeoutMs ?? 2000,
          ...this.connectOptions,
        });
        if (this.closing !== undefined) {
          await nc.close();
          return;
        }
        this.nc = nc;
        this.state = BusStatus.Connected;
        this.log?.info({ server: nc.getServer() }, 'bus connected');
        void this.watch(nc);
        for (const listener of this.listeners) this.runListener(listener, nc);
        return;
      } catch (err) {
        const refused = busAuthError(err, this.options.servers);
        if (refused !== undefined) {
          this.authFailure = refused;
          this.state = BusStatus.Disconnected;
          this.log?.error({ code: refused.code, err: refused.message }, 'bus refused the connection; not retrying');
          throw refused;
        }
        const delay = backoff.next();
        if (backoff.attempts === 1 || backoff.attempts % 10 === 0) {
          this.log?.warn({ err: err instanceof Error ? err.message : err, servers: this.options.servers.map(redactServer), retryInMs: Math.round(delay) }, 'bus connect failed; retrying');
        }
        await new Promise<void>((resolve) => {
          this.wakeRetry = resolve;
          this.retryTimer = setTimeout(resolve, delay);
        });
      }
    }
  }

  private async watch(nc: NatsConnection): Promise<void> {
    void nc.closed().then(() => {
      if (this.nc === nc) this.state = BusStatus.Disconnected;
    });
    for await (const s of nc.status()) {
      if (s.type === Events.Disconnect || s.type === DebugEvents.Reconnecting) {
        if (this.state === BusStatus.Connected) this.log?.warn({ server: s.data }, 'bus disconnected; reconnecting');
        if (this.closing === undefined) this.state = BusStatus.Reconnecting;
      } else if (s.type === Events.Reconnect) {
        this.state = BusStatus.Connected;
        this.log?.info({ server: s.data }, 'bus reconnected');
        for (const listener of this.listeners) this.runListener(listener, nc);
      }
    }
  }

  private runListener(listener: ConnectListener, nc: NatsConnection): void {
    try {
      void Promise.resolve(listener(nc)).catch((err: unknown) => this.log?.warn({ err }, 'bus connect listener failed'));
    } catch (err) {
      this.log?.warn({ err }, 'bus connect listener failed');
    }
  }
}

/**
 * One connection that reconnects forever once made (the planner's and the executor's), with `auth`;
 * a refusal of the credentials or of TLS is TP_ERR_BUS_AUTH, other failures as the client throws them.
 */
export async function connectBus(options: { servers: readonly string[]; name: string; auth?: BusAuth }): Promise<NatsConnection> {
  const extra = natsConnectOptions(options.auth ?? {});
  try {
    return await connect({ servers: [...options.servers], name: options.name, maxReconnectAttempts: -1, ...extra });
  } catch (err) {
    throw busAuthError(err, options.servers) ?? err;
  }
}
