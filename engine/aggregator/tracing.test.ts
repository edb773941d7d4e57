import * as grpc from '@grpc/grpc-js';
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { grpcMetadataSetter } from '../obs/trace-context.js';
import { UPSTREAM_WAIT_SPAN } from './aggregator-core.js';
import { FakeUpstream, SOL, USDC, eventually, makeQuote, startTestAggregator } from './testing.js';
import { STREAM_BATCH_QUOTES_SPAN } from './upstream-client.js';

const exporter = new InMemorySpanExporter();
let provider: NodeTracerProvider;

beforeAll(() => {
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register({ propagator: new W3CTraceContextPropagator() });
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  exporter.reset();
});

async function upstreams(): Promise<[FakeUpstream, FakeUpstream]> {
  const local = new FakeUpstream();
  const external = new FakeUpstream();
  local.respond = (p) => makeQuote(p, 10n);
  external.respond = (p) => makeQuote(p, 11n);
  await local.start();
  await external.start();
  cleanups.push(() => local.close(), () => external.close());
  return [local, external];
}

describe('aggregator traces', () => {
  it('opens a CLIENT span per upstream stream call and carries its context in the call metadata', async () => {
    const [local, external] = await upstreams();
    const t = await startTestAggregator(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    cleanups.push(() => t.close());
    await new Promise<void>((resolve, reject) =>
      (t.client['GetAggregatedQuote'] as unknown as (r: object, cb: (e: Error | null) => void) => void)({ inputMint: SOL, outputMint: USDC, amount: '5' }, (e) => (e ? reject(e) : resolve())),
    );
    await t.close();
    const spans = await eventually(() => {
      const s = exporter.getFinishedSpans().filter((x) => x.name === STREAM_BATCH_QUOTES_SPAN);
      expect(s).toHaveLength(2);
      return s;
    });
    const localSpan = spans.find((s) => s.attributes['tidepool.upstream.address'] === local.address)!;
    expect(localSpan.kind).toBe(SpanKind.CLIENT);
    expect(localSpan.attributes).toMatchObject({ 'tidepool.upstream.source': 'QUOTE_SOURCE_LOCAL', 'tidepool.upstream.pair_count': 1, 'rpc.method': 'StreamBatchQuotes' });
    const traceparent = String(local.metadata[0]!.get('traceparent')[0]);
    expect(traceparent).toBe(`00-${localSpan.spanContext().traceId}-${localSpan.spanContext().spanId}-01`);
  });

  it('continues the caller trace with a SERVER span per unary call and CLIENT child spans per upstream wait', async () => {
    const [local, external] = await upstreams();
    const t = await startTestAggregator(local, external, { localTimeout: 1000, externalTimeout: 1000 });
    cleanups.push(() => t.close());
    const caller = trace.getTracer('test').startSpan('caller', { kind: SpanKind.CLIENT });
    const metadata = new grpc.Metadata();
    propagation.inject(trace.setSpan(ROOT_CONTEXT, caller), metadata, grpcMetadataSetter);
    await new Promise<void>((resolve, reject) =>
      (t.client['GetAggregatedQuote'] as unknown as (r: object, m: grpc.Metadata, cb: (e: Error | null) => void) => void)({ inputMint: SOL, outputMint: USDC, amount: '5' }, metadata, (e) => (e ? reject(e) : resolve())),
    );
    caller.end();
    const server = await eventually(() => {
      const s = exporter.getFinishedSpans().find((x) => x.name === 'tidepool.v1.QuoteAggregatorService/GetAggregatedQuote');
      expect(s).toBeDefined();
      return s!;
    });
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect(server.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    const waits = exporter.getFinishedSpans().filter((x) => x.name === UPSTREAM_WAIT_SPAN);
    expect(waits.map((w) => w.attributes['tidepool.upstream.source']).sort()).toEqual(['external', 'local']);
    for (const w of waits) {
      expect(w.kind).toBe(SpanKind.CLIENT);
      expect(w.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    }
  });
});
