/**
 * The scanner's sink in the split deployment: each PoolStateUpdateEvent goes, as JSON, to
 * `pool.state.updated.{dex}.{pool_address}` with a JetStream publish that waits for the stream's
 * acknowledgement (spec 02: "persistent-stream publish, guaranteed delivery").
 *
 * - Pipelined: publishes go out at once and their acks come back on one inbox (JetStreamPipeline),
 *   so N events in flight cost one round trip, not N; each `publish` promise still settles on its
 *   own event's ack or failure.
 * - Deduplication: the message id is the event's `eventId`. A publish whose ack was lost is retried
 *   (at most `retries` more times) with the same id, and the stream drops the second copy within its
 *   duplicate window, so a retry never stores an event twice.
 * - Bounded in flight: at most `maxInFlight` publishes await their ack; past that, and while the bus
 *   is not connected, `publish` rejects at once (TP_ERR_BUS_PUBLISH) and the scanner counts
 *   `bus_publish_errors_total`. Nothing queues without bound behind a dead bus.
 */
import { ErrorCode, TpError } from '../errors.js';
import type { LoadedPool } from '../pools/index.js';
import type { PoolStateUpdateEvent } from '../scanner/index.js';
import type { PoolStateSink } from '../scanner/index.js';
import type { BusConnection } from './connection.js';
import { JetStreamPipeline, type PublishAck } from './jetstream-pipeline.js';
import { POOL_UPDATES_SUBJECT_ROOT, poolUpdateSubject } from './pool-updates.js';

export const DEFAULT_MAX_IN_FLIGHT = 1024;
export const DEFAULT_PUBLISH_RETRIES = 2;
export const DEFAULT_PUBLISH_TIMEOUT_MS = 2000;

/** What the publisher needs of the bus connection. */
export type PublisherBus = Pick<BusConnection, 'connection' | 'connected' | 'status'>;

export interface PoolUpdatePublisherOptions {
  bus: PublisherBus;
  /** Default `pool.state.updated`. */
  subjectRoot?: string;
  /** Publishes awaiting their ack at once. Default 1024. */
  maxInFlight?: number;
  /** Extra attempts after a failed publish, same message id. Default 2. */
  retries?: number;
  /** Wait for each ack, ms. Default 2000. */
  timeoutMs?: number;
  /** The stream the acks must come from (`expect.streamName`); default any. */
  streamName?: string;
}

export interface PoolUpdatePublisherStats {
  inFlight: number;
  published: number;
  /** Acks that said the stream already held the message id (a retried or repeated event). */
  duplicates: number;
  retries: number;
  failed: number;
}

export class PoolUpdatePublisher implements PoolStateSink {
  private readonly bus: PublisherBus;
  private readonly subjectRoot: string;
  private readonly maxInFlight: number;
  private readonly pipeline: JetStreamPipeline;
  private readonly encoder = new TextEncoder();
  private readonly counters = { published: 0, duplicates: 0, failed: 0 };
  private readonly settled = (ack: PublishAck): void => {
    if (ack.duplicate) this.counters.duplicates++;
    else this.counters.published++;
  };
  private readonly failedWith = (err: unknown): never => {
    this.counters.failed++;
    throw err;
  };

  constructor(options: PoolUpdatePublisherOptions) {
    this.bus = options.bus;
    this.subjectRoot = options.subjectRoot ?? POOL_UPDATES_SUBJECT_ROOT;
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.pipeline = new JetStreamPipeline({
      bus: options.bus,
      timeoutMs: options.timeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS,
      retries: options.retries ?? DEFAULT_PUBLISH_RETRIES,
      ...(options.streamName === undefined ? {} : { expectStream: options.streamName }),
    });
  }

  get stats(): PoolUpdatePublisherStats {
    return { inFlight: this.pipeline.inFlight, ...this.counters, retries: this.pipeline.retried };
  }

  /** Sends the event now; resolves on the stream's ack, rejects with TP_ERR_BUS_PUBLISH. */
  publish(event: PoolStateUpdateEvent, _loaded?: LoadedPool): Promise<void> {
    if (this.pipeline.inFlight >= this.maxInFlight) {
      this.counters.failed++;
      return Promise.reject(new TpError(ErrorCode.BusPublish, `bus publish refused: ${this.maxInFlight} publishes already await their ack`, { context: { maxInFlight: this.maxInFlight } }));
    }
    if (this.bus.connection === undefined || !this.bus.connected) {
      this.counters.failed++;
      return Promise.reject(new TpError(ErrorCode.BusPublish, `bus publish refused: the bus is ${this.bus.status}`, { context: { status: this.bus.status } }));
    }
    const subject = poolUpdateSubject(event.pool.dex, event.pool.address, this.subjectRoot);
    const data = this.encoder.encode(JSON.stringify(event));
    return this.pipeline.publish(subject, data, event.eventId).then(this.settled, this.failedWith);
  }
}
