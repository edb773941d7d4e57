/**
 * QuoteAggregatorService on gRPC (spec 01, :50051) with keepalive. StreamAggregatedQuotes writes
 * pre-encoded bytes: its method definition is loadTidepoolProto()'s with a pass-through
 * `responseSerialize`, so one encoding per pair change serves every stream (stream-subscriber.ts);
 * GetAggregatedQuote likewise answers with the core's memoized encoding (getAggregatedQuoteBody).
 * Errors become statuses in quote-errors.ts; every unary call gets a SERVER span whose parent is
 * the caller's W3C trace context. With auth on, every call needs a JWT bearer token first
 * (UNAUTHENTICATED otherwise; engine/auth/grpc-auth.ts).
 */
import * as grpc from '@grpc/grpc-js';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { context as otelContext, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Logger } from 'pino';

import { guardStream, guardUnary, verifiedCallSubject, type GrpcAuth } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { grpcMetadataGetter } from '../obs/index.js';
import { rpcAttributes, rpcSpanName, tracer } from '../obs/index.js';
import { loadTidepoolProto } from '../proto.js';
import { isStreamRefusal, streamClientKey, type StreamAdmission } from '../quote-grpc/index.js';
import { type WireBatchQuoteRequest, type WireQuoteRequest } from '../quote/index.js';
import type { AggregatorCore } from './aggregator-core.js';
import { RequestKind } from './aggregator-stats.js';
import { confidenceResponse } from './confidence-breakdown.js';
import { aggregatorHealth } from './health.js';
import { grpcStatusOf } from './quote-errors.js';
import { validateBatchRequest, validateQuoteRequest } from './request-validation.js';

/** Spec 01: keepalive on the gRPC server. */
export const AGGREGATOR_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
};

const SERVICE = 'tidepool.v1.QuoteAggregatorService';

/** The service definition with StreamAggregatedQuotes' serializer passing encoded bytes through. */
export function aggregatorServiceDefinition(): grpc.ServiceDefinition {
  const base = loadTidepoolProto().packageDefinition[SERVICE] as ServiceDefinition;
  const stream = base['StreamAggregatedQuotes']!;
  const unary = base['GetAggregatedQuote']!;
  return {
    ...(base as unknown as grpc.ServiceDefinition),
    StreamAggregatedQuotes: { ...stream, responseSerialize: (bytes: Buffer) => bytes },
    // Answers come encoded from the core's memo (getAggregatedQuoteBody).
    GetAggregatedQuote: { ...unary, responseSerialize: (bytes: Buffer) => bytes },
  } as grpc.ServiceDefinition;
}

interface ConfidenceRequestWire {
  target?: 'pairId' | 'quote';
  pairId?: string;
  quote?: WireQuoteRequest | null;
}

function serviceError(err: unknown): Partial<grpc.StatusObject> {
  return { code: grpcStatusOf(err), details: err instanceof Error ? err.message : String(err) };
}

export function createAggregatorGrpcServer(
  core: AggregatorCore,
  options: { logger: Logger; version: string; defaultProviderUptime: number; auth?: GrpcAuth; admission?: StreamAdmission },
): grpc.Server {
  const server = new grpc.Server(AGGREGATOR_SERVER_OPTIONS);

  /** Runs a unary handler inside a SERVER span parented by the caller's trace context. */
  function unary<Req, Res>(method: string, handle: (request: Req, ctx: ReturnType<typeof otelContext.active>) => Promise<Res>): grpc.handleUnaryCall<Req, Res> {
    return guardUnary<Req, Res>(options.auth, (call, callback) => {
      const parent = propagation.extract(ROOT_CONTEXT, call.metadata, grpcMetadataGetter);
      const span = tracer().startSpan(rpcSpanName('QuoteAggregatorService', method), { kind: SpanKind.SERVER, attributes: rpcAttributes('QuoteAggregatorService', method) }, parent);
      const ctx = trace.setSpan(parent, span);
      otelContext.with(ctx, () => handle(call.request, ctx)).then(
        (response) => {
          span.end();
          callback(null, response);
        },
        (err: unknown) => {
          const status = serviceError(err);
          span.setAttribute('rpc.grpc.status_code', status.code!);
          span.setStatus({ code: SpanStatusCode.ERROR, message: status.details ?? '' });
          span.end();
          if (status.code === grpc.status.INTERNAL) options.logger.error({ err, method }, 'aggregator call failed');
          callback(status);
        },
      );
    });
  }

  const handlers: grpc.UntypedServiceImplementation = {
    StreamAggregatedQuotes: guardStream(options.auth, (call: grpc.ServerWritableStream<WireBatchQuoteRequest, Buffer>) => {
      let request;
      try {
        request = validateBatchRequest(call.request);
      } catch (err) {
        core.stats.countRequest(RequestKind.Failed);
        call.emit('error', serviceError(err));
        return;
      }
      // Stream limits (engine/quote stream-limits.ts): per client (verified JWT subject with auth
      // on, else address), in all, pairs, interval.
      let release: (() => void) | undefined;
      if (options.admission !== undefined) {
        const admitted = options.admission.admit(streamClientKey(call.getPeer(), verifiedCallSubject(options.auth, call.metadata)), request.pairs.length, Number(call.request?.updateIntervalMs ?? 0));
        if (isStreamRefusal(admitted)) {
          core.stats.countRequest(RequestKind.Failed);
          options.logger.info({ peer: call.getPeer(), status: admitted.code, reason: admitted.details }, 'aggregated stream refused');
          call.emit('error', { code: admitted.code, details: admitted.details });
          return;
        }
        release = () => admitted.release();
        for (const event of ['cancelled', 'close', 'error', 'finish']) call.on(event, release);
      }
      try {
        core.openStream(call as grpc.ServerWritableStream<unknown, Buffer>, request);
      } catch (err) {
        release?.();
        call.emit('error', serviceError(err)); // shutting down: UNAVAILABLE
      }
    }),
    GetAggregatedQuote: unary<WireQuoteRequest, Buffer>('GetAggregatedQuote', async (request, ctx) => {
      let valid;
      try {
        valid = validateQuoteRequest(request);
      } catch (err) {
        core.stats.countRequest(RequestKind.Failed);
        throw err;
      }
      return core.getAggregatedQuoteBody(valid.pair, valid.slippageBps, ctx);
    }),
    GetConfidenceBreakdown: unary<ConfidenceRequestWire, object>('GetConfidenceBreakdown', async (request, ctx) => {
      if (request.target === 'quote') {
        const valid = validateQuoteRequest(request.quote ?? undefined, 'quote');
        const quote = core.heldAggregation(valid.pair.pairId) ?? (await core.getAggregatedQuote(valid.pair, valid.slippageBps, ctx));
        return confidenceResponse(quote, options.defaultProviderUptime, core.scoringEnabled);
      }
      const pairId = request.pairId ?? '';
      if (!/^[0-9a-f]{16}$/.test(pairId)) {
        throw new TpError(ErrorCode.BadParameter, 'pair_id: expected 16 lowercase hex characters (or give quote)', { context: { parameter: 'pair_id' } });
      }
      const quote = core.heldAggregation(pairId);
      if (quote === undefined) throw new TpError(ErrorCode.NotFound, `no quotes held for pair ${pairId}`, { context: { pairId } });
      return confidenceResponse(quote, options.defaultProviderUptime, core.scoringEnabled);
    }),
    Health: unary<object, object>('Health', async () => aggregatorHealth(core, options.version)),
  };
  server.addService(aggregatorServiceDefinition(), handlers);
  return server;
}

/**
 * Binds `host:port` (0: any free port), over TLS with `tls` (tls.certFile / tls.keyFile), else
 * plaintext; resolves with the bound port.
 */
export function bindGrpc(server: grpc.Server, host: string, port: number, tls?: { cert: string; key: string } | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
    const credentials =
      tls === undefined
        ? grpc.ServerCredentials.createInsecure()
        : grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], false);
    server.bindAsync(target, credentials, (err, bound) => {
      if (err) reject(new TpError(ErrorCode.Io, `aggregator gRPC server cannot listen on ${target}: ${err.message}`, { cause: err, context: { address: target } }));
      else resolve(bound);
    });
  });
}

/** Graceful stop within `timeoutMs`, then forced. */
export function shutdownGrpc(server: grpc.Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
