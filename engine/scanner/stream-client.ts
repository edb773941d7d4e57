import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';

import * as grpc from '@grpc/grpc-js';

import { createLogger, type Logger } from '../obs/index.js';
import { loadShredstreamProto } from '../proto.js';
import { Backoff, type BackoffOptions } from '../common/index.js';
import { decodeEntryMessage, type EntryMessage } from './entry-message.js';

/**
 * The scanner's client of the block-entry stream (ShredStream proxy API, docs/wire-formats.md §1): one
 * `SubscribeEntries` call kept open for the life of the scanner, reconnected with exponential
 * backoff whenever it ends, and, when enabled, `SendHeartbeat` every ttl_ms / 3.
 *
 * Spec 02 failure table: "block-data stream disconnects → reconnects with exponential backoff;
 * alert after more than 10 s". The client reports its state through `connected` events (the
 * `blockstream_scanner_connected` gauge), counts connection errors, and logs one error with
 * `alert: 'blockstream_disconnected'` once it has been disconnected for `alertAfterMs`, then one
 * info line with the same field and `resolved: true` when the stream is back.
 */

/** One Entry message as the scanner's pipeline receives it. */
export interface StreamEntry {
  slot: bigint;
  /** bincode Vec<Entry>: a view on the received gRPC frame, not a copy. */
  entries: Uint8Array;
  /** performance.now() when the message was handed to the client. */
  receivedAt: number;
}

export type StreamEntryHandler = (entry: StreamEntry) => void;

export interface HeartbeatOptions {
  /** Shred destination ip; the block engine requires the caller's own IP. */
  ip: string;
  /** Shred destination UDP port. */
  port: number;
  /** At most two are sent (the block engine uses two). */
  regions: readonly string[];
  /** Interval before the first answer and after a failed heartbeat, in ms. Default 1000. */
  fallbackIntervalMs?: number;
  /** Deadline of one SendHeartbeat call, in ms. Default 5000. */
  timeoutMs?: number;
}

export interface BlockStreamClientOptions {
  host: string;
  port: number;
  onEntry: StreamEntryHandler;
  /** Reconnect delays; a Backoff instance or its options. Default: 100 ms base, ×2, 10 s cap, decorrelated jitter. */
  backoff?: Backoff | BackoffOptions;
  /** A connection that lasted this long resets the backoff to its first delay. Default 5000 ms. */
  stableAfterMs?: number;
  /** Disconnected this long → the alert log. Default 10 000 ms (spec 02). */
  alertAfterMs?: number;
  /** Heartbeats, sent on the same channel; undefined = off. */
  heartbeat?: HeartbeatOptions;
  /** Extra grpc-js channel options, merged over the client's defaults. */
  channelOptions?: grpc.ChannelOptions;
  logger?: Logger;
  /** Clock for durations, in ms. Default performance.now. */
  now?: () => number;
}

export interface BlockStreamStats {
  connected: boolean;
  /** Streams that ended with an error status, or an unexpected clean end. */
  connectionErrors: number;
  /** Successful (re)connections, the first included. */
  connections: number;
  entriesReceived: number;
  /** onEntry threw (logged, stream kept). */
  handlerErrors: number;
  heartbeatsSent: number;
  heartbeatErrors: number;
  /** ttl_ms of the last heartbeat answer; 0 before the first. */
  lastHeartbeatTtlMs: number;
}

export interface BlockStreamEvents {
  connected: [connected: boolean];
  connectionError: [error: grpc.StatusObject];
  heartbeat: [ttlMs: number, nextInMs: number];
  heartbeatError: [error: grpc.ServiceError];
}

/** The stable field of the alert-worthy log lines. */
export const DISCONNECTED_ALERT = 'blockstream_disconnected';
export const DEFAULT_ALERT_AFTER_MS = 10_000;
export const DEFAULT_STABLE_AFTER_MS = 5_000;
export const DEFAULT_HEARTBEAT_FALLBACK_INTERVAL_MS = 1_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 5_000;
/** The block engine uses at most two regions (docs/wire-formats.md §1). */
export const MAX_HEARTBEAT_REGIONS = 2;
/** Never heartbeat more often than this, whatever ttl_ms says. */
const MIN_HEARTBEAT_INTERVAL_MS = 10;
const MAX_ENTRY_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Keepalive pings find a dead TCP path that the stream itself would not notice (the upstream sends
 * nothing while no slot completes). The channel's own reconnect backoff is kept at or below ours,
 * or grpc-js would fail our attempts for up to its 120 s default after an outage.
 */
function defaultChannelOptions(backoff: Backoff): grpc.ChannelOptions {
  return {
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.initial_reconnect_backoff_ms': backoff.baseMs,
    'grpc.max_reconnect_backoff_ms': backoff.capMs,
    'grpc.max_receive_message_length': MAX_ENTRY_MESSAGE_BYTES,
  };
}

interface HeartbeatResponse {
  ttl_ms?: number;
}

export class BlockStreamClient extends EventEmitter<BlockStreamEvents> {
  readonly target: string;
  private readonly onEntry: StreamEntryHandler;
  private readonly backoff: Backoff;
  private readonly stableAfterMs: number;
  private readonly alertAfterMs: number;
  private readonly heartbeatOptions: HeartbeatOptions | undefined;
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly log: Logger;
  private readonly now: () => number;

  private client: grpc.Client | undefined;
  private call: grpc.ClientReadableStream<EntryMessage> | undefined;
  private heartbeatCall: grpc.ClientUnaryCall | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private alertTimer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;
  private isConnected = false;
  private connectedAt = 0;
  private disconnectedAt = 0;
  private alerted = false;
  private readonly counters: Omit<BlockStreamStats, 'connected'> = {
    connectionErrors: 0,
    connections: 0,
    entriesReceived: 0,
    handlerErrors: 0,
    heartbeatsSent: 0,
    heartbeatErrors: 0,
    lastHeartbeatTtlMs: 0,
  };

  constructor(options: BlockStreamClientOptions) {
    super();
    this.target = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
    this.onEntry = options.onEntry;
    this.backoff = options.backoff instanceof Backoff ? options.backoff : new Backoff(options.backoff);
    this.stableAfterMs = options.stableAfterMs ?? DEFAULT_STABLE_AFTER_MS;
    this.alertAfterMs = options.alertAfterMs ?? DEFAULT_ALERT_AFTER_MS;
    this.heartbeatOptions = options.heartbeat;
    this.channelOptions = { ...defaultChannelOptions(this.backoff), ...options.channelOptions };
    this.log = options.logger ?? createLogger({ name: 'scanner' });
    this.now = options.now ?? (() => performance.now());
  }

  get connected(): boolean {
    return this.isConnected;
  }

  stats(): BlockStreamStats {
    return { connected: this.isConnected, ...this.counters };
  }

  /** Opens the channel, subscribes, and starts heartbeats when configured. Idempotent. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.client = new grpc.Client(this.target, grpc.credentials.createInsecure(), this.channelOptions);
    this.markDisconnectedSince(this.now());
    this.subscribe();
    if (this.heartbeatOptions !== undefined) this.sendHeartbeat();
  }

  /** Cancels the stream and any heartbeat, stops every timer and closes the channel. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.alertTimer);
    this.reconnectTimer = this.heartbeatTimer = this.alertTimer = undefined;
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    this.heartbeatCall?.cancel();
    this.heartbeatCall = undefined;
    if (this.isConnected) {
      this.isConnected = false;
      this.emit('connected', false);
    }
    this.client?.close();
    this.client = undefined;
    this.log.info({ target: this.target }, 'block stream client closed');
  }

  private subscribe(): void {
    const client = this.client;
    if (client === undefined || this.closed) return;
    const method = loadShredstreamProto().ShredstreamProxy.service['SubscribeEntries']!;
    const call = client.makeServerStreamRequest<unknown, EntryMessage>(
      method.path,
      method.requestSerialize,
      decodeEntryMessage,
      {},
      new grpc.Metadata(),
    );
    this.call = call;
    // The server sends its headers when it accepts the subscription: that is "connected".
    call.on('metadata', () => {
      if (this.call === call) this.markConnected();
    });
    call.on('data', (message: EntryMessage) => this.deliver(call, message));
    // 'error' always precedes 'status' for a non-OK status; 'status' is where the call ends.
    call.on('error', () => {});
    call.on('status', (status: grpc.StatusObject) => this.onCallEnded(call, status));
  }

  private deliver(call: grpc.ClientReadableStream<EntryMessage>, message: EntryMessage): void {
    const receivedAt = performance.now();
    if (this.call !== call) return;
    if (!this.isConnected) this.markConnected();
    this.counters.entriesReceived++;
    try {
      this.onEntry({ slot: message.slot, entries: message.entries, receivedAt });
    } catch (err) {
      this.counters.handlerErrors++;
      this.log.error({ err, slot: message.slot.toString() }, 'block stream entry handler failed');
    }
  }

  private onCallEnded(call: grpc.ClientReadableStream<EntryMessage>, status: grpc.StatusObject): void {
    if (this.call !== call || this.closed) return;
    this.call = undefined;
    const now = this.now();
    const wasConnected = this.isConnected;
    if (wasConnected && now - this.connectedAt >= this.stableAfterMs) this.backoff.reset();
    // A server-streaming subscription never ends on its own: even an OK end is a lost stream.
    this.counters.connectionErrors++;
    this.emit('connectionError', status);
    const delayMs = this.backoff.next();
    this.log.warn(
      { target: this.target, code: status.code, details: status.details, wasConnected, retryInMs: delayMs, attempt: this.backoff.attempts },
      'block stream disconnected; reconnecting',
    );
    if (wasConnected) {
      this.isConnected = false;
      this.markDisconnectedSince(now);
      this.emit('connected', false);
    }
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.subscribe();
    }, delayMs);
  }

  private markConnected(): void {
    if (this.isConnected) return;
    const now = this.now();
    this.isConnected = true;
    this.connectedAt = now;
    this.counters.connections++;
    clearTimeout(this.alertTimer);
    this.alertTimer = undefined;
    if (this.alerted) {
      this.alerted = false;
      this.log.info(
        { alert: DISCONNECTED_ALERT, resolved: true, target: this.target, disconnectedForMs: Math.round(now - this.disconnectedAt) },
        'block stream reconnected after an alerted outage',
      );
    } else {
      this.log.info({ target: this.target, connections: this.counters.connections }, 'block stream connected');
    }
    this.emit('connected', true);
  }

  /** Spec 02: alert after more than alertAfterMs disconnected; armed once per outage. */
  private markDisconnectedSince(at: number): void {
    this.disconnectedAt = at;
    this.armAlert(this.alertAfterMs);
  }

  private armAlert(delayMs: number): void {
    clearTimeout(this.alertTimer);
    this.alertTimer = setTimeout(() => {
      this.alertTimer = undefined;
      if (this.isConnected || this.closed) return;
      // Timers may fire a fraction of a millisecond early against this clock: wait out the rest.
      const left = this.alertAfterMs - (this.now() - this.disconnectedAt);
      if (left > 0) {
        this.armAlert(Math.ceil(left));
        return;
      }
      this.alerted = true;
      this.log.error(
        {
          alert: DISCONNECTED_ALERT,
          target: this.target,
          disconnectedForMs: Math.round(this.now() - this.disconnectedAt),
          connectionErrors: this.counters.connectionErrors,
        },
        'block stream disconnected for too long',
      );
    }, delayMs);
  }

  private readonly sendHeartbeat = (): void => {
    this.heartbeatTimer = undefined;
    const options = this.heartbeatOptions;
    const client = this.client;
    if (options === undefined || client === undefined || this.closed) return;
    const method = loadShredstreamProto().Shredstream.service['SendHeartbeat']!;
    const request = {
      socket: { ip: options.ip, port: String(options.port) },
      regions: options.regions.slice(0, MAX_HEARTBEAT_REGIONS),
    };
    const fallbackMs = options.fallbackIntervalMs ?? DEFAULT_HEARTBEAT_FALLBACK_INTERVAL_MS;
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
    const call = client.makeUnaryRequest<unknown, HeartbeatResponse>(
      method.path,
      method.requestSerialize,
      method.responseDeserialize as (bytes: Buffer) => HeartbeatResponse,
      request,
      new grpc.Metadata(),
      { deadline },
      (err, response) => {
        if (this.heartbeatCall === call) this.heartbeatCall = undefined;
        if (this.closed) return;
        if (err !== null || response === undefined) {
          this.counters.heartbeatErrors++;
          this.log.warn({ target: this.target, code: err?.code, details: err?.details, retryInMs: fallbackMs }, 'heartbeat failed');
          if (err !== null) this.emit('heartbeatError', err);
          this.scheduleHeartbeat(fallbackMs);
          return;
        }
        const ttlMs = response.ttl_ms ?? 0;
        this.counters.heartbeatsSent++;
        this.counters.lastHeartbeatTtlMs = ttlMs;
        // Reference §1: the proxy sends the next heartbeat ttl_ms / 3 after the answer.
        const nextMs = ttlMs > 0 ? Math.max(MIN_HEARTBEAT_INTERVAL_MS, Math.floor(ttlMs / 3)) : fallbackMs;
        this.emit('heartbeat', ttlMs, nextMs);
        this.scheduleHeartbeat(nextMs);
      },
    );
    this.heartbeatCall = call;
  };

  private scheduleHeartbeat(delayMs: number): void {
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(this.sendHeartbeat, delayMs);
  }
}
