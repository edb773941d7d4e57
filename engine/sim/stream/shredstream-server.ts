import * as grpc from '@grpc/grpc-js';

import { ErrorCode, TpError } from '../../errors.js';
import { createLogger, type Logger } from '../../obs/index.js';
import { loadShredstreamProto } from '../../proto.js';
import type { ChainBackend, EntryBatch } from '../chain-backend.js';
import { FaultInjector, type FaultAction } from '../faults.js';
import { applyEntryFaults, EntryFault } from './entry-faults.js';
import { encodeEntryMessage } from './entry-message.js';
import { HeartbeatInvalid, peerIp, validateHeartbeat, type HeartbeatRecord, type HeartbeatRequest } from './heartbeat.js';

/**
 * The simulator's ShredStream endpoint: `shredstream.ShredstreamProxy/SubscribeEntries` as the
 * local proxy serves it, and `shredstream.Shredstream/SendHeartbeat` as the block engine serves it,
 * on one gRPC port. Every EntryBatch of the chain goes to every subscriber as one Entry message.
 *
 * A subscriber that does not keep up loses batches instead of growing the server's memory, as the
 * real proxy's bounded broadcast channel skips lagging receivers: once the bytes written to a
 * subscriber but not yet flushed to its HTTP/2 stream reach the cap, its batches are dropped and
 * counted until the stream drains. grpc-js' own backpressure signal (write() returning false past a
 * high-water mark of a few messages) is not a reason to drop: a healthy subscriber sees bursts, and
 * the byte cap already bounds memory.
 */

export const SHREDSTREAM_DEFAULT_HOST = '127.0.0.1';
export const SHREDSTREAM_DEFAULT_PORT = 9999;
export const HEARTBEAT_DEFAULT_TTL_MS = 5000;
/** Bytes queued towards one subscriber beyond which its batches are dropped (one message always fits). */
export const DEFAULT_MAX_QUEUED_BYTES_PER_SUBSCRIBER = 8 * 1024 * 1024;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 2000;
/** Heartbeat records kept, by shred destination; the oldest goes first. */
const MAX_HEARTBEAT_RECORDS = 1024;

export interface ShredstreamServerOptions {
  /** Only `onEntries` is used. */
  backend: Pick<ChainBackend, 'onEntries'>;
  /** Stream faults (stall, garbage, truncate) and the `stream.disconnect` action. Default: none. */
  faults?: FaultInjector;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 9999; 0 picks a free port (see start()). */
  port?: number;
  /** HeartbeatResponse.ttl_ms. Default 5000. */
  heartbeatTtlMs?: number;
  /** Require Heartbeat.socket.ip to equal the caller's IP, as the block engine does. Default true. */
  checkHeartbeatCallerIp?: boolean;
  /** Default 8 MiB. */
  maxQueuedBytesPerSubscriber?: number;
  /** How long close() waits for calls to finish before forcing. Default 2000 ms. */
  shutdownTimeoutMs?: number;
  logger?: Logger;
}

export interface ShredstreamStats {
  /** Open SubscribeEntries streams. */
  subscribers: number;
  subscribersTotal: number;
  /** Batches the backend delivered. */
  batchesReceived: number;
  /** Entry messages written, summed over subscribers. */
  batchesSent: number;
  /** Entry messages not written because their subscriber lagged, summed over subscribers. */
  batchesDropped: number;
  /** Batches not sent because the stream was stalled. */
  batchesStalled: number;
  garbageBatches: number;
  truncatedBatches: number;
  /** Streams ended by the `stream.disconnect` action. */
  disconnects: number;
  heartbeats: number;
  heartbeatsRejected: number;
  /** Bytes written but not yet taken by HTTP/2, summed over subscribers. */
  queuedBytes: number;
  /** The most bytes ever queued towards one subscriber. */
  maxQueuedBytes: number;
}

interface Subscriber {
  readonly id: number;
  readonly call: grpc.ServerWritableStream<unknown, Buffer>;
  readonly peer: string;
  queuedBytes: number;
  /** Inside a run of dropped batches (for logging once per run). */
  lagging: boolean;
  dropped: number;
}

type Counters = Omit<ShredstreamStats, 'subscribers' | 'queuedBytes'>;

export class ShredstreamServer {
  private readonly backend: Pick<ChainBackend, 'onEntries'>;
  private readonly faults: FaultInjector;
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly heartbeatTtlMs: number;
  private readonly checkCallerIp: boolean;
  private readonly maxQueuedBytes: number;
  private readonly shutdownTimeoutMs: number;
  private readonly log: Logger;

  private server: grpc.Server | undefined;
  private boundPort = 0;
  private unsubscribeEntries: (() => void) | undefined;
  private readonly subscribers = new Set<Subscriber>();
  private readonly heartbeatRecords = new Map<string, HeartbeatRecord>();
  private nextSubscriberId = 1;
  private readonly counters: Counters = {
    subscribersTotal: 0,
    batchesReceived: 0,
    batchesSent: 0,
    batchesDropped: 0,
    batchesStalled: 0,
    garbageBatches: 0,
    truncatedBatches: 0,
    disconnects: 0,
    heartbeats: 0,
    heartbeatsRejected: 0,
    maxQueuedBytes: 0,
  };

  constructor(options: ShredstreamServerOptions) {
    this.backend = options.backend;
    this.faults = options.faults ?? new FaultInjector();
    this.host = options.host ?? SHREDSTREAM_DEFAULT_HOST;
    this.requestedPort = options.port ?? SHREDSTREAM_DEFAULT_PORT;
    this.heartbeatTtlMs = options.heartbeatTtlMs ?? HEARTBEAT_DEFAULT_TTL_MS;
    this.checkCallerIp = options.checkHeartbeatCallerIp ?? true;
    this.maxQueuedBytes = options.maxQueuedBytesPerSubscriber ?? DEFAULT_MAX_QUEUED_BYTES_PER_SUBSCRIBER;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    this.log = options.logger ?? createLogger({ name: 'sim-shredstream' });
    if (!Number.isInteger(this.heartbeatTtlMs) || this.heartbeatTtlMs < 1 || this.heartbeatTtlMs > 0xffff_ffff) {
      throw new TpError(ErrorCode.ConfigInvalid, `heartbeatTtlMs must be a u32 above 0, got ${this.heartbeatTtlMs}`);
    }
    if (!Number.isInteger(this.requestedPort) || this.requestedPort < 0 || this.requestedPort > 65535) {
      throw new TpError(ErrorCode.ConfigInvalid, `port must be in 0..65535, got ${this.requestedPort}`);
    }
  }

  /** The bound port (after start()). */
  get port(): number {
    return this.boundPort;
  }

  /** Binds and starts serving; resolves with the bound port. */
  async start(): Promise<number> {
    if (this.server !== undefined) return this.boundPort;
    const proto = loadShredstreamProto();
    const server = new grpc.Server();
    server.addService(subscribeServiceWithRawResponses(proto.ShredstreamProxy.service), {
      SubscribeEntries: (call: grpc.ServerWritableStream<unknown, Buffer>) => this.subscribe(call),
    });
    server.addService(proto.Shredstream.service, {
      SendHeartbeat: (
        call: grpc.ServerUnaryCall<HeartbeatRequest, unknown>,
        callback: grpc.sendUnaryData<{ ttl_ms: number }>,
      ) => this.heartbeat(call, callback),
    });
    const address = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.requestedPort}`;
    this.boundPort = await new Promise<number>((resolve, reject) => {
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err !== null) {
          reject(new TpError(ErrorCode.Io, `ShredStream gRPC server cannot bind ${address}: ${err.message}`, { cause: err, context: { address } }));
        } else {
          resolve(port);
        }
      });
    });
    this.server = server;
    this.unsubscribeEntries = this.backend.onEntries((batch) => this.broadcast(batch));
    this.faults.on('action', this.onFaultAction);
    this.log.info({ host: this.host, port: this.boundPort }, 'ShredStream gRPC server listening');
    return this.boundPort;
  }

  /**
   * Ends every stream (UNAVAILABLE, so clients reconnect), waits up to shutdownTimeoutMs for the
   * calls to finish, then forces the rest.
   */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    this.unsubscribeEntries?.();
    this.unsubscribeEntries = undefined;
    this.faults.off('action', this.onFaultAction);
    this.endAll(grpc.status.UNAVAILABLE, 'server shutting down');
    await new Promise<void>((resolve) => {
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        server.forceShutdown();
        done();
      }, this.shutdownTimeoutMs);
      server.tryShutdown(done);
    });
    this.log.info({ port: this.boundPort }, 'ShredStream gRPC server closed');
  }

  /** Ends every open SubscribeEntries stream with UNAVAILABLE; returns how many were open. */
  disconnectAll(details = 'stream disconnected (injected fault)'): number {
    const n = this.endAll(grpc.status.UNAVAILABLE, details);
    this.counters.disconnects += n;
    this.log.warn({ streams: n }, 'ShredStream streams disconnected');
    return n;
  }

  stats(): ShredstreamStats {
    let queuedBytes = 0;
    for (const sub of this.subscribers) queuedBytes += sub.queuedBytes;
    return { subscribers: this.subscribers.size, queuedBytes, ...this.counters };
  }

  /** The last heartbeat of each shred destination, oldest first. */
  heartbeats(): HeartbeatRecord[] {
    return [...this.heartbeatRecords.values()].map((r) => ({ ...r, regions: [...r.regions] }));
  }

  private readonly onFaultAction = (action: FaultAction): void => {
    if (action === 'stream.disconnect') this.disconnectAll();
  };

  private subscribe(call: grpc.ServerWritableStream<unknown, Buffer>): void {
    if (this.server === undefined) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'server shutting down' });
      return;
    }
    const sub: Subscriber = {
      id: this.nextSubscriberId++,
      call,
      peer: call.getPeer(),
      queuedBytes: 0,
      lagging: false,
      dropped: 0,
    };
    this.subscribers.add(sub);
    this.counters.subscribersTotal++;
    const remove = (): void => {
      if (this.subscribers.delete(sub)) {
        this.log.debug({ subscriber: sub.id, peer: sub.peer, dropped: sub.dropped }, 'subscriber left');
      }
    };
    call.on('cancelled', remove);
    call.on('close', remove);
    call.on('error', remove);
    // Headers now, so a client sees the stream open before the first batch.
    call.sendMetadata(new grpc.Metadata());
    this.log.debug({ subscriber: sub.id, peer: sub.peer }, 'subscriber joined');
  }

  private broadcast(batch: EntryBatch): void {
    this.counters.batchesReceived++;
    if (this.subscribers.size === 0) return;
    if (this.faults.stream.stall) {
      this.counters.batchesStalled++;
      return;
    }
    const { entries, fault } = applyEntryFaults(batch.entries, this.faults);
    if (fault === EntryFault.Garbage) this.counters.garbageBatches++;
    else if (fault === EntryFault.Truncate) this.counters.truncatedBatches++;
    const message = encodeEntryMessage(batch.slot, entries);
    for (const sub of this.subscribers) this.deliver(sub, message);
  }

  private deliver(sub: Subscriber, message: Buffer): void {
    const size = message.length;
    if (sub.queuedBytes > 0 && sub.queuedBytes + size > this.maxQueuedBytes) {
      sub.dropped++;
      this.counters.batchesDropped++;
      if (!sub.lagging) {
        sub.lagging = true;
        this.log.warn({ subscriber: sub.id, peer: sub.peer, queuedBytes: sub.queuedBytes }, 'subscriber lagging: dropping batches');
      }
      return;
    }
    sub.lagging = false;
    sub.queuedBytes += size;
    if (sub.queuedBytes > this.counters.maxQueuedBytes) this.counters.maxQueuedBytes = sub.queuedBytes;
    this.counters.batchesSent++;
    sub.call.write(message, () => {
      sub.queuedBytes -= size;
    });
  }

  private endAll(code: grpc.status, details: string): number {
    const subs = [...this.subscribers];
    this.subscribers.clear();
    for (const sub of subs) {
      // grpc-js turns an 'error' with {code, details} into the call's status and ends the stream.
      sub.call.emit('error', Object.assign(new Error(details), { code, details }));
    }
    return subs.length;
  }

  private heartbeat(
    call: grpc.ServerUnaryCall<HeartbeatRequest, unknown>,
    callback: grpc.sendUnaryData<{ ttl_ms: number }>,
  ): void {
    const peer = call.getPeer();
    try {
      const callerIp = this.checkCallerIp ? peerIp(peer) : undefined;
      const { ip, port, regions } = validateHeartbeat(call.request, callerIp);
      const key = `${ip}:${port}`;
      const previous = this.heartbeatRecords.get(key);
      this.heartbeatRecords.delete(key);
      this.heartbeatRecords.set(key, { ip, port, regions, peer, receivedAtMs: Date.now(), count: (previous?.count ?? 0) + 1 });
      if (this.heartbeatRecords.size > MAX_HEARTBEAT_RECORDS) {
        const oldest = this.heartbeatRecords.keys().next();
        if (oldest.done !== true) this.heartbeatRecords.delete(oldest.value);
      }
      this.counters.heartbeats++;
      callback(null, { ttl_ms: this.heartbeatTtlMs });
    } catch (err) {
      this.counters.heartbeatsRejected++;
      const details = err instanceof HeartbeatInvalid ? err.message : 'invalid heartbeat';
      this.log.debug({ peer, details }, 'heartbeat rejected');
      callback({ code: grpc.status.INVALID_ARGUMENT, details });
    }
  }
}

/**
 * The ShredstreamProxy service with SubscribeEntries' response serializer replaced by the
 * identity: the server writes Entry messages already encoded by encodeEntryMessage.
 */
function subscribeServiceWithRawResponses(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const method = service['SubscribeEntries'];
  if (method === undefined) throw new TpError(ErrorCode.Internal, 'shredstream.proto has no ShredstreamProxy.SubscribeEntries');
  return { ...service, SubscribeEntries: { ...method, responseSerialize: (message: Buffer) => message } };
}
