/**
 * The platform's JetStream streams: spec 03's four ("Message streams") and our SIGNALS, laid down
 * through the shared stream setup (`stream-setup.ts`), so every service may run
 * `ensurePlatformStreams` at every start.
 *
 * | spec stream           | stream name           | subjects                | retention | max age | max bytes | storage |
 * |-----------------------|-----------------------|-------------------------|-----------|---------|-----------|---------|
 * | `market.events`       | `MARKET_EVENTS`       | `market.events.>`       | limits    | 7 days  | 10 GiB    | file    |
 * | `trade.opportunities` | `TRADE_OPPORTUNITIES` | `trade.opportunities.>` | limits    | 1 day   | 5 GiB     | file    |
 * | `execution.orders`    | `EXECUTION_ORDERS`    | `execution.orders.>`    | limits    | 30 days | 20 GiB    | file    |
 * | `system.metrics`      | `SYSTEM_METRICS`      | `system.metrics.>`      | limits    | 7 days  | 1 GiB     | file    |
 * | (ours) `signals`      | `SIGNALS`             | `signals.>`             | limits    | 1 day   | 1 GiB     | file    |
 *
 * Decisions where spec 03 is silent or cannot be taken literally:
 * - Stream names: JetStream refuses `.` in a stream name, so each spec stream is named by its
 *   subject root in upper snake case, as spec 02 names `POOL_UPDATES`; the subjects are the spec's.
 * - `system.metrics` ("internal metrics", other cells blank): subjects `system.metrics.>`, limits
 *   retention, file storage (spec 03: "persistence on"), and a 1 GiB byte cap so that a chatty
 *   metrics publisher cannot fill the disk the order and event streams need.
 * - `signals` is not in spec 03: TradeSignals (engine/messages/trade-signal.ts) of the signal
 *   sources, read by the signal planner; kept like opportunities (a signal's horizon is short).
 * - Common settings (spec 03): max message size 1 MB, ack wait 30 s (a consumer setting; see
 *   `platformConsumerSpec`). Replicas: 1 on a single server, 3 when the server is part of a cluster
 *   of three or more (`detectReplicas`), or whatever the caller passes.
 * - Sizes: the max bytes above are the default for deployments. A JetStream server reserves a
 *   stream's max bytes on its store when the stream is created (and refuses a stream it cannot
 *   reserve), so one set takes 43 GiB with the dead letters and the swap routes. The setting
 *   `bus.streamMaxBytesScale` (`BUS_STREAM_MAX_BYTES_SCALE`, `streamSizeSchema`) multiplies every
 *   stream's max bytes, for a small server; tests and benchmarks use `TEST_STREAM_MAX_BYTES_SCALE`
 *   (testing/local-nats.ts), so their sets fit beside a deployment's on the same server.
 */
import type { JetStreamManager, NatsConnection, StreamInfo } from 'nats';

import { num, setting } from '../config/index.js';

import { invalidArgument } from '../errors.js';
import {
  DEFAULT_ACK_WAIT_NS,
  DEFAULT_MAX_MSG_SIZE,
  ensureStream,
  NS_PER_SECOND,
  Retention,
  Storage,
  type ConsumerSpec,
  type StreamSpec,
} from './stream-setup.js';

const GiB = 1024 * 1024 * 1024;
const NS_PER_DAY = 86_400 * NS_PER_SECOND;

/** The setting that sizes every byte-limited stream, as an operator writes it. */
export const STREAM_MAX_BYTES_SCALE_SETTING = { key: 'bus.streamMaxBytesScale', env: 'BUS_STREAM_MAX_BYTES_SCALE', flag: 'stream-max-bytes-scale' } as const;

/**
 * `bus.streamMaxBytesScale`, for the schema of every service that lays down streams (market
 * scanner, planner, executor, aggregator). Default 1: spec 03's sizes.
 */
export const streamSizeSchema = {
  [STREAM_MAX_BYTES_SCALE_SETTING.key]: setting({
    description:
      "multiplies the max bytes of every stream this service creates or updates (spec 03 sizes at 1: MARKET_EVENTS 10 GiB, TRADE_OPPORTUNITIES 5 GiB, EXECUTION_ORDERS 20 GiB, SYSTEM_METRICS 1 GiB, DEAD_LETTERS 1 GiB, MARKET_SWAP_ROUTES 5 GiB). The NATS server reserves a stream's max bytes on its store when the stream is created and refuses a stream it cannot reserve; below 1 for a small server (each stream keeps at least 1 MiB, its max message size). Applied at every start: lowering it shrinks existing streams, dropping their oldest messages",
    parse: num({ min: 0.0001, max: 100 }),
    default: 1,
    env: STREAM_MAX_BYTES_SCALE_SETTING.env,
    flag: STREAM_MAX_BYTES_SCALE_SETTING.flag,
  }),
} as const;

/** `bytes` times `scale`, whole bytes, never below the max message size (1 MiB). */
export function scaledMaxBytes(bytes: number, scale = 1): number {
  if (!(scale > 0) || !Number.isFinite(scale)) throw invalidArgument('scale', scale, `stream max bytes scale must be a positive number, got ${scale}`);
  return Math.max(DEFAULT_MAX_MSG_SIZE, Math.floor(bytes * scale));
}

/** What a byte-limited stream's spec says about the setting that sizes it (for ensureStream's errors). */
export function sizedByScale(scale: number): { maxBytesSetting: string } {
  return { maxBytesSetting: `${STREAM_MAX_BYTES_SCALE_SETTING.env} (--${STREAM_MAX_BYTES_SCALE_SETTING.flag}, now ${scale})` };
}

/** The spec's stream names (and ours, SIGNALS), mapped to JetStream stream names (which cannot contain `.`). */
export const PlatformStream = {
  MarketEvents: 'MARKET_EVENTS',
  TradeOpportunities: 'TRADE_OPPORTUNITIES',
  ExecutionOrders: 'EXECUTION_ORDERS',
  SystemMetrics: 'SYSTEM_METRICS',
  Signals: 'SIGNALS',
} as const;
export type PlatformStream = (typeof PlatformStream)[keyof typeof PlatformStream];

/** Spec 03 stream settings and SIGNALS', without replicas (see `platformStreamSpecs`). */
export const PLATFORM_STREAMS: readonly Readonly<Omit<StreamSpec, 'replicas'>>[] = Object.freeze([
  { name: PlatformStream.MarketEvents, subjects: ['market.events.>'], retention: Retention.Limits, maxAgeNs: 7 * NS_PER_DAY, maxBytes: 10 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.TradeOpportunities, subjects: ['trade.opportunities.>'], retention: Retention.Limits, maxAgeNs: 1 * NS_PER_DAY, maxBytes: 5 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.ExecutionOrders, subjects: ['execution.orders.>'], retention: Retention.Limits, maxAgeNs: 30 * NS_PER_DAY, maxBytes: 20 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.SystemMetrics, subjects: ['system.metrics.>'], retention: Retention.Limits, maxAgeNs: 7 * NS_PER_DAY, maxBytes: 1 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.Signals, subjects: ['signals.>'], retention: Retention.Limits, maxAgeNs: 1 * NS_PER_DAY, maxBytes: 1 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
]);

/** Production replica count (spec 03), used when the cluster has at least that many servers. */
export const CLUSTER_REPLICAS = 3;

export interface PlatformStreamOptions {
  /** Replicas of every stream; default `detectReplicas` of the connection, or 1 without one. */
  replicas?: number;
  /**
   * Prefix for stream names and subjects (`T1_` gives `T1_MARKET_EVENTS` on `T1_market.events.>`),
   * so tests can lay the streams down beside a developer's running ones. Default none.
   */
  prefix?: string;
  /** Multiplies every stream's max bytes (`bus.streamMaxBytesScale`); default 1, spec 03's sizes. */
  maxBytesScale?: number;
}

/** The stream specs with replicas, the size scale (default 1) and an optional test prefix applied. */
export function platformStreamSpecs(options: { replicas: number; prefix?: string; maxBytesScale?: number }): StreamSpec[] {
  const prefix = options.prefix ?? '';
  const scale = options.maxBytesScale ?? 1;
  return PLATFORM_STREAMS.map((s) => ({
    ...s,
    name: `${prefix}${s.name}`,
    subjects: s.subjects.map((subject) => `${prefix}${subject}`),
    replicas: options.replicas,
    maxBytes: scaledMaxBytes(s.maxBytes!, scale),
    ...sizedByScale(scale),
  }));
}

/**
 * Replicas to ask for on this connection's server: 3 when it belongs to a cluster of three or more
 * servers (its INFO names a cluster and lists that many client URLs), else 1. A single server
 * refuses replicas > 1, and a cluster of two cannot keep a quorum of three.
 */
export function detectReplicas(nc: NatsConnection): number {
  const info = nc.info;
  if (info === undefined || info.cluster === undefined || info.cluster === '') return 1;
  const servers = new Set(info.connect_urls ?? []);
  return servers.size >= CLUSTER_REPLICAS ? CLUSTER_REPLICAS : 1;
}

/**
 * Creates or updates the platform streams. Idempotent (see `ensureStream`). A server that
 * cannot reserve a stream's max bytes gets TP_ERR_BUS_SETUP naming `bus.streamMaxBytesScale`.
 */
export async function ensurePlatformStreams(
  jsm: JetStreamManager,
  options: PlatformStreamOptions & { nc?: NatsConnection } = {},
): Promise<StreamInfo[]> {
  const replicas = options.replicas ?? (options.nc === undefined ? 1 : detectReplicas(options.nc));
  const infos: StreamInfo[] = [];
  for (const spec of platformStreamSpecs({ replicas, ...(options.prefix === undefined ? {} : { prefix: options.prefix }), ...(options.maxBytesScale === undefined ? {} : { maxBytesScale: options.maxBytesScale }) })) {
    infos.push(await ensureStream(jsm, spec));
  }
  return infos;
}

/**
 * A durable consumer on a platform stream with spec 03's settings: explicit ack, ack wait 30 s.
 *
 * The server's own max deliveries stays unlimited on purpose: the dead-letter consumer
 * (`dead-letter.ts`) counts deliveries and moves a message to its dead-letter subject on the last
 * one. A server-side limit would drop the message with only an advisory whenever that dead-letter
 * publish itself failed (bus trouble); unlimited, the message is redelivered and tried again.
 */
export function platformConsumerSpec(
  stream: string,
  name: string,
  filterSubject: string,
  options: { maxAckPending?: number; ackWaitNs?: number } = {},
): ConsumerSpec {
  return {
    stream,
    name,
    filterSubject,
    ackWaitNs: options.ackWaitNs ?? DEFAULT_ACK_WAIT_NS,
    maxAckPending: options.maxAckPending ?? 1_000,
    maxDeliver: -1,
  };
}
