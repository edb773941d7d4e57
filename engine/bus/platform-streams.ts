/**
 * The platform's four JetStream streams (spec 03, "Message streams"), laid down through the shared
 * stream setup (`stream-setup.ts`), so every service may run `ensurePlatformStreams` at every start.
 *
 * | spec stream           | stream name           | subjects                | retention | max age | max bytes | storage |
 * |-----------------------|-----------------------|-------------------------|-----------|---------|-----------|---------|
 * | `market.events`       | `MARKET_EVENTS`       | `market.events.>`       | limits    | 7 days  | 10 GiB    | file    |
 * | `trade.opportunities` | `TRADE_OPPORTUNITIES` | `trade.opportunities.>` | limits    | 1 day   | 5 GiB     | file    |
 * | `execution.orders`    | `EXECUTION_ORDERS`    | `execution.orders.>`    | limits    | 30 days | 20 GiB    | file    |
 * | `system.metrics`      | `SYSTEM_METRICS`      | `system.metrics.>`      | limits    | 7 days  | 1 GiB     | file    |
 *
 * Decisions where spec 03 is silent or cannot be taken literally:
 * - Stream names: JetStream refuses `.` in a stream name, so each spec stream is named by its
 *   subject root in upper snake case, as spec 02 names `POOL_UPDATES`; the subjects are the spec's.
 * - `system.metrics` ("internal metrics", other cells blank): subjects `system.metrics.>`, limits
 *   retention, file storage (spec 03: "persistence on"), and a 1 GiB byte cap so that a chatty
 *   metrics publisher cannot fill the disk the order and event streams need.
 * - Common settings (spec 03): max message size 1 MB, ack wait 30 s (a consumer setting; see
 *   `platformConsumerSpec`). Replicas: 1 on a single server, 3 when the server is part of a cluster
 *   of three or more (`detectReplicas`), or whatever the caller passes.
 */
import type { JetStreamManager, NatsConnection, StreamInfo } from 'nats';

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

/** The spec's stream names, mapped to JetStream stream names (which cannot contain `.`). */
export const PlatformStream = {
  MarketEvents: 'MARKET_EVENTS',
  TradeOpportunities: 'TRADE_OPPORTUNITIES',
  ExecutionOrders: 'EXECUTION_ORDERS',
  SystemMetrics: 'SYSTEM_METRICS',
} as const;
export type PlatformStream = (typeof PlatformStream)[keyof typeof PlatformStream];

/** Spec 03 stream settings, without replicas (see `platformStreamSpecs`). */
export const PLATFORM_STREAMS: readonly Readonly<Omit<StreamSpec, 'replicas'>>[] = Object.freeze([
  { name: PlatformStream.MarketEvents, subjects: ['market.events.>'], retention: Retention.Limits, maxAgeNs: 7 * NS_PER_DAY, maxBytes: 10 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.TradeOpportunities, subjects: ['trade.opportunities.>'], retention: Retention.Limits, maxAgeNs: 1 * NS_PER_DAY, maxBytes: 5 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.ExecutionOrders, subjects: ['execution.orders.>'], retention: Retention.Limits, maxAgeNs: 30 * NS_PER_DAY, maxBytes: 20 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
  { name: PlatformStream.SystemMetrics, subjects: ['system.metrics.>'], retention: Retention.Limits, maxAgeNs: 7 * NS_PER_DAY, maxBytes: 1 * GiB, storage: Storage.File, maxMsgSize: DEFAULT_MAX_MSG_SIZE },
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
}

/** The four specs with replicas (and an optional test prefix) applied. */
export function platformStreamSpecs(options: { replicas: number; prefix?: string }): StreamSpec[] {
  const prefix = options.prefix ?? '';
  return PLATFORM_STREAMS.map((s) => ({
    ...s,
    name: `${prefix}${s.name}`,
    subjects: s.subjects.map((subject) => `${prefix}${subject}`),
    replicas: options.replicas,
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

/** Creates or updates the four platform streams. Idempotent (see `ensureStream`). */
export async function ensurePlatformStreams(
  jsm: JetStreamManager,
  options: PlatformStreamOptions & { nc?: NatsConnection } = {},
): Promise<StreamInfo[]> {
  const replicas = options.replicas ?? (options.nc === undefined ? 1 : detectReplicas(options.nc));
  const infos: StreamInfo[] = [];
  for (const spec of platformStreamSpecs({ replicas, ...(options.prefix === undefined ? {} : { prefix: options.prefix }) })) {
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
