/**
 * W3C trace context (`traceparent`, `tracestate`) carried in gRPC metadata, for
 * `propagation.inject` on the client side of a call and `propagation.extract` on the server side.
 * With no tracer provider registered (OTEL_EXPORTER_OTLP_ENDPOINT unset) both are no-ops.
 */
import type { Metadata } from '@grpc/grpc-js';
import type { TextMapGetter, TextMapSetter } from '@opentelemetry/api';

export const grpcMetadataSetter: TextMapSetter<Metadata> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

export const grpcMetadataGetter: TextMapGetter<Metadata> = {
  keys(carrier) {
    return Object.keys(carrier.getMap());
  },
  get(carrier, key) {
    const values = carrier.get(key);
    if (values.length === 0) return undefined;
    return values.map((v) => (typeof v === 'string' ? v : v.toString('utf8')));
  },
};
