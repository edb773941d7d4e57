/** A StreamBatchQuotes stream of the external service continues the caller's trace (OTLP export). */
import * as grpc from '@grpc/grpc-js';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLogger } from '../obs/logger.js';
import { startOtlpReceiver, type OtlpReceiver } from '../obs/testing/otlp-receiver.js';
import { grpcMetadataSetter } from '../obs/trace-context.js';
import { initTracing, rpcSpanName, tracer, type Tracing } from '../obs/tracing.js';
import { defaultExternalConfig } from './external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from './external-quote-service.js';
import { FakeProvider, StreamProbe, USDC, WSOL, eventually } from './testing/fake-provider.js';

const logger = createLogger({ level: 'silent' });
const SPAN = rpcSpanName('QuoteService', 'StreamBatchQuotes');
let receiver: OtlpReceiver;
let tracing: Tracing;
let fake: FakeProvider;
let service: ExternalQuoteService;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = await initTracing({ serviceName: 'external-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, logger });
  fake = new FakeProvider();
  await fake.start();
  service = createExternalQuoteService(defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: fake.url, 'log.level': 'silent' }), { logger });
});

afterAll(async () => {
  await service?.close();
  await tracing?.shutdown();
  await fake?.close();
  await receiver?.close();
});

describe('external quote stream tracing', () => {
  it('records each stream as a SERVER span, child of the caller\'s CLIENT span, and a refused one with its error', async () => {
    const { grpc: target } = await service.start();
    const client = tracer().startSpan(SPAN, { kind: SpanKind.CLIENT });
    const metadata = new grpc.Metadata();
    propagation.inject(trace.setSpan(context.active(), client), metadata, grpcMetadataSetter);
    const probe = new StreamProbe(target, { pairs: [{ inputMint: WSOL, outputMint: USDC, amount: '5' }] }, metadata);
    await eventually(() => probe.quotes[0], 'a quote');
    probe.cancel();
    await eventually(() => service.health().activeStreams === 0, 'the stream to end');
    client.end();
    const bad = new StreamProbe(target, { pairs: [] });
    await eventually(() => bad.error, 'the refusal');
    probe.close();
    bad.close();
    await tracing.shutdown();
    const servers = receiver.spans.filter((s) => s.name === SPAN && s.kind === 'SERVER');
    expect(servers).toHaveLength(2);
    const ctx = client.spanContext();
    const traced = servers.find((s) => s.traceId === ctx.traceId)!;
    expect(traced).toMatchObject({ parentSpanId: ctx.spanId, serviceName: 'external-test', attributes: { 'rpc.method': 'StreamBatchQuotes', 'tidepool.pair_count': 1 } });
    expect(servers.find((s) => s !== traced)!.attributes['rpc.grpc.status_code']).toBe(3);
  });
});
