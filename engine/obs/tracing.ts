/**
 * OpenTelemetry tracing for the services (spec 01: "exports traces through OpenTelemetry";
 * spec 01 names OTEL_EXPORTER_OTLP_ENDPOINT). Switched by the environment, as the OTel SDK
 * environment specification has it:
 *
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full URL of the traces endpoint, used as is
 *   OTEL_EXPORTER_OTLP_ENDPOINT         base URL; traces go to `${base}/v1/traces`
 *   OTEL_EXPORTER_OTLP_HEADERS          `key=value,key2=value2` (URL-encoded values) sent with every export
 *   OTEL_SERVICE_NAME                   overrides the service name the caller passes
 *   OTEL_SDK_DISABLED=true              turns tracing off even with an endpoint
 *
 * With neither endpoint set, `initTracing` registers nothing: the @opentelemetry/api calls the code
 * makes (`trace.getTracer`, `propagation.inject`) stay the API's no-ops, which cost a function call,
 * and the SDK is never loaded (it is imported when tracing starts: ~12 MB of RSS a process that
 * does not trace does not carry).
 *
 * Enabled, it registers globally a NodeTracerProvider (resource `service.name`), a BatchSpanProcessor
 * over the OTLP/HTTP exporter (JSON body, `application/json`, the exporter's only encoding), the
 * W3C trace-context propagator (`traceparent` / `tracestate`) and the AsyncLocalStorage context
 * manager (the SDK's default), so the active span follows async calls.
 *
 * How a service uses it:
 *
 *   const tracing = await initTracing({ serviceName: 'tidepool-aggregator', logger });  // at start
 *   ...
 *   await tracing.shutdown();   // at graceful shutdown: flushes the spans still batched
 *
 * Span names: gRPC spans are named after the full method, `tidepool.v1.<Service>/<Method>`
 * (`rpcSpanName`), SERVER kind on the server, CLIENT kind on the caller, with `rpcAttributes`. The
 * caller injects the context into the call's metadata (`propagation.inject(ctx, metadata,
 * grpcMetadataSetter)`, engine/obs/trace-context.ts); the server extracts it (`propagation.extract(
 * ROOT_CONTEXT, call.metadata, grpcMetadataGetter)`) and starts its span as a child.
 */
import { context, propagation, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from './logger.js';

/** The instrumentation scope name of the engine's own spans. */
export const TRACER_NAME = 'tidepool';
/** The proto package every service's spans are named under. */
export const RPC_PACKAGE = 'tidepool.v1';

export interface TracingOptions {
  /** `service.name` of the spans (OTEL_SERVICE_NAME overrides it). */
  serviceName: string;
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
  logger: Logger;
}

export interface Tracing {
  /** True when spans are exported. */
  readonly enabled: boolean;
  /** Flushes batched spans, stops exporting and unregisters the globals. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * The traces URL the environment asks for, or undefined when tracing is off. The traces-specific
 * variable wins and is used as is; the base one gets `v1/traces` appended (OTel env spec).
 */
export function tracesEndpointFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces !== undefined && traces !== '') return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base === undefined || base === '') return undefined;
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}

/** OTEL_EXPORTER_OTLP_HEADERS (and the traces-specific one, which wins per key). */
export function otlpHeadersFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (value ?? '').split(',')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
      } catch {
        // A malformed escape: skip the pair rather than fail the service's start.
      }
    }
  }
  return headers;
}

/** `tidepool.v1.<Service>/<Method>`: the span name of a gRPC call on either side. */
export function rpcSpanName(service: string, method: string): string {
  return `${RPC_PACKAGE}.${service}/${method}`;
}

/** OTel RPC semantic-convention attributes of a gRPC call. */
export function rpcAttributes(service: string, method: string): Attributes {
  return { 'rpc.system': 'grpc', 'rpc.service': `${RPC_PACKAGE}.${service}`, 'rpc.method': method };
}

/** The engine's tracer (a no-op one while tracing is off). */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

let active: NodeTracerProvider | undefined;

const disabled: Tracing = { enabled: false, shutdown: async () => undefined };

/**
 * Starts tracing when the environment asks for it (see the module comment), else returns a no-op.
 * One process has one provider: a second call while one is active throws TP_ERR_CONFIG_INVALID.
 */
export async function initTracing(options: TracingOptions): Promise<Tracing> {
  const env = options.env ?? process.env;
  const url = tracesEndpointFromEnv(env);
  if (url === undefined) {
    options.logger.debug('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)');
    return disabled;
  }
  if (active !== undefined) throw new TpError(ErrorCode.ConfigInvalid, 'tracing is already initialised in this process');
  const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  if (active !== undefined) throw new TpError(ErrorCode.ConfigInvalid, 'tracing is already initialised in this process');
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || options.serviceName;
  const exporter = new OTLPTraceExporter({ url, headers: otlpHeadersFromEnv(env) });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  active = provider;
  options.logger.info({ url, serviceName }, 'tracing on: exporting spans over OTLP/HTTP');

  let closing: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      closing ??= (async () => {
        try {
          await provider.shutdown();
        } catch (err) {
          options.logger.warn({ err }, 'tracing: flushing spans at shutdown failed');
        } finally {
          // Unregister so the globals are the API's no-ops again (and a later init may register).
          trace.disable();
          propagation.disable();
          context.disable();
          if (active === provider) active = undefined;
        }
      })();
      return closing;
    },
  };
}
