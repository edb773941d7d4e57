/**
 * The one place every service creates its JetStream streams and durable consumers (docs/architecture.md §4:
 * "stream and consumer setup is idempotent at start"). Give it a spec object; it creates the stream
 * or consumer when it is missing and updates it to the spec when it exists, so every replica of every
 * service may run it at every start, in any order.
 *
 *   ensureStream(jsm, { name, subjects, retention, maxAgeNs, storage, ... })    → StreamInfo
 *   ensureConsumer(jsm, { stream, name, filterSubject, maxAckPending, ... })    → ConsumerInfo
 *
 * Units are the server's: durations in nanoseconds (spec 03: "max age is expressed in nanoseconds"),
 * sizes in bytes. Defaults are spec 03's common settings: max message size 1 MB, ack wait 30 s,
 * replicas 1, duplicate window 2 min (the server's own default).
 *
 * What cannot change in place: a stream's storage type (memory / file) and a consumer's durable
 * name. A stream whose storage differs from the spec is refused with TP_ERR_BUS_SETUP rather than
 * deleted, since deleting it would throw away its messages; other differences are updates.
 *
 * A server reserves a stream's max bytes on its store (memory or file) when the stream is created
 * or grown, and refuses it when what it has left is less ("insufficient storage resources
 * available"). That refusal is TP_ERR_BUS_SETUP naming the stream, the bytes asked and the setting
 * that sizes them (`StreamSpec.maxBytesSetting`), not the client library's error.
 */
import {
  AckPolicy,
  type DeliverPolicy,
  DiscardPolicy,
  NatsError,
  type RetentionPolicy,
  type StorageType,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from 'nats';

import { ErrorCode, TpError, type ErrorContexts } from '../errors.js';

/** Nanoseconds per millisecond / second, for building specs. */
export const NS_PER_MS = 1_000_000;
export const NS_PER_SECOND = 1_000_000_000;

/** Spec 03 common settings. */
export const DEFAULT_MAX_MSG_SIZE = 1024 * 1024;
export const DEFAULT_ACK_WAIT_NS = 30 * NS_PER_SECOND;
export const DEFAULT_DUPLICATE_WINDOW_NS = 120 * NS_PER_SECOND;

export const Retention = { Limits: 'limits', Interest: 'interest', WorkQueue: 'workqueue' } as const;
export type Retention = (typeof Retention)[keyof typeof Retention];

export const Storage = { Memory: 'memory', File: 'file' } as const;
export type Storage = (typeof Storage)[keyof typeof Storage];

export interface StreamSpec {
  name: string;
  subjects: readonly string[];
  retention: Retention;
  /** 0: no age limit. */
  maxAgeNs: number;
  storage: Storage;
  /** -1 (default): no byte limit. */
  maxBytes?: number;
  /** Default 1. */
  replicas?: number;
  /** Default 1 MB (spec 03). */
  maxMsgSize?: number;
  /**
   * Window in which a second publish with the same message id is dropped. Default 2 min; never
   * longer than `maxAgeNs` (the server refuses that), so it is clamped to it.
   */
  duplicateWindowNs?: number;
  /**
   * The setting an operator changes to size this stream (e.g. `BUS_STREAM_MAX_BYTES_SCALE (...)`),
   * named in the error when the server cannot reserve `maxBytes`.
   */
  maxBytesSetting?: string;
}

export interface ConsumerSpec {
  stream: string;
  /** The durable name. */
  name: string;
  filterSubject: string;
  /** Ack policy is always explicit. Default 30 s (spec 03). */
  ackWaitNs?: number;
  /** Unacknowledged messages outstanding at once. */
  maxAckPending: number;
  /** Deliveries before the server gives up on a message; -1 (default): unlimited. */
  maxDeliver?: number;
  /** Where a new consumer starts; default all (everything the stream still holds). */
  deliverPolicy?: 'all' | 'new' | 'last_per_subject';
}

/** JetStream API error codes this module tells apart. */
const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;
/** The server cannot reserve what the stream asks: insufficient resources / storage / memory. */
const RESOURCES_EXCEEDED = [10023, 10047, 10028];

function isApiError(err: unknown, code: number): boolean {
  return err instanceof NatsError && err.api_error?.err_code === code;
}

function setupError(message: string, cause: unknown, context: ErrorContexts[typeof ErrorCode.BusSetup]): TpError {
  return new TpError(ErrorCode.BusSetup, message, { cause, context });
}

const formatBytes = (n: number): string =>
  n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(n % 1024 ** 3 === 0 ? 0 : 2)} GiB` : n >= 1024 ** 2 ? `${(n / 1024 ** 2).toFixed(n % 1024 ** 2 === 0 ? 0 : 2)} MiB` : `${n} bytes`;

/** The server could not reserve the stream's max bytes: say which stream, how much, and what sizes it. */
function reservationError(spec: StreamSpec, err: NatsError): TpError {
  const asked = spec.maxBytes === undefined || spec.maxBytes < 0 ? 'no byte limit' : `max bytes ${formatBytes(spec.maxBytes)}`;
  const fix =
    spec.maxBytesSetting === undefined
      ? 'give the stream a smaller max bytes'
      : `lower ${spec.maxBytesSetting}`;
  return setupError(
    `stream ${spec.name}: the NATS server cannot reserve its ${spec.storage} storage (${asked}): ${err.api_error?.description ?? err.message}. ` +
      `The server reserves every stream's max bytes when the stream is created; ${fix}, or give the server more JetStream storage (max_file_store / max_memory_store), or remove streams it no longer needs`,
    err,
    { stream: spec.name, maxBytes: spec.maxBytes, storage: spec.storage, ...(spec.maxBytesSetting === undefined ? {} : { setting: spec.maxBytesSetting }) },
  );
}

/** The spec as a server stream configuration. */
export function streamConfigOf(spec: StreamSpec): Partial<StreamConfig> & { name: string } {
  const duplicateWindow = spec.duplicateWindowNs ?? DEFAULT_DUPLICATE_WINDOW_NS;
  return {
    name: spec.name,
    subjects: [...spec.subjects],
    retention: spec.retention as RetentionPolicy,
    max_age: spec.maxAgeNs,
    max_bytes: spec.maxBytes ?? -1,
    storage: spec.storage as StorageType,
    num_replicas: spec.replicas ?? 1,
    max_msg_size: spec.maxMsgSize ?? DEFAULT_MAX_MSG_SIZE,
    duplicate_window: spec.maxAgeNs > 0 ? Math.min(duplicateWindow, spec.maxAgeNs) : duplicateWindow,
    discard: DiscardPolicy.Old,
  };
}

/** The spec as a server consumer configuration. */
export function consumerConfigOf(spec: ConsumerSpec): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: spec.name,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    ack_wait: spec.ackWaitNs ?? DEFAULT_ACK_WAIT_NS,
    max_ack_pending: spec.maxAckPending,
    max_deliver: spec.maxDeliver ?? -1,
    deliver_policy: (spec.deliverPolicy ?? 'all') as DeliverPolicy,
  };
}

/** Creates the stream, or updates it to the spec. Idempotent; safe from several processes at once. */
export async function ensureStream(jsm: JetStreamManager, spec: StreamSpec): Promise<StreamInfo> {
  const config = streamConfigOf(spec);
  for (let attempt = 0; ; attempt++) {
    let existing: StreamInfo | undefined;
    try {
      existing = await jsm.streams.info(spec.name);
    } catch (err) {
      if (!isApiError(err, STREAM_NOT_FOUND)) throw setupError(`stream ${spec.name}: info failed: ${String(err)}`, err, { stream: spec.name });
    }
    try {
      if (existing === undefined) return await jsm.streams.add(config);
      if (existing.config.storage !== config.storage) {
        throw setupError(
          `stream ${spec.name} exists with ${existing.config.storage} storage, the spec asks for ${config.storage}: delete it to change storage`,
          undefined,
          { stream: spec.name, existing: existing.config.storage, wanted: config.storage },
        );
      }
      return await jsm.streams.update(spec.name, config);
    } catch (err) {
      if (err instanceof TpError) throw err;
      if (err instanceof NatsError && RESOURCES_EXCEEDED.includes(err.api_error?.err_code ?? 0)) throw reservationError(spec, err);
      // Another process created it between our info and add: update it instead, once.
      if (existing === undefined && attempt === 0) continue;
      throw setupError(`stream ${spec.name}: setup failed: ${String(err)}`, err, { stream: spec.name });
    }
  }
}

/** Creates the durable consumer, or updates it to the spec. Idempotent. */
export async function ensureConsumer(jsm: JetStreamManager, spec: ConsumerSpec): Promise<ConsumerInfo> {
  const config = consumerConfigOf(spec);
  let exists = true;
  try {
    await jsm.consumers.info(spec.stream, spec.name);
  } catch (err) {
    if (!isApiError(err, CONSUMER_NOT_FOUND)) throw setupError(`consumer ${spec.stream}/${spec.name}: info failed: ${String(err)}`, err, { stream: spec.stream, consumer: spec.name });
    exists = false;
  }
  try {
    if (!exists) return await jsm.consumers.add(spec.stream, config);
    // deliver_policy cannot change on an existing consumer; it only matters at creation.
    const { deliver_policy: _deliver, durable_name: _name, ...update } = config;
    return await jsm.consumers.update(spec.stream, spec.name, update);
  } catch (err) {
    throw setupError(`consumer ${spec.stream}/${spec.name}: setup failed: ${String(err)}`, err, { stream: spec.stream, consumer: spec.name });
  }
}
