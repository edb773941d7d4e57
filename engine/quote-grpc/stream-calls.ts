/**
 * The gRPC side shared by the two upstream quote services (local: quote-stream-server.ts, external:
 * engine/external/external-quote-server.ts): a grpc-js server answering
 * `tidepool.v1.QuoteService.StreamBatchQuotes`, and the bookkeeping of its open calls. Each service
 * supplies only what differs: how an accepted request becomes a subscription, and what it does
 * when one opens and is released.
 *
 * - With auth on (`auth`), a call without a valid JWT bearer token ends with UNAUTHENTICATED before
 *   anything else (engine/auth/grpc-auth.ts).
 * - While closing, a call ends at once with UNAVAILABLE.
 * - Each call is a SERVER span (`tidepool.v1.QuoteService/StreamBatchQuotes`) under the caller's
 *   W3C trace context from the call metadata (a no-op while tracing is off), ended with
 *   `tidepool.quotes_sent` when the call is released.
 * - A malformed request (quote-stream-request.ts) ends at once with INVALID_ARGUMENT naming the
 *   field; its span is ended with that status.
 * - With `admission` (stream-limits.ts), a request over a limit (pairs per stream, minimum
 *   update_interval_ms: INVALID_ARGUMENT; streams per client, streams in all:
 *   RESOURCE_EXHAUSTED) ends at once with a message naming the limit and its setting. The client
 *   is the verified JWT subject with auth on, else the peer's address (`streamClientKey`); its
 *   quote budget (stream-budget.ts) is handed to the subscription.
 * - An accepted call is registered, counted in the active-streams gauge, released on 'cancelled',
 *   'close' or 'error' (idempotent), and its subscription started.
 * - close(): every open call is released and ends with UNAVAILABLE, then tryShutdown, and
 *   forceShutdown past `shutdownTimeoutMs`. Idempotent.
 */
import * as grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, type Span } from '@opentelemetry/api';

import { guardStream, guardUnary, verifiedCallSubject, type GrpcAuth } from '../auth/index.js';
import { grpcStatusOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { grpcMetadataGetter } from '../obs/index.js';
import { rpcAttributes, rpcSpanName, tracer } from '../obs/index.js';
import { loadTidepoolProto } from '../proto.js';
import {
  StreamRequestError,
  parseStreamRequest,
  type BatchQuoteRequestMessage,
  type StreamRequest,
  type StreamRequestOptions,
} from './quote-stream-request.js';
import type { UpstreamQuote } from '../quote/index.js';
import type { QuoteBudget } from './stream-budget.js';
import { isStreamRefusal, streamClientKey, type StreamAdmission, type StreamTicket } from './stream-limits.js';

const STREAM_SPAN = rpcSpanName('QuoteService', 'StreamBatchQuotes');
/** A malformed request, and a call refused or ended while closing (the code table's statuses). */
const INVALID_ARGUMENT = grpcStatusOf(ErrorCode.BadParameter);
const UNAVAILABLE = grpcStatusOf(ErrorCode.Unavailable);

/** How long close() lets streams finish before forcing the connections shut. */
export const DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS = 2000;

/** One StreamBatchQuotes call as grpc-js hands it to the server. */
export type QuoteStreamCall = grpc.ServerWritableStream<BatchQuoteRequestMessage, UpstreamQuote>;

/** What a service keeps per accepted call. */
export interface StreamSubscription {
  /** Quotes written so far (the span's `tidepool.quotes_sent`). */
  readonly sent: number;
  start(): void;
  /** Stops sending. Idempotent. */
  close(): void;
}

export interface StreamCallsOptions<S extends StreamSubscription> {
  serverOptions: grpc.ServerOptions;
  /** Bind address. */
  host: string;
  /** Serve TLS with this PEM certificate (chain) and key; undefined: plaintext. */
  tls?: { cert: string; key: string } | undefined;
  /** Default DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS. */
  shutdownTimeoutMs?: number | undefined;
  /** How log lines and the bind error name the stream ('quote stream', 'external quote stream'). */
  name: string;
  /** The UNAVAILABLE details of calls ended by close(). */
  shuttingDownDetails: string;
  /** Set to the number of open calls. */
  activeStreams: { set(value: number): void };
  logger?: Logger | undefined;
  /** JWT bearer auth of the calls; undefined: off. */
  auth?: GrpcAuth;
  /** Per-client and global stream limits (stream-limits.ts); undefined: none. */
  admission?: StreamAdmission | undefined;
  /**
   * Unary methods of the same service served beside the stream (the local service's GetQuote /
   * GetQuotes), each behind the same auth guard; a method not given answers UNIMPLEMENTED.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  unary?: Record<string, grpc.handleUnaryCall<any, any>>;
  /** What the service accepts beyond quote.proto's rules (exact out). */
  request?: StreamRequestOptions;
  /** The subscription of an accepted request; `budget`: its client's quote budget, if any. */
  subscribe(request: StreamRequest, call: QuoteStreamCall, budget: QuoteBudget | undefined): S;
  /** A call was registered (before the gauge is set and the subscription started). */
  opened?(sub: S, request: StreamRequest): void;
  /** A call was released (after its subscription closed and its span ended, before the gauge is set). */
  released?(sub: S): void;
  /** close() began: called once, before the open calls end. */
  closing?(): void;
}

interface OpenCall {
  readonly call: QuoteStreamCall;
  readonly span: Span;
  readonly ticket: StreamTicket | undefined;
}

export class StreamCalls<S extends StreamSubscription> {
  private readonly options: StreamCallsOptions<S>;
  private readonly log: Logger | undefined;
  private readonly server: grpc.Server;
  private readonly calls = new Map<S, OpenCall>();
  private boundPort = 0;
  private isClosing = false;
  private closed: Promise<void> | undefined;

  constructor(options: StreamCallsOptions<S>) {
    this.options = options;
    this.log = options.logger;
    this.server = new grpc.Server(options.serverOptions);
    this.server.addService(loadTidepoolProto().QuoteService.service, {
      StreamBatchQuotes: guardStream(options.auth, (call: QuoteStreamCall) => this.handle(call)),
      ...Object.fromEntries(Object.entries(options.unary ?? {}).map(([name, handler]) => [name, guardUnary(options.auth, handler)])),
    });
    options.activeStreams.set(0);
  }

  /** The bound port (after start). */
  get port(): number {
    return this.boundPort;
  }

  /** Calls open now. */
  get size(): number {
    return this.calls.size;
  }

  /** The subscriptions of the open calls. */
  subscriptions(): IterableIterator<S> {
    return this.calls.keys();
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port: number): Promise<number> {
    const host = this.options.host;
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const credentials =
      this.options.tls === undefined
        ? grpc.ServerCredentials.createInsecure()
        : grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(this.options.tls.cert), private_key: Buffer.from(this.options.tls.key) }], false);
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, credentials, (err, bound) => {
        if (err !== null) {
          reject(new TpError(ErrorCode.Io, `${this.options.name} cannot listen on ${address}: ${err.message}`, { cause: err, context: { address } }));
          return;
        }
        this.boundPort = bound;
        resolve(bound);
      });
    });
  }

  /** Ends every call with UNAVAILABLE, then shuts the server down (forced past the timeout). Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.isClosing = true;
      this.options.closing?.();
      for (const [sub, { call }] of this.calls) {
        this.release(sub);
        call.emit('error', { code: UNAVAILABLE, details: this.options.shuttingDownDetails });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.server.forceShutdown();
          resolve();
        }, this.options.shutdownTimeoutMs ?? DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS);
        this.server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    })();
    return this.closed;
  }

  private handle(call: QuoteStreamCall): void {
    if (this.isClosing) {
      call.emit('error', { code: UNAVAILABLE, details: this.options.shuttingDownDetails });
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, call.metadata, grpcMetadataGetter);
    const span = tracer().startSpan(STREAM_SPAN, { kind: SpanKind.SERVER, attributes: rpcAttributes('QuoteService', 'StreamBatchQuotes') }, parent);
    let request;
    try {
      request = parseStreamRequest(call.request, this.options.request);
    } catch (err) {
      const details = err instanceof StreamRequestError ? err.message : 'invalid request';
      span.setAttribute('rpc.grpc.status_code', INVALID_ARGUMENT);
      span.setStatus({ code: SpanStatusCode.ERROR, message: details });
      span.end();
      call.emit('error', { code: INVALID_ARGUMENT, details });
      return;
    }
    span.setAttribute('tidepool.pair_count', request.pairs.length);
    let ticket: StreamTicket | undefined;
    if (this.options.admission !== undefined) {
      const client = streamClientKey(call.getPeer(), verifiedCallSubject(this.options.auth, call.metadata));
      const admitted = this.options.admission.admit(client, request.pairs.length, Number(call.request.updateIntervalMs ?? 0));
      if (isStreamRefusal(admitted)) {
        span.setAttribute('rpc.grpc.status_code', admitted.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: admitted.details });
        span.end();
        this.log?.info({ client, pairs: request.pairs.length, status: admitted.code, reason: admitted.details }, `${this.options.name} refused`);
        call.emit('error', { code: admitted.code, details: admitted.details });
        return;
      }
      ticket = admitted;
    }
    const sub = this.options.subscribe(request, call, ticket?.budget);
    this.calls.set(sub, { call, span, ticket });
    this.options.opened?.(sub, request);
    this.options.activeStreams.set(this.calls.size);
    const release = (): void => this.release(sub);
    call.on('cancelled', release);
    call.on('close', release);
    call.on('error', release);
    this.log?.debug({ pairs: request.pairs.length, intervalMs: request.intervalMs, slippageBps: request.slippageBps }, `${this.options.name} opened`);
    sub.start();
  }

  /** Frees a call's subscription (client cancel, server end). Idempotent. */
  private release(sub: S): void {
    const open = this.calls.get(sub);
    if (open === undefined) return;
    this.calls.delete(sub);
    open.ticket?.release();
    sub.close();
    open.span.setAttribute('tidepool.quotes_sent', sub.sent);
    open.span.end();
    this.options.released?.(sub);
    this.options.activeStreams.set(this.calls.size);
    this.log?.debug({ sent: sub.sent }, `${this.options.name} closed`);
  }
}
