/**
 * Consuming a platform stream with acknowledgement after processing and a dead-letter subject for
 * messages that keep failing (spec 03: "messages are acknowledged after processing"; "failed
 * messages go to dead letter queues"; docs/architecture.md §4).
 *
 * For each message of the durable pull consumer, in order:
 *   handler resolves                      → ack
 *   handler throws, deliveries < max      → nak with a delay (the server redelivers it)
 *   handler throws on the last delivery   → publish to the dead-letter subject, count, term
 *   handler throws TP_ERR_MESSAGE_INVALID → the same at once: a message that is not what its
 *                                           subject promises fails the same way every time
 *
 * Dead letters, decided here:
 * - Subject `dlq.<STREAM>.<original subject>` (e.g. `dlq.EXECUTION_ORDERS.execution.orders.submit`),
 *   kept by one `DEAD_LETTERS` stream (subjects `dlq.>`, limits, 30 days, 1 GiB, file storage) so
 *   operators find every stream's failures in one place, filter them per stream by subject, and
 *   replay one by republishing it to its `Tp-Dlq-Subject`.
 * - The payload is the original; the original headers are kept, and these are added:
 *   `Tp-Dlq-Reason` (the last failure), `Tp-Dlq-Subject`, `Tp-Dlq-Stream`, `Tp-Dlq-Consumer`,
 *   `Tp-Dlq-Deliveries`, `Tp-Dlq-Stream-Seq`.
 * - The dead-letter publish waits for JetStream's acknowledgement and carries a message id
 *   (`<stream>/<consumer>/<seq>`), so a retry after a lost acknowledgement stores it once. Only after
 *   it is stored is the original terminated. If it fails, the original is nak'ed and comes back.
 * - The helper, not the server, counts deliveries: a consumer's server-side `max_deliver` would drop
 *   the message with only an advisory when the dead-letter publish itself failed. Platform
 *   consumers therefore keep `max_deliver` unlimited (`platformConsumerSpec`).
 *
 * Metrics (prom-client, label `stream`): `bus_dead_letters_total` (messages moved to the dead-letter
 * subject), `bus_processing_failures_total` (handler failures, every delivery),
 * `bus_dead_letter_publish_errors_total` (dead-letter publishes that failed).
 */
import { headers as natsHeaders, type ConsumerMessages, type JetStreamClient, type JsMsg, type MsgHdrs, type NatsConnection } from 'nats';
import { Counter, type Registry } from 'prom-client';

import { ErrorCode, isTpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { scaledMaxBytes, sizedByScale } from './platform-streams.js';
import { ensureStream, NS_PER_SECOND, Retention, Storage, type StreamSpec } from './stream-setup.js';

export const DEAD_LETTER_STREAM = 'DEAD_LETTERS';
export const DEAD_LETTER_SUBJECT_ROOT = 'dlq';
/** Deliveries before a failing message is dead-lettered. */
export const DEFAULT_MAX_DELIVER = 5;
/** Wait before the server redelivers a failed message, ms. */
export const DEFAULT_RETRY_DELAY_MS = 1_000;

export const DeadLetterHeader = {
  Reason: 'Tp-Dlq-Reason',
  Subject: 'Tp-Dlq-Subject',
  Stream: 'Tp-Dlq-Stream',
  Consumer: 'Tp-Dlq-Consumer',
  Deliveries: 'Tp-Dlq-Deliveries',
  StreamSeq: 'Tp-Dlq-Stream-Seq',
} as const;

/** `dlq.<STREAM>.<original subject>`. */
export function deadLetterSubject(stream: string, originalSubject: string, root = DEAD_LETTER_SUBJECT_ROOT): string {
  return `${root}.${stream}.${originalSubject}`;
}

/**
 * The dead-letter stream; `prefix` (tests) prefixes its name and subjects and `maxBytesScale`
 * (`bus.streamMaxBytesScale`) scales its 1 GiB, as `platformStreamSpecs` does.
 */
export function deadLetterStreamSpec(options: { replicas: number; prefix?: string; maxBytesScale?: number }): StreamSpec {
  const prefix = options.prefix ?? '';
  const scale = options.maxBytesScale ?? 1;
  return {
    name: `${prefix}${DEAD_LETTER_STREAM}`,
    subjects: [`${prefix}${DEAD_LETTER_SUBJECT_ROOT}.>`],
    retention: Retention.Limits,
    maxAgeNs: 30 * 86_400 * NS_PER_SECOND,
    maxBytes: scaledMaxBytes(1024 ** 3, scale),
    storage: Storage.File,
    replicas: options.replicas,
    ...sizedByScale(scale),
  };
}

export const DEAD_LETTER_METRIC_NAMES = {
  deadLetters: 'bus_dead_letters_total',
  processingFailures: 'bus_processing_failures_total',
  publishErrors: 'bus_dead_letter_publish_errors_total',
} as const;

export interface DeadLetterMetrics {
  deadLetters: Counter<'stream'>;
  processingFailures: Counter<'stream'>;
  publishErrors: Counter<'stream'>;
}

export function createDeadLetterMetrics(registry: Registry): DeadLetterMetrics {
  const counter = (name: string, help: string): Counter<'stream'> => new Counter({ name, help, labelNames: ['stream'], registers: [registry] });
  return {
    deadLetters: counter(DEAD_LETTER_METRIC_NAMES.deadLetters, 'Messages moved to the dead-letter subject after their last delivery failed, per source stream.'),
    processingFailures: counter(DEAD_LETTER_METRIC_NAMES.processingFailures, 'Message handler failures, every delivery counted, per stream.'),
    publishErrors: counter(DEAD_LETTER_METRIC_NAMES.publishErrors, 'Dead-letter publishes that failed (the message is redelivered), per source stream.'),
  };
}

/**
 * A handler's answer when the message should come back later without counting as a failure
 * (a resource it needs is busy): the message is nak'ed with this delay. Its delivery count still
 * grows on the server, so a message deferred many times is dead-lettered on its next failure.
 */
export interface DeferDelivery {
  nakDelayMs: number;
}

/** Processes one message; throwing (or rejecting) marks the delivery failed. */
export type MessageHandler = (msg: JsMsg) => void | DeferDelivery | Promise<void | DeferDelivery>;

export interface DeadLetterConsumerOptions {
  nc: NatsConnection;
  /** The stream and its durable consumer (created beforehand, e.g. with `platformConsumerSpec`). */
  stream: string;
  consumer: string;
  handler: MessageHandler;
  metrics: DeadLetterMetrics;
  /** Deliveries before the message is dead-lettered; default 5. */
  maxDeliver?: number;
  /** Redelivery delay after a failure, ms; default 1000. */
  retryDelayMs?: number;
  /** Dead-letter subject root; default `dlq` (tests give a prefixed one). */
  subjectRoot?: string;
  /** Messages pulled at once; default 100. */
  batch?: number;
  /**
   * Messages handled at once; default 1 (in delivery order). Above 1, acknowledgements follow
   * completion, not delivery order.
   */
  concurrency?: number;
  /** While a handler runs, tell the server it is in progress (resets the ack wait) this often, ms. */
  workingIntervalMs?: number;
  logger?: Logger;
}

/** Header values are one line of text. */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? `${(err as Error & { code?: string }).code ?? err.name}: ${err.message}` : String(err);
  return text.replace(/[\r\n]+/g, ' ').slice(0, 1_024);
}

/**
 * A durable pull consumer that acks after processing and dead-letters what keeps failing.
 * Messages are handled one at a time, in delivery order, unless `concurrency` allows more.
 */
export class DeadLetterConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly js: JetStreamClient;
  private readonly maxDeliver: number;
  private readonly retryDelayMs: number;
  private readonly subjectRoot: string;

  private constructor(private readonly options: DeadLetterConsumerOptions) {
    this.js = options.nc.jetstream();
    this.maxDeliver = options.maxDeliver ?? DEFAULT_MAX_DELIVER;
    this.retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    this.subjectRoot = options.subjectRoot ?? DEAD_LETTER_SUBJECT_ROOT;
  }

  /** Starts consuming. The dead-letter stream must exist (`ensureDeadLetterStream`). */
  static async start(options: DeadLetterConsumerOptions): Promise<DeadLetterConsumer> {
    const c = new DeadLetterConsumer(options);
    const consumer = await c.js.consumers.get(options.stream, options.consumer);
    c.messages = await consumer.consume({ max_messages: options.batch ?? 100 });
    c.loop = c.run(c.messages);
    return c;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    const limit = Math.max(1, this.options.concurrency ?? 1);
    const running = new Set<Promise<void>>();
    for await (const m of messages) {
      const p = this.process(m).finally(() => running.delete(p));
      running.add(p);
      if (running.size >= limit) await Promise.race(running);
    }
    await Promise.all(running);
  }

  private async process(m: JsMsg): Promise<void> {
    const every = this.options.workingIntervalMs;
    const timer = every === undefined ? undefined : setInterval(() => m.working(), every);
    let answer: void | DeferDelivery;
    try {
      answer = await this.options.handler(m);
    } catch (err) {
      await this.failed(m, err);
      return;
    } finally {
      if (timer !== undefined) clearInterval(timer);
    }
    if (answer !== undefined) m.nak(answer.nakDelayMs);
    else m.ack();
  }

  private async failed(m: JsMsg, err: unknown): Promise<void> {
    const { stream, consumer, metrics, logger } = this.options;
    metrics.processingFailures.inc({ stream });
    const reason = reasonOf(err);
    const deliveries = m.info.deliveryCount;
    if (deliveries < this.maxDeliver && !isTpError(err, ErrorCode.MessageInvalid)) {
      logger?.warn({ stream, subject: m.subject, seq: m.seq, deliveries, reason }, 'bus message failed; redelivering');
      m.nak(this.retryDelayMs);
      return;
    }
    const h: MsgHdrs = natsHeaders();
    if (m.headers !== undefined) for (const [k, values] of m.headers) for (const v of values) h.append(k, v);
    h.set(DeadLetterHeader.Reason, reason);
    h.set(DeadLetterHeader.Subject, m.subject);
    h.set(DeadLetterHeader.Stream, stream);
    h.set(DeadLetterHeader.Consumer, consumer);
    h.set(DeadLetterHeader.Deliveries, String(deliveries));
    h.set(DeadLetterHeader.StreamSeq, String(m.seq));
    try {
      await this.js.publish(deadLetterSubject(stream, m.subject, this.subjectRoot), m.data, { headers: h, msgID: `${stream}/${consumer}/${m.seq}` });
    } catch (publishErr) {
      metrics.publishErrors.inc({ stream });
      logger?.error({ stream, subject: m.subject, seq: m.seq, err: publishErr }, 'dead-letter publish failed; the message will be redelivered');
      m.nak(this.retryDelayMs);
      return;
    }
    metrics.deadLetters.inc({ stream });
    logger?.error({ stream, subject: m.subject, seq: m.seq, deliveries, reason }, 'bus message dead-lettered');
    m.term();
  }

  /** Stops pulling; the messages in hand are finished first. */
  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop;
  }
}

/** Creates or updates the dead-letter stream. */
export async function ensureDeadLetterStream(
  nc: NatsConnection,
  options: { replicas: number; prefix?: string; maxBytesScale?: number },
): Promise<void> {
  await ensureStream(await nc.jetstreamManager(), deadLetterStreamSpec(options));
}
