/**
 * The POOL_UPDATES stream and its consumer (spec 02, Events), as specs for `stream-setup.ts`.
 *
 * Subjects: spec 02 gives the stream the subjects `pool.state.updated.*` but publishes every event
 * on `pool.state.updated.{dex}.{pool_address}`, two tokens below the root, which `*` (exactly one
 * token) never matches: a stream on `pool.state.updated.*` would store nothing. The stream and the
 * consumer filter therefore use `pool.state.updated.>` (the root and any depth below it), which is
 * what issue 5 asks for ("`pool.state.updated.*` and deeper") and captures the spec's subjects.
 *
 * Retention limits, max age 60 s (60,000,000,000 ns), memory storage; the duplicate window (message
 * ids) equals the max age, so a publish retried within a message's lifetime is never stored twice.
 *
 * Consumer: durable `BUS_CONSUMER_NAME` (default `quote-service`), explicit ack, max ack pending 100,
 * the filter above. Several quote service replicas each use their own durable (`BUS_CONSUMER_NAME`
 * per replica): every replica must see every update to keep a full cache; one shared durable would
 * spread the updates among them and leave each with a part.
 *
 * `subjectRoot` exists for tests, which run beside a developer's own POOL_UPDATES stream on the same
 * server (two streams may not share subjects).
 */
import { poolStateSubject } from '../scanner/index.js';
import { NS_PER_MS, Retention, Storage, type ConsumerSpec, type StreamSpec } from './stream-setup.js';

export const POOL_UPDATES_STREAM = 'POOL_UPDATES';
export const POOL_UPDATES_SUBJECT_ROOT = 'pool.state.updated';
export const POOL_UPDATES_MAX_AGE_MS = 60_000;
/** Spec 02: max 100 pending acknowledgements. */
export const POOL_UPDATES_MAX_ACK_PENDING = 100;
export const DEFAULT_CONSUMER_NAME = 'quote-service';

export interface PoolUpdatesStreamOptions {
  /** `bus.streamName`; default POOL_UPDATES. */
  streamName?: string;
  /** `bus.maxAge` in ms; default 60 000. */
  maxAgeMs?: number;
  /** Default 1; 3 on a three-node cluster. */
  replicas?: number;
  /** Default `pool.state.updated` (tests use their own). */
  subjectRoot?: string;
}

export interface PoolUpdatesConsumerOptions {
  streamName?: string;
  /** `bus.consumerName`; default quote-service. */
  consumerName?: string;
  subjectRoot?: string;
}

/** Every subject under the root: `pool.state.updated.>` (see the module comment). */
export function poolUpdatesFilter(subjectRoot = POOL_UPDATES_SUBJECT_ROOT): string {
  return `${subjectRoot}.>`;
}

/** The subject of one event: spec 02's `pool.state.updated.{dex}.{pool_address}` under the default root. */
export function poolUpdateSubject(dex: string, address: string, subjectRoot = POOL_UPDATES_SUBJECT_ROOT): string {
  return subjectRoot === POOL_UPDATES_SUBJECT_ROOT ? poolStateSubject(dex, address) : `${subjectRoot}.${dex}.${address}`;
}

export function poolUpdatesStreamSpec(options: PoolUpdatesStreamOptions = {}): StreamSpec {
  const maxAgeNs = (options.maxAgeMs ?? POOL_UPDATES_MAX_AGE_MS) * NS_PER_MS;
  return {
    name: options.streamName ?? POOL_UPDATES_STREAM,
    subjects: [poolUpdatesFilter(options.subjectRoot)],
    retention: Retention.Limits,
    maxAgeNs,
    storage: Storage.Memory,
    replicas: options.replicas ?? 1,
    duplicateWindowNs: maxAgeNs,
  };
}

export function poolUpdatesConsumerSpec(options: PoolUpdatesConsumerOptions = {}): ConsumerSpec {
  return {
    stream: options.streamName ?? POOL_UPDATES_STREAM,
    name: options.consumerName ?? DEFAULT_CONSUMER_NAME,
    filterSubject: poolUpdatesFilter(options.subjectRoot),
    maxAckPending: POOL_UPDATES_MAX_ACK_PENDING,
  };
}
