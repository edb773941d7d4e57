/**
 * Admission of quote streams (issue 11 item 1): what one client, and all clients together, may ask
 * of a StreamBatchQuotes (local :50052, the external quote service) or StreamAggregatedQuotes
 * (aggregator) server. A stream over a limit is refused when it opens, with the status and a
 * message naming the limit and its setting:
 * - more than `maxPairsPerStream` pairs: INVALID_ARGUMENT (the request itself is too big);
 * - `update_interval_ms` below `minIntervalMs` (0 still means the default interval): INVALID_ARGUMENT;
 * - a client already holding `maxStreamsPerClient` streams, or the server `maxStreams`:
 *   RESOURCE_EXHAUSTED (try again once one closes).
 * The client (`streamClientKey`) is what the client cannot forge: with auth on, the verified JWT
 * subject of the call's bearer token (as the HTTP rate limiter, quote-http-server.ts), so two
 * subjects behind one address each get their own limits; otherwise, or for a token without a
 * subject, the peer's address without its port (grpc-js `call.getPeer()`), which several
 * processes behind one address share.
 *
 * A leaf: no gRPC import; statuses are the code table's numbers (engine/error-status.ts).
 */
import { createHash } from 'node:crypto';

import { GrpcStatus } from '../error-status.js';
import { DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT, QuoteBudget } from './stream-budget.js';

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
  /**
   * Quotes a second pushed to all the streams of one client together (`stream.maxQuotesPerSecondPerClient`;
   * stream-budget.ts): past it the client's pushes wait, coalesced per pair. Infinity: no budget.
   */
  readonly maxQuotesPerSecondPerClient: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = Object.freeze({
  maxStreamsPerClient: DEFAULT_MAX_STREAMS_PER_CLIENT,
  maxStreams: DEFAULT_MAX_STREAMS,
  maxPairsPerStream: DEFAULT_MAX_PAIRS_PER_STREAM,
  minIntervalMs: DEFAULT_MIN_STREAM_INTERVAL_MS,
  maxQuotesPerSecondPerClient: DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT,
});

/** A refused stream: the gRPC status and the details naming the limit. */
export interface StreamRefusal {
  readonly code: GrpcStatus;
  readonly details: string;
}

/** An admitted stream's place; `release` once it ends (idempotent). */
export interface StreamTicket {
  /** The quote budget the client's streams share; undefined without one. */
  readonly budget: QuoteBudget | undefined;
  release(): void;
}

/** What the admission keeps per client with open streams. */
interface ClientStreams {
  streams: number;
  readonly budget: QuoteBudget | undefined;
}

/** The client part of a grpc-js peer string: `ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`, `1.2.3.4:5678`. */
export function clientOfPeer(peer: string): string {
  if (peer.startsWith('unix:')) return peer;
  const bare = peer.replace(/^ipv[46]:/, '');
  if (bare.startsWith('[')) return bare.slice(0, bare.indexOf(']') + 1);
  const colon = bare.lastIndexOf(':');
  return colon > 0 && bare.indexOf(':') === colon ? bare.slice(0, colon) : bare;
}

/** Subjects longer than this (characters) are keyed by their SHA-256. */
const MAX_SUBJECT_KEY_CHARS = 128;

/**
 * The key a stream's client is counted under: `sub:<subject>` for a verified JWT subject (undefined
 * or '' when auth is off or the token names none), else the peer's address (`clientOfPeer`).
 */
export function streamClientKey(peer: string, verifiedSubject: string | undefined): string {
  if (verifiedSubject === undefined || verifiedSubject === '') return clientOfPeer(peer);
  if (verifiedSubject.length <= MAX_SUBJECT_KEY_CHARS) return `sub:${verifiedSubject}`;
  return `sub:sha256:${createHash('sha256').update(verifiedSubject).digest('base64')}`;
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
  private readonly perClient = new Map<string, ClientStreams>();
  private open = 0;
  private readonly now: (() => number) | undefined;

  /** `now`: the budgets' monotonic ms clock (tests); default performance.now. */
  constructor(limits: Partial<StreamLimits> = {}, now?: () => number) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
    this.now = now;
  }

  /** Open streams now. */
  get streams(): number {
    return this.open;
  }

  /** Open streams of `client` now. */
  streamsOf(client: string): number {
    return this.perClient.get(client)?.streams ?? 0;
  }

  /** The quote budget `client`'s open streams share (undefined: no stream open, or no budget). */
  budgetOf(client: string): QuoteBudget | undefined {
    return this.perClient.get(client)?.budget;
  }

  /** Admits a stream of `client` with the request's shape, or says which limit refuses it. */
  admit(client: string, pairCount: number, requestedIntervalMs: number): StreamTicket | StreamRefusal {
    const shape = checkStreamShape(this.limits, pairCount, requestedIntervalMs);
    if (shape !== undefined) return shape;
    const entry = this.perClient.get(client);
    const held = entry?.streams ?? 0;
    if (held >= this.limits.maxStreamsPerClient) {
      return {
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: `too many streams: ${client} has ${held} open, at most ${this.limits.maxStreamsPerClient} per client (stream.maxStreamsPerClient)`,
      };
    }
    if (this.open >= this.limits.maxStreams) {
      return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `too many streams: ${this.open} open, at most ${this.limits.maxStreams} (stream.maxStreams)` };
    }
    const rate = this.limits.maxQuotesPerSecondPerClient;
    // The bucket lives while the client has a stream open: a client gets no fresh burst by
    // opening another stream beside its others.
    const clientStreams: ClientStreams = entry ?? { streams: 0, budget: Number.isFinite(rate) ? new QuoteBudget(rate, this.now) : undefined };
    clientStreams.streams++;
    this.perClient.set(client, clientStreams);
    this.open++;
    let released = false;
    return {
      budget: clientStreams.budget,
      release: () => {
        if (released) return;
        released = true;
        this.open--;
        if (--clientStreams.streams <= 0) this.perClient.delete(client);
      },
    };
  }
}

export function isStreamRefusal(value: StreamTicket | StreamRefusal): value is StreamRefusal {
  return (value as StreamRefusal).code !== undefined;
}
