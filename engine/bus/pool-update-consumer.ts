/**
 * The quote service's bus consumer (spec 02, Events): a pull consumer bound to the durable
 * `BUS_CONSUMER_NAME` on POOL_UPDATES. Each message goes through the quote service's update handler
 * (steps 1 to 4: parse, convert, store under the slot rule, count) and is then acknowledged (step 5),
 * whatever came of it: an unparsable message is counted by the handler and acknowledged, so it is
 * dropped rather than redelivered.
 *
 * At every (re)connect the stream and the durable are set up (idempotent; a restarted server may have
 * lost its memory-storage stream) and consumption (re)starts; the durable keeps the position, so a
 * restarted quote service resumes where its predecessor acknowledged. Every `lagIntervalMs` the
 * consumer's pending count goes to `quote_service_bus_consumer_lag_messages`.
 */
import { ConsumerEvents, DeliverPolicy, type ConsumerMessages, type JsMsg, type NatsConnection } from 'nats';

import type { Logger } from '../obs/index.js';
import { Backoff } from '../common/index.js';
import type { BusConnection } from './connection.js';
import { poolUpdatesConsumerSpec, poolUpdatesStreamSpec, type PoolUpdatesStreamOptions } from './pool-updates.js';
import { ensureConsumer, ensureStream } from './stream-setup.js';

/** What the consumer needs of the quote service's PoolUpdateHandler. */
export interface PoolUpdateSink {
  /** Steps 1 to 4; never throws. */
  handleMessage(data: Uint8Array): unknown;
  setConsumerLag(messages: number): void;
}

export interface PoolUpdateConsumerOptions extends PoolUpdatesStreamOptions {
  bus: BusConnection;
  handler: PoolUpdateSink;
  /** `bus.consumerName`; default quote-service. */
  consumerName?: string;
  /** Default 1000. */
  lagIntervalMs?: number;
  /**
   * Before the durable's first delivery, read the newest message of every subject (one per pool)
   * the stream still holds, through a short-lived ordered consumer, into the handler (no acks):
   * a restarted quote service, whose durable resumes past what its predecessor acknowledged, starts
   * with every pool that traded within the stream's max age instead of an empty cache. Safe beside
   * the durable's own deliveries: the slot rule keeps the newest state whatever the order.
   */
  seedOnStart?: boolean;
  /**
   * Called after each message was handled and acknowledged, with the handler's outcome and the
   * message subject (`{root}.{dex}.{pool_address}`): the split quote service's context reads.
   */
  onHandled?: (outcome: unknown, subject: string) => void;
  logger?: Logger;
}

export interface PoolUpdateConsumerStats {
  received: number;
  acked: number;
  /** Times consumption (re)started. */
  starts: number;
  lastLag: number | null;
  /** Messages read by the start-up seed. */
  seeded: number;
}

/** Lifetime of one pull request of the consume loop, ms (nats.js sends idle heartbeats at half). */
const CONSUME_EXPIRES_MS = 5_000;

export class PoolUpdateConsumer {
  private readonly options: PoolUpdateConsumerOptions;
  private readonly log: Logger | undefined;
  private readonly counters: PoolUpdateConsumerStats = { received: 0, acked: 0, starts: 0, lastLag: null, seeded: 0 };
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private closed = false;
  private lagTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(options: PoolUpdateConsumerOptions) {
    this.options = options;
    this.log = options.logger;
  }

  get stats(): PoolUpdateConsumerStats {
    return { ...this.counters };
  }

  /** True while a consume loop holds the durable. */
  get consuming(): boolean {
    return this.messages !== undefined;
  }

  /** Starts consuming at the bus's first connect (now if connected). */
  start(): void {
    this.options.bus.onConnect((nc) => {
      this.loop ??= this.run(nc);
    });
  }

  /** Stops pulling; messages already delivered are handled and acknowledged first. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.lagTimer !== undefined) clearInterval(this.lagTimer);
    this.lagTimer = undefined;
    this.wake?.();
    this.messages?.stop();
    await this.loop;
  }

  private async run(nc: NatsConnection): Promise<void> {
    const backoff = new Backoff({ baseMs: 200, capMs: 5000 });
    const streamSpec = poolUpdatesStreamSpec(this.options);
    const consumerSpec = poolUpdatesConsumerSpec({
      ...(this.options.streamName === undefined ? {} : { streamName: this.options.streamName }),
      ...(this.options.consumerName === undefined ? {} : { consumerName: this.options.consumerName }),
      ...(this.options.subjectRoot === undefined ? {} : { subjectRoot: this.options.subjectRoot }),
    });
    let seed = this.options.seedOnStart === true;
    while (!this.closed && !nc.isClosed()) {
      try {
        const jsm = await nc.jetstreamManager();
        await ensureStream(jsm, streamSpec);
        await ensureConsumer(jsm, consumerSpec);
        if (seed) {
          seed = false;
          await this.seed(nc, consumerSpec.stream, consumerSpec.filterSubject).catch((err: unknown) => {
            this.log?.warn({ err: err instanceof Error ? err.message : err }, 'start-up seed from the stream failed; continuing with the durable');
          });
        }
        const consumer = await nc.jetstream().consumers.get(consumerSpec.stream, consumerSpec.name);
        if (this.closed) break;
        // Short pull expiry (and heartbeats at half of it): when the node leading the durable dies,
        // the next pull reaches the new leader within seconds instead of after the 30 s default.
        // A callback, not the async iterator: the messages of one socket read are handled and
        // acknowledged in one synchronous run, so their acks leave in one write instead of one
        // write (and one microtask hop) per message.
        const messages = await consumer.consume({ max_messages: consumerSpec.maxAckPending, expires: CONSUME_EXPIRES_MS, callback: this.handle });
        this.messages = messages;
        this.watchResources(messages);
        this.counters.starts++;
        backoff.reset();
        this.startLag(() => consumer.info().then((info) => info.num_pending));
        this.log?.info({ stream: consumerSpec.stream, consumer: consumerSpec.name }, 'consuming pool state updates');
        const ended = await messages.closed();
        this.messages = undefined;
        if (ended instanceof Error) throw ended;
      } catch (err) {
        this.messages = undefined;
        if (this.closed) break;
        this.log?.warn({ err: err instanceof Error ? err.message : err }, 'pool update consumer stopped; restarting');
      }
      if (this.closed) break;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, backoff.next()).unref();
      });
    }
    this.messages = undefined;
  }

  /** The newest message per subject, through an ordered consumer; ends when none is pending. */
  private async seed(nc: NatsConnection, stream: string, filter: string): Promise<void> {
    const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: filter, deliver_policy: DeliverPolicy.LastPerSubject });
    const { num_pending: pending } = await consumer.info();
    if (pending === 0) return;
    const messages = await consumer.consume({ max_messages: 256 });
    // A safety net: the last message says pending 0; should it never come, stop when nothing arrives.
    let idle: NodeJS.Timeout | undefined;
    const arm = (): void => {
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(() => messages.stop(), 2000);
    };
    arm();
    for await (const msg of messages) {
      const outcome = this.options.handler.handleMessage(msg.data);
      this.counters.seeded++;
      this.options.onHandled?.(outcome, msg.subject);
      if (msg.info.pending === 0 || this.closed) break;
      arm();
    }
    if (idle !== undefined) clearTimeout(idle);
    messages.stop();
    this.log?.info({ pools: this.counters.seeded }, 'cache seeded from the stream');
  }

  /**
   * A server restarted without its memory stream (or someone deleted the durable): the client would
   * keep asking for a consumer that is gone, so stop and let the loop set both up again.
   */
  private watchResources(messages: ConsumerMessages): void {
    void (async () => {
      for await (const s of await messages.status()) {
        if (s.type === ConsumerEvents.ConsumerNotFound || s.type === ConsumerEvents.StreamNotFound || s.type === ConsumerEvents.ConsumerDeleted) {
          this.log?.warn({ event: s.type }, 'pool update consumer lost its stream or durable; setting them up again');
          messages.stop();
          return;
        }
      }
    })().catch(() => undefined);
  }

  /** Steps 1 to 5 of one message; never throws (a throw would stop the consume callback). */
  private readonly handle = (msg: JsMsg): void => {
    this.counters.received++;
    const outcome = this.options.handler.handleMessage(msg.data);
    msg.ack();
    this.counters.acked++;
    try {
      this.options.onHandled?.(outcome, msg.subject);
    } catch (err) {
      this.log?.warn({ err }, 'pool update listener failed');
    }
  };

  private startLag(pending: () => Promise<number>): void {
    if (this.lagTimer !== undefined) clearInterval(this.lagTimer);
    const tick = (): void => {
      pending().then(
        (n) => {
          this.counters.lastLag = n;
          this.options.handler.setConsumerLag(n);
        },
        () => undefined,
      );
    };
    tick();
    this.lagTimer = setInterval(tick, this.options.lagIntervalMs ?? 1000);
    this.lagTimer.unref();
  }
}
