/**
 * Admission of quote streams (issue 11 item 1): what one client, and all clients together, may ask
 * of a StreamBatchQuotes (local :50052, the external quote service) or StreamAggregatedQuotes
 * (aggregator) server. A stream over a limit is refused when it opens, with the status and a
 * message naming the limit and its setting:
 * - more than `maxPairsPerStream` pairs: INVALID_ARGUMENT (the request itself is too big);
 * - `update_interval_ms` below `minIntervalMs` (0 still means the default interval): INVALID_ARGUMENT;
 * - a client already holding `maxStreamsPerClient` streams, or the server `maxStreams`:
 *   RESOURCE_EXHAUSTED (try again once one closes).
 * The client is the peer's address without its port (grpc-js `call.getPeer()`): a client cannot
 * pick it; several processes behind one address share its limit.
 *
 * A leaf: no gRPC import; statuses are the code table's numbers (engine/error-status.ts).
 */
import { GrpcStatus } from '../error-status.js';

/** 16: the aggregator opens 2 × ceil(pairs / 1,000) calls while it resubscribes (make-before-break). */
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 16;
export const DEFAULT_MAX_STREAMS = 64;
export const DEFAULT_MAX_PAIRS_PER_STREAM = 1000;
export const DEFAULT_MIN_STREAM_INTERVAL_MS = 100;

export interface StreamLimits {
  /** Open streams per client address at most (`stream.maxStreamsPerClient`). */
  readonly maxStreamsPerClient: number;
  /** Open streams of the server at most (`stream.maxStreams`). */
  readonly maxStreams: number;
  /** Pairs per stream at most (`stream.maxPairsPerStream`; quote.proto's own bound is 1,000). */
  readonly maxPairsPerStream: number;
  /** Least `update_interval_ms` accepted (`stream.minIntervalMs`). */
  readonly minIntervalMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = Object.freeze({
  maxStreamsPerClient: DEFAULT_MAX_STREAMS_PER_CLIENT,
  maxStreams: DEFAULT_MAX_STREAMS,
  maxPairsPerStream: DEFAULT_MAX_PAIRS_PER_STREAM,
  minIntervalMs: DEFAULT_MIN_STREAM_INTERVAL_MS,
});

/** A refused stream: the gRPC status and the details naming the limit. */
export interface StreamRefusal {
  readonly code: GrpcStatus;
  readonly details: string;
}

/** An admitted stream's place; `release` once it ends (idempotent). */
export interface StreamTicket {
  release(): void;
}

/** The client part of a grpc-js peer string: `ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`, `1.2.3.4:5678`. */
export function clientOfPeer(peer: string): string {
  if (peer.startsWith('unix:')) return peer;
  const bare = peer.replace(/^ipv[46]:/, '');
  if (bare.startsWith('[')) return bare.slice(0, bare.indexOf(']') + 1);
  const colon = bare.lastIndexOf(':');
  return colon > 0 && bare.indexOf(':') === colon ? bare.slice(0, colon) : bare;
}

/**
 * The limits a request's shape must meet (pairs, interval), before anything is allocated for it.
 * `requestedIntervalMs` is the raw update_interval_ms (0: the default). Undefined when it passes.
 */
export function checkStreamShape(limits: StreamLimits, pairCount: number, requestedIntervalMs: number): StreamRefusal | undefined {
  if (pairCount > limits.maxPairsPerStream) {
    return { code: GrpcStatus.INVALID_ARGUMENT, details: `pairs: ${pairCount} pairs, at most ${limits.maxPairsPerStream} per stream (stream.maxPairsPerStream)` };
  }
  if (requestedIntervalMs !== 0 && requestedIntervalMs < limits.minIntervalMs) {
    return {
      code: GrpcStatus.INVALID_ARGUMENT,
      details: `update_interval_ms: ${requestedIntervalMs} is below the minimum of ${limits.minIntervalMs} ms (stream.minInterval)`,
    };
  }
  return undefined;
}

/** Counts open streams per client and in all, and admits or refuses new ones. */
export class StreamAdmission {
  readonly limits: StreamLimits;
  private readonly perClient = new Map<string, number>();
  private open = 0;

  constructor(limits: Partial<StreamLimits> = {}) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
  }

  /** Open streams now. */
  get streams(): number {
    return this.open;
  }

  /** Open streams of `client` now. */
  streamsOf(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** Admits a stream of `client` with the request's shape, or says which limit refuses it. */
  admit(client: string, pairCount: number, requestedIntervalMs: number): StreamTicket | StreamRefusal {
    const shape = checkStreamShape(this.limits, pairCount, requestedIntervalMs);
    if (shape !== undefined) return shape;
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.limits.maxStreamsPerClient) {
      return {
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: `too many streams: ${client} has ${held} open, at most ${this.limits.maxStreamsPerClient} per client (stream.maxStreamsPerClient)`,
      };
    }
    if (this.open >= this.limits.maxStreams) {
      return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `too many streams: ${this.open} open, at most ${this.limits.maxStreams} (stream.maxStreams)` };
    }
    this.perClient.set(client, held + 1);
    this.open++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.open--;
        const n = (this.perClient.get(client) ?? 1) - 1;
        if (n <= 0) this.perClient.delete(client);
        else this.perClient.set(client, n);
      },
    };
  }
}

export function isStreamRefusal(value: StreamTicket | StreamRefusal): value is StreamRefusal {
  return (value as StreamRefusal).code !== undefined;
}
