/**
 * The MARKET_SWAP_ROUTES stream: where the aggregator's SwapRouteEvents (spec 01, Events) persist.
 *
 * | stream               | subjects              | retention | max age | max bytes | storage | max msg |
 * |----------------------|-----------------------|-----------|---------|-----------|---------|---------|
 * | `MARKET_SWAP_ROUTES` | `market.swap_route.>` | limits    | 1 day   | 5 GiB     | file    | 1 MB    |
 *
 * Why a stream of its own: spec 01 publishes on `market.swap_route.optimal`, which spec 03's
 * MARKET_EVENTS (`market.events.>`) does not capture, and a JetStream publish without a stream on its
 * subject is refused. The stream is named after its subject root in upper snake case, as the platform
 * streams are (`platform-streams.ts`), and takes `market.swap_route.>` so later route subjects
 * (per-source, per-decision) land in it without a configuration change.
 *
 * Why these limits:
 * - Limits retention: several readers (planners, analysis, replay) read the same events at their own
 *   pace; none of them owns the message as a work queue would.
 * - File storage (spec 01: "persistent stream"): events survive a bus restart.
 * - 1 day max age: a route is worth acting on for seconds; a day covers post-mortems and replays of
 *   the last trading day, like TRADE_OPPORTUNITIES, the stream the events feed.
 * - 5 GiB byte cap, discard old: an event is ~0.5 KB, so a busy aggregator (thousands of events a
 *   second) could outgrow a day's worth of disk; the cap keeps it from filling the disk the order
 *   streams need, giving up the oldest events first.
 * - 1 MB max message (spec 03 common setting); the duplicate window stays the 2 min default, which is
 *   far longer than any publish retry of the same event id.
 * - Replicas: `detectReplicas` (1 on a single server, 3 on a cluster of three or more) unless given.
 *
 * Set up through `ensureStream`, so every aggregator replica may run it at every (re)connect.
 */
import type { JetStreamManager, NatsConnection, StreamInfo } from 'nats';

import { detectReplicas, scaledMaxBytes, sizedByScale } from './platform-streams.js';
import { DEFAULT_MAX_MSG_SIZE, ensureStream, NS_PER_MS, Retention, Storage, type StreamSpec } from './stream-setup.js';

export const SWAP_ROUTES_STREAM = 'MARKET_SWAP_ROUTES';
/** Subject root of the route events; spec 01's `market.swap_route.optimal` is one subject below it. */
export const SWAP_ROUTES_SUBJECT_ROOT = 'market.swap_route';
export const SWAP_ROUTES_MAX_AGE_MS = 24 * 60 * 60 * 1000;
export const SWAP_ROUTES_MAX_BYTES = 5 * 1024 * 1024 * 1024;

export interface SwapRoutesStreamOptions {
  /** Default `detectReplicas(nc)` with a connection, else 1. */
  replicas?: number;
  /**
   * Prefix of the stream name and subjects (`T1_` gives `T1_MARKET_SWAP_ROUTES` on
   * `T1_market.swap_route.>`), so tests run beside a developer's stream. Default none.
   */
  prefix?: string;
  /** Multiplies the 5 GiB (`bus.streamMaxBytesScale`); default 1. */
  maxBytesScale?: number;
}

/** The subject filter of the stream: `market.swap_route.>` (with the prefix). */
export function swapRoutesFilter(prefix = ''): string {
  return `${prefix}${SWAP_ROUTES_SUBJECT_ROOT}.>`;
}

export function swapRoutesStreamSpec(options: { replicas?: number; prefix?: string; maxBytesScale?: number } = {}): StreamSpec {
  const prefix = options.prefix ?? '';
  const scale = options.maxBytesScale ?? 1;
  return {
    name: `${prefix}${SWAP_ROUTES_STREAM}`,
    subjects: [swapRoutesFilter(prefix)],
    retention: Retention.Limits,
    maxAgeNs: SWAP_ROUTES_MAX_AGE_MS * NS_PER_MS,
    maxBytes: scaledMaxBytes(SWAP_ROUTES_MAX_BYTES, scale),
    storage: Storage.File,
    maxMsgSize: DEFAULT_MAX_MSG_SIZE,
    replicas: options.replicas ?? 1,
    ...sizedByScale(scale),
  };
}

/** Creates or updates the stream. Idempotent (see `ensureStream`). */
export async function ensureSwapRoutesStream(
  jsm: JetStreamManager,
  options: SwapRoutesStreamOptions & { nc?: NatsConnection } = {},
): Promise<StreamInfo> {
  const replicas = options.replicas ?? (options.nc === undefined ? 1 : detectReplicas(options.nc));
  return ensureStream(
    jsm,
    swapRoutesStreamSpec({ replicas, ...(options.prefix === undefined ? {} : { prefix: options.prefix }), ...(options.maxBytesScale === undefined ? {} : { maxBytesScale: options.maxBytesScale }) }),
  );
}
