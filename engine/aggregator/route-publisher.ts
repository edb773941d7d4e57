/**
 * The aggregator's SwapRouteEvent publisher (spec 01, Events): each event is encoded to FlatBuffers
 * (`encodeSwapRouteEvent`) and published asynchronously on `market.swap_route.optimal` to the
 * persistent MARKET_SWAP_ROUTES stream (engine/bus/swap-route-stream.ts), which it sets up
 * idempotently at every (re)connect.
 *
 * Contract (contracts.ts `RoutePublisher`): `publish()` never throws and never waits; the JetStream
 * acknowledgement is awaited in the background and counted:
 *
 *   acked                                  → published (a duplicate ack too: the stream holds it)
 *   refused, timed out, encode failure     → errors
 *   bus not connected                      → errors, at once (no queue behind a dead bus)
 *   `maxPending` already awaiting acks,
 *   or publish after close()               → dropped
 *
 * Deduplication: the message id is `pairId:routeHash:createdAtMs` of the encoded event, so a second
 * publish of the same event (a caller's retry) is dropped by the stream within its duplicate window.
 *
 * Bus outages: the nats client reconnects forever (BusConnection); while it is disconnected every
 * publish fails fast and is counted, so memory stays bounded by `maxPending` whatever the bus does.
 *
 * close(timeoutMs): stops accepting, waits for the acks in flight up to the timeout, counts what is
 * still unacknowledged as errors, then drains and closes the connection if the publisher opened it
 * (a shared BusConnection or NatsConnection is left to its owner).
 */
import * as flatbuffers from 'flatbuffers';
import { DebugEvents, Events, type JetStreamClient, type NatsConnection } from 'nats';

import type { BusAuth } from '../config/index.js';
import { BusConnection } from '../bus/index.js';
import { ensureSwapRoutesStream, swapRoutesStreamSpec } from '../bus/index.js';
import type { Logger } from '../obs/index.js';
import { LogThrottle } from '../obs/index.js';
import type { RoutePublisher, RoutePublisherStats } from './contracts.js';
import { SwapRouteEvent as FbSwapRouteEvent } from './generated/swap-route-event_generated.js';
import { encodeSwapRouteEvent, SWAP_ROUTE_SUBJECT, type SwapRouteEventFields } from './swap-route-event.js';

export const DEFAULT_ROUTE_MAX_PENDING = 10_000;
export const DEFAULT_ROUTE_PUBLISH_TIMEOUT_MS = 2_000;
/** Connection name the server shows for a publisher that opens its own connection. */
export const ROUTE_PUBLISHER_CONNECTION_NAME = 'tidepool-aggregator-routes';

export interface SwapRoutePublisherOptions {
  /**
   * The bus: `nats://` URL(s) to connect to (the publisher owns that connection and closes it), or
   * a shared BusConnection / open NatsConnection (left open by close()).
   */
  bus: string | readonly string[] | BusConnection | NatsConnection;
  /** Credentials and TLS of the connection the publisher opens from URL(s). */
  auth?: BusAuth;
  logger: Logger;
  /** Publishes awaiting their ack at once; more are dropped. Default 10,000. */
  maxPending?: number;
  /** Wait for each ack, ms. Default 2000. */
  publishTimeoutMs?: number;
  /** Stream replicas; default `detectReplicas` of the connection. */
  replicas?: number;
  /** Prefix of stream name and subject, for tests beside a developer's stream. Default none. */
  prefix?: string;
  /** Multiplies the stream's max bytes (`bus.streamMaxBytesScale`); default 1, its 5 GiB. */
  maxBytesScale?: number;
  /** Reconnect wait of an owned connection, ms (BusConnection's default when absent). */
  reconnectWaitMs?: number;
}

/** What the publisher needs of a connection, whichever kind it was given. */
interface BusLink {
  readonly connected: boolean;
  /** The current client (it changes only on an owned/shared BusConnection's first connect). */
  connection(): NatsConnection | undefined;
  /** Closes what the publisher owns, within `ms`. */
  close(ms: number): Promise<void>;
}

export class SwapRoutePublisher implements RoutePublisher {
  private readonly log: Logger;
  private readonly link: BusLink;
  private readonly subject: string;
  private readonly streamName: string;
  private readonly maxPending: number;
  private readonly timeoutMs: number;
  private readonly throttle = new LogThrottle(10_000);
  private readonly counters = { published: 0, errors: 0, pending: 0, dropped: 0 };
  private js: { nc: NatsConnection; js: JetStreamClient } | undefined;
  private closed = false;
  /** Set when close() gave up on the acks in flight (already counted as errors). */
  private abandoned = false;
  private onIdle: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  private constructor(options: SwapRoutePublisherOptions, link: (publisher: SwapRoutePublisher) => BusLink) {
    this.log = options.logger;
    const prefix = options.prefix ?? '';
    this.subject = `${prefix}${SWAP_ROUTE_SUBJECT}`;
    this.streamName = swapRoutesStreamSpec({ prefix }).name;
    this.maxPending = options.maxPending ?? DEFAULT_ROUTE_MAX_PENDING;
    this.timeoutMs = options.publishTimeoutMs ?? DEFAULT_ROUTE_PUBLISH_TIMEOUT_MS;
    this.link = link(this);
  }

  /**
   * Starts the publisher. With URLs or a BusConnection it resolves at once: connecting and stream
   * setup happen in the background at every (re)connect, so a bus that is down at start does not
   * hold the aggregator. With an open NatsConnection the stream is set up before it resolves
   * (rejects with TP_ERR_BUS_SETUP when that fails).
   */
  static async open(options: SwapRoutePublisherOptions): Promise<SwapRoutePublisher> {
    const setup = (nc: NatsConnection): Promise<void> => ensureStreamOn(nc, options);
    const { bus } = options;
    if (typeof bus === 'string' || Array.isArray(bus)) {
      const owned = BusConnection.open({
        servers: typeof bus === 'string' ? [bus] : [...(bus as readonly string[])],
        name: ROUTE_PUBLISHER_CONNECTION_NAME,
        ...(options.auth === undefined ? {} : { auth: options.auth }),
        logger: options.logger,
        ...(options.reconnectWaitMs === undefined ? {} : { reconnectWaitMs: options.reconnectWaitMs }),
      });
      return new SwapRoutePublisher(options, (p) => p.busLink(owned, true, setup));
    }
    if (bus instanceof BusConnection) return new SwapRoutePublisher(options, (p) => p.busLink(bus, false, setup));
    const nc = bus as NatsConnection;
    await setup(nc);
    return new SwapRoutePublisher(options, (p) => p.natsLink(nc, setup));
  }

  stats(): RoutePublisherStats {
    return { enabled: true, connected: this.link.connected, ...this.counters };
  }

  publish(fields: SwapRouteEventFields): void {
    if (this.closed || this.counters.pending >= this.maxPending) {
      this.counters.dropped++;
      if (!this.closed) this.warn('full', { maxPending: this.maxPending }, 'route publisher: too many publishes await their ack; event dropped');
      return;
    }
    const js = this.jetstream();
    if (js === undefined) {
      this.counters.errors++;
      this.warn('disconnected', {}, 'route publisher: bus not connected; event not published');
      return;
    }
    let data: Uint8Array;
    try {
      // createdAtMs is fixed here so the message id and the event agree.
      data = encodeSwapRouteEvent(fields.createdAtMs === undefined ? { ...fields, createdAtMs: Date.now() } : fields);
    } catch (err) {
      this.counters.errors++;
      this.warn('encode', { err }, 'route publisher: event could not be encoded');
      return;
    }
    this.counters.pending++;
    let promise: Promise<unknown>;
    try {
      promise = js.publish(this.subject, data, { msgID: messageIdOf(data), timeout: this.timeoutMs, expect: { streamName: this.streamName } });
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      () => this.settle(true, undefined),
      (err: unknown) => this.settle(false, err),
    );
  }

  close(timeoutMs: number): Promise<void> {
    this.closing ??= this.shutdown(timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    if (this.counters.pending > 0) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<boolean>((resolve) => {
        this.onIdle = () => resolve(true);
        timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
      });
      const flushed = await idle;
      clearTimeout(timer);
      this.onIdle = undefined;
      if (!flushed) {
        const left = this.counters.pending;
        this.abandoned = true;
        this.counters.errors += left;
        this.counters.pending = 0;
        this.log.warn({ unacknowledged: left, timeoutMs }, 'route publisher: close timed out; unacknowledged events counted as errors');
      }
    }
    await this.link.close(Math.max(0, deadline - Date.now()));
    this.log.info({ ...this.counters }, 'route publisher closed');
  }

  private settle(ok: boolean, err: unknown): void {
    if (this.abandoned) return;
    this.counters.pending--;
    if (ok) this.counters.published++;
    else {
      this.counters.errors++;
      this.warn('publish', { err: err instanceof Error ? err.message : String(err), subject: this.subject }, 'route publisher: publish failed');
    }
    if (this.counters.pending === 0) this.onIdle?.();
  }

  /** The JetStream client of the current connection while it is connected. */
  private jetstream(): JetStreamClient | undefined {
    if (!this.link.connected) return undefined;
    const nc = this.link.connection();
    if (nc === undefined) return undefined;
    if (this.js?.nc !== nc) this.js = { nc, js: nc.jetstream() };
    return this.js.js;
  }

  private warn(key: string, fields: Record<string, unknown>, message: string): void {
    const suppressed = this.throttle.take(key);
    if (suppressed >= 0) this.log.warn({ ...fields, suppressed }, message);
  }

  private busLink(bus: BusConnection, owned: boolean, setup: (nc: NatsConnection) => Promise<void>): BusLink {
    bus.onConnect((nc) => setup(nc).catch((err: unknown) => this.log.error({ err }, 'route publisher: stream setup failed; publishes fail until a reconnect sets it up')));
    return {
      get connected() {
        return bus.connected;
      },
      connection: () => bus.connection,
      close: async (ms) => {
        if (!owned) return;
        // Drain waits on the server; an unresponsive one must not hold shutdown past the deadline.
        const drained = await raceTimeout(bus.close().then(() => true), ms);
        if (!drained) await bus.connection?.close().catch(() => undefined);
      },
    };
  }

  private natsLink(nc: NatsConnection, setup: (nc: NatsConnection) => Promise<void>): BusLink {
    let connected = !nc.isClosed();
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === Events.Disconnect || s.type === DebugEvents.Reconnecting) connected = false;
        else if (s.type === Events.Reconnect) {
          connected = true;
          // A restarted server may have lost the stream.
          setup(nc).catch((err: unknown) => this.log.error({ err }, 'route publisher: stream setup failed after reconnect'));
        }
      }
    })();
    void nc.closed().then(() => {
      connected = false;
    });
    return {
      get connected() {
        return connected && !nc.isClosed();
      },
      connection: () => nc,
      close: async () => undefined,
    };
  }
}

async function ensureStreamOn(nc: NatsConnection, options: SwapRoutePublisherOptions): Promise<void> {
  await ensureSwapRoutesStream(await nc.jetstreamManager(), {
    nc,
    ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    ...(options.maxBytesScale === undefined ? {} : { maxBytesScale: options.maxBytesScale }),
  });
}

/** `pairId:routeHash:createdAtMs`, read back from the encoded event (the encoder derived them). */
export function messageIdOf(event: Uint8Array): string {
  const root = FbSwapRouteEvent.getRootAsSwapRouteEvent(new flatbuffers.ByteBuffer(event));
  return `${root.pairId() ?? ''}:${root.routeHash() ?? ''}:${root.createdAtMs()}`;
}

/** True when `promise` settles within `ms`, false when the time runs out first. */
async function raceTimeout(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
