import * as grpc from '@grpc/grpc-js';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { loadTidepoolProto } from '../proto.js';
import { createLogger } from './logger.js';
import { startOtlpReceiver, type OtlpReceiver } from './testing/otlp-receiver.js';
import { grpcMetadataGetter, grpcMetadataSetter } from './trace-context.js';
import { initTracing, otlpHeadersFromEnv, rpcAttributes, rpcSpanName, tracer, tracesEndpointFromEnv, type Tracing } from './tracing.js';

const logger = createLogger({ level: 'silent' });
const HEALTH = rpcSpanName('QuoteAggregatorService', 'Health');

/**
 * A real grpc-js QuoteAggregatorService whose Health handler continues the caller's trace: it
 * extracts the context from the call metadata and starts a SERVER span as its child.
 */
async function startTracedServer(): Promise<{ address: string; close(): Promise<void> }> {
  const { QuoteAggregatorService } = loadTidepoolProto();
  const server = new grpc.Server();
  server.addService(QuoteAggregatorService.service, {
    Health(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const parent = propagation.extract(ROOT_CONTEXT, call.metadata, grpcMetadataGetter);
      const span = tracer().startSpan(HEALTH, { kind: SpanKind.SERVER, attributes: rpcAttributes('QuoteAggregatorService', 'Health') }, parent);
      span.setStatus({ code: SpanStatusCode.OK });
      span.end();
      callback(null, {});
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err === null ? resolve(p) : reject(err))),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** The "client service": a root span of its own work, and a CLIENT span around the gRPC call whose context goes into the metadata. */
async function callHealth(address: string): Promise<{ metadata: grpc.Metadata }> {
  const { QuoteAggregatorService } = loadTidepoolProto();
  const client = new QuoteAggregatorService(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Health(req: object, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: unknown) => void): void;
  };
  try {
    return await tracer().startActiveSpan('tidepool.test.ClientService/Run', async (root) => {
      const span = tracer().startSpan(HEALTH, { kind: SpanKind.CLIENT, attributes: rpcAttributes('QuoteAggregatorService', 'Health') });
      const metadata = new grpc.Metadata();
      propagation.inject(trace.setSpan(context.active(), span), metadata, grpcMetadataSetter);
      await new Promise<void>((resolve, reject) => client.Health({}, metadata, (err) => (err === null ? resolve() : reject(err))));
      span.end();
      root.end();
      return { metadata };
    });
  } finally {
    client.close();
  }
}

describe('tracesEndpointFromEnv (OTel environment specification)', () => {
  it('appends v1/traces to the base endpoint, with or without a trailing slash', () => {
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe('http://collector:4318/v1/traces');
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp' })).toBe('http://collector:4318/otlp/v1/traces');
  });

  it('uses the traces endpoint as is, before the base one', () => {
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/custom' })).toBe('http://b:9999/custom');
  });

  it('is off when neither is set, when both are blank, or when OTEL_SDK_DISABLED is true', () => {
    expect(tracesEndpointFromEnv({})).toBeUndefined();
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' })).toBeUndefined();
    expect(tracesEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  });

  it('reads OTEL_EXPORTER_OTLP_HEADERS, URL-decoded, the traces-specific one winning per key', () => {
    expect(otlpHeadersFromEnv({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b, x-team=quotes,broken', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces' })).toEqual({
      'api-key': 'a b',
      'x-team': 'traces',
    });
  });

  it('names gRPC spans tidepool.v1.<Service>/<Method>', () => {
    expect(rpcSpanName('QuoteAggregatorService', 'GetAggregatedQuote')).toBe('tidepool.v1.QuoteAggregatorService/GetAggregatedQuote');
  });
});

describe('initTracing with a real OTLP receiver and real gRPC', () => {
  let receiver: OtlpReceiver;
  let server: { address: string; close(): Promise<void> };
  let tracing: Tracing | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startTracedServer();
  });
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
    receiver.spans.length = 0;
    receiver.requests.length = 0;
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('exports the client and server spans of one call as one trace, the SERVER span a child of the CLIENT span', async () => {
    tracing = await initTracing({ serviceName: 'tidepool-trace-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, logger });
    expect(tracing.enabled).toBe(true);
    const { metadata } = await callHealth(server.address);
    expect(metadata.get('traceparent')[0]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await tracing.shutdown(); // flushes the batch

    const root = receiver.spans.find((s) => s.name === 'tidepool.test.ClientService/Run');
    const client = receiver.spans.find((s) => s.name === HEALTH && s.kind === 'CLIENT');
    const serverSpan = receiver.spans.find((s) => s.name === HEALTH && s.kind === 'SERVER');
    expect(root).toBeDefined();
    expect(client).toBeDefined();
    expect(serverSpan).toBeDefined();
    expect(new Set([root!.traceId, client!.traceId, serverSpan!.traceId]).size).toBe(1);
    expect(root!.parentSpanId).toBe('');
    expect(client!.parentSpanId).toBe(root!.spanId);
    expect(serverSpan!.parentSpanId).toBe(client!.spanId);
    expect(metadata.get('traceparent')[0]).toBe(`00-${client!.traceId}-${client!.spanId}-01`);
    expect(serverSpan!.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'tidepool.v1.QuoteAggregatorService', 'rpc.method': 'Health' });
    for (const s of [root, client, serverSpan]) expect(s!.serviceName).toBe('tidepool-trace-test');
    expect(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json')).toBe(true);
  });

  it('honours OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME', async () => {
    tracing = await initTracing({
      serviceName: 'ignored',
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tidepool-test=yes',
        OTEL_SERVICE_NAME: 'from-env',
      },
      logger,
    });
    tracer().startSpan('tidepool.test.Env/Span').end();
    await tracing.shutdown();
    expect(receiver.requests.map((r) => r.path)).toEqual(['/custom/traces']);
    expect(receiver.requests[0]!.headers['x-tidepool-test']).toBe('yes');
    expect(receiver.spans.map((s) => [s.name, s.serviceName])).toEqual([['tidepool.test.Env/Span', 'from-env']]);
  });

  it('refuses a second provider while one is active, and allows one after shutdown', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    tracing = await initTracing({ serviceName: 'a', env, logger });
    await expect(initTracing({ serviceName: 'b', env, logger })).rejects.toMatchObject({ code: 'TP_ERR_CONFIG_INVALID' });
    await tracing.shutdown();
    await tracing.shutdown(); // idempotent
    tracing = await initTracing({ serviceName: 'b', env, logger });
    expect(tracing.enabled).toBe(true);
  });

  it('is a no-op without an endpoint: spans do not record, no traceparent is sent, nothing is exported', async () => {
    tracing = await initTracing({ serviceName: 'off', env: {}, logger });
    expect(tracing.enabled).toBe(false);
    const span = tracer().startSpan('tidepool.test.Off/Span');
    expect(span.isRecording()).toBe(false);
    span.end();
    const { metadata } = await callHealth(server.address);
    expect(metadata.get('traceparent')).toEqual([]);
    await tracing.shutdown();
    expect(receiver.requests).toEqual([]);
    expect(receiver.spans).toEqual([]);
  });

  it('is a no-op when OTEL_SDK_DISABLED is true even with an endpoint', async () => {
    tracing = await initTracing({ serviceName: 'off', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' }, logger });
    expect(tracing.enabled).toBe(false);
    await callHealth(server.address);
    await tracing.shutdown();
    expect(receiver.requests).toEqual([]);
  });
});

describe('the test OTLP receiver', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  /** Spans made by a private provider (not the global one), serialized by the exporter's own transformer. */
  function sampleSpans() {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'sample' }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const t = provider.getTracer('sample');
    const parent = t.startSpan('parent', { kind: SpanKind.SERVER, attributes: { n: 7, ok: true, ratio: 0.5, tags: ['a', 'b'] } });
    t.startSpan('child', { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, parent)).end();
    parent.end();
    return exporter.getFinishedSpans();
  }

  async function post(body: Uint8Array, contentType: string, method = 'POST'): Promise<number> {
    const res = await fetch(`${receiver.url}/v1/traces`, { method, headers: { 'content-type': contentType }, ...(method === 'POST' ? { body } : {}) });
    await res.arrayBuffer();
    return res.status;
  }

  it('reads the same spans from the OTLP protobuf and JSON encodings', async () => {
    const spans = sampleSpans();
    expect(await post(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf')).toBe(200);
    const fromProtobuf = receiver.spans.splice(0);
    expect(await post(JsonTraceSerializer.serializeRequest(spans)!, 'application/json')).toBe(200);
    const fromJson = receiver.spans.splice(0);
    expect(fromProtobuf).toEqual(fromJson);
    const parent = fromProtobuf.find((s) => s.name === 'parent')!;
    const child = fromProtobuf.find((s) => s.name === 'child')!;
    expect(parent).toMatchObject({ kind: 'SERVER', parentSpanId: '', serviceName: 'sample', attributes: { n: 7, ok: true, ratio: 0.5, tags: ['a', 'b'] } });
    expect(child).toMatchObject({ kind: 'CLIENT', traceId: parent.traceId, parentSpanId: parent.spanId });
    expect(parent.traceId).toBe(spans.find((s) => s.name === 'parent')!.spanContext().traceId);
  });

  it('answers 400 to a body it cannot read, 415 to other content types, 405 to other methods', async () => {
    expect(await post(new Uint8Array([0x0a, 0xff, 0xff]), 'application/x-protobuf')).toBe(400);
    expect(await post(new TextEncoder().encode('{"resourceSpans":'), 'application/json')).toBe(400);
    expect(await post(new Uint8Array([1]), 'text/plain')).toBe(415);
    expect(await post(new Uint8Array(), 'application/json', 'GET')).toBe(405);
    expect(receiver.spans).toEqual([]);
  });
});
