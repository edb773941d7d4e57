/**
 * The aggregator over its real upstreams, every part real: the engine under the simulator serves
 * the local quotes (StreamBatchQuotes from its cache), `external-quotes` polls the simulator's
 * /quote, the oracle reads the simulator's /price/v3, SwapRouteEvents go to JetStream on the local
 * NATS (a stream of this test's own), and traces go by OTLP to a local receiver.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { defaultAggregatorConfig } from '../aggregator/aggregator-config.js';
import { createAggregator, type Aggregator } from '../aggregator/aggregator.js';
import { OraclePrices } from '../aggregator/oracle-prices.js';
import { SwapRoutePublisher } from '../aggregator/route-publisher.js';
import { decodeSwapRouteEvent, pairId } from '../aggregator/swap-route-event.js';
import { TEST_STREAM_MAX_BYTES_SCALE, uniqueName } from '../bus/testing/local-nats.js';
import { defaultExternalConfig } from '../external/external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from '../external/external-quote-service.js';
import { startOtlpReceiver, type OtlpReceiver } from '../obs/testing/otlp-receiver.js';
import { initTracing, type Tracing } from '../obs/tracing.js';
import { loadTidepoolProto } from '../proto.js';
import { eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

const BUS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SCHEMA = resolve(import.meta.dirname, '../../schemas/swap-route-event.fbs');
const FLATC = ((): boolean => {
  try {
    execFileSync('flatc', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

type Unary = (request: object, callback: (err: grpc.ServiceError | null, response: Record<string, unknown>) => void) => void;
type AggregatorClient = grpc.Client & Record<'GetAggregatedQuote' | 'GetConfidenceBreakdown' | 'Health', Unary>;

const call = (client: AggregatorClient, method: 'GetAggregatedQuote' | 'GetConfidenceBreakdown' | 'Health', request: object): Promise<Record<string, unknown>> =>
  new Promise((done, fail) => client[method](request, (err, res) => (err ? fail(err) : done(res))));

interface WireQuote {
  outputAmount: string;
  provider: string;
  route: { pool: string }[];
}

describe('the aggregator over the engine and the external quote service, under the simulator', () => {
  const logger = pino({ level: 'silent' });
  let receiver: OtlpReceiver;
  let tracing: Tracing;
  let stack: EngineUnderSim;
  let external: ExternalQuoteService;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let prefix: string;
  let aggregator: Aggregator;
  let client: AggregatorClient;
  let closed = false;

  const closeAll = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    client?.close();
    await aggregator?.close();
    await external?.close();
    await stack?.close();
    await tracing?.shutdown();
  };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracing = await initTracing({ serviceName: 'tidepool-stack-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, logger });
    stack = await startEngineUnderSim();
    external = createExternalQuoteService(
      defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: `${stack.simEndpoints.http}/quote`, rateLimitRps: 200, pollInterval: 100 }),
      { logger },
    );
    const externalEndpoints = await external.start();
    nc = await connect({ servers: BUS });
    jsm = await nc.jetstreamManager();
    prefix = `${uniqueName('STACK')}_`;
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const oracle = new OraclePrices({ url: `${stack.simEndpoints.http}/price/v3`, logger });
    aggregator = createAggregator(
      defaultAggregatorConfig({ grpcPort: 0, httpPort: 0, localQuoteAddr: stack.endpoints.localQuotes, externalQuoteAddr: externalEndpoints.grpc, shutdownTimeout: 2000 }),
      { logger, publisher, oracle },
    );
    const { grpcPort } = await aggregator.start();
    const Client = loadTidepoolProto().QuoteAggregatorService;
    client = new Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure()) as unknown as AggregatorClient;
  });

  afterAll(async () => {
    await closeAll();
    await jsm?.streams.delete(`${prefix}MARKET_SWAP_ROUTES`).catch(() => undefined);
    await nc?.close();
    await receiver?.close();
  });

  /** A pair of the simulator's first pool, 1,000 atoms of its token A (a small, exact swap). */
  const pair = (): { inputMint: string; outputMint: string; amount: string; slippageBps: number } => {
    const pool = stack.sim.chain.pools()[0]!.pool;
    return { inputMint: pool.tokenA, outputMint: pool.tokenB, amount: '1000000', slippageBps: 50 };
  };

  it('merges the engine\'s exact cache quote with the simulator\'s /quote answer, scored with the oracle', async () => {
    const request = pair();
    const quote = await eventually(async () => {
      // Until the upstream subscriptions are warm, the aggregator says UNAVAILABLE (not warm yet).
      const q = await call(client, 'GetAggregatedQuote', request).catch((err: { code?: number }) => {
        if (err.code === 14) return undefined;
        throw err;
      });
      return q?.['sourceClass'] === 'SOURCE_CLASS_BOTH' ? q : undefined;
    }, 20_000, 'a quote with both sources');
    const local = quote['localQuote'] as WireQuote;
    const ext = quote['externalQuote'] as WireQuote;
    expect(local.provider).toBe('tidepool');
    expect(ext.provider).toBe('simulator');
    // The chain is quiet (no flow): both sides price the same state.
    const cached = (await (await fetch(`${stack.endpoints.quote}/quote?input=${request.inputMint}&output=${request.outputMint}&amount=${request.amount}`)).json()) as { outputAmount: string; source: string };
    expect(cached.source).toBe('cache');
    expect(local.outputAmount).toBe(cached.outputAmount);
    const direct = (await (await fetch(`${stack.simEndpoints.http}/quote?inputMint=${request.inputMint}&outputMint=${request.outputMint}&amount=${request.amount}`)).json()) as { outAmount: string };
    expect(ext.outputAmount).toBe(direct.outAmount);
    expect(quote['pairId']).toBe(pairId(request.inputMint, request.outputMint, BigInt(request.amount)));
    const localOut = Number(local.outputAmount);
    expect(quote['priceDifferencePct']).toBeCloseTo(((Number(ext.outputAmount) - localOut) / localOut) * 100, 9);
    expect(quote['decision']).toMatch(/^DECISION_(EXECUTE|VERIFY|CAUTIOUS)$/);

    const breakdown = await eventually(async () => {
      const b = await call(client, 'GetConfidenceBreakdown', { pairId: quote['pairId'] });
      const factors = ((b['local'] as { confidence: { factors: { kind: string; inputKnown: boolean }[] } }).confidence.factors);
      return factors.find((f) => f.kind === 'CONFIDENCE_FACTOR_KIND_ORACLE')?.inputKnown === true ? b : undefined;
    }, 10_000, 'the oracle price');
    const localFactors = (breakdown['local'] as { confidence: { factors: { kind: string; weight: number }[] } }).confidence.factors;
    expect(localFactors.map((f) => [f.kind, f.weight])).toEqual([
      ['CONFIDENCE_FACTOR_KIND_POOL_AGE', 0.3],
      ['CONFIDENCE_FACTOR_KIND_ROUTE', 0.2],
      ['CONFIDENCE_FACTOR_KIND_ORACLE', 0.3],
      ['CONFIDENCE_FACTOR_KIND_PROVIDER', 0.1],
      ['CONFIDENCE_FACTOR_KIND_SLIPPAGE', 0.1],
    ]);

    const health = await call(client, 'Health', {});
    expect(health['status']).toBe('SERVING_STATUS_SERVING');
  });

  it.skipIf(!FLATC)('publishes the SwapRouteEvent of that quote on market.swap_route.optimal, read back by flatc from the schema', async () => {
    const request = pair();
    const quote = await call(client, 'GetAggregatedQuote', request);
    expect(quote['sourceClass']).toBe('SOURCE_CLASS_BOTH');
    const stream = `${prefix}MARKET_SWAP_ROUTES`;
    const stored = await eventually(async () => {
      const info = await jsm.streams.info(stream).catch(() => undefined);
      if (info === undefined || info.state.messages === 0) return undefined;
      return jsm.streams.getMessage(stream, { seq: info.state.last_seq });
    }, 10_000, 'a SwapRouteEvent on the stream');
    expect(stored.subject).toBe(`${prefix}market.swap_route.optimal`);
    const event = decodeSwapRouteEvent(stored.data);
    const local = BigInt((quote['localQuote'] as WireQuote).outputAmount);
    const ext = BigInt((quote['externalQuote'] as WireQuote).outputAmount);
    expect(event.estimatedProfit).toBe(event.externalOutputAmount - event.localOutputAmount);

    const dir = await mkdtemp(join(tmpdir(), 'stack-event-'));
    try {
      await writeFile(join(dir, 'event.bin'), stored.data);
      await promisify(execFile)('flatc', ['--json', '--strict-json', '--defaults-json', '--raw-binary', '-o', dir, SCHEMA, '--', join(dir, 'event.bin')]);
      const json = JSON.parse(await readFile(join(dir, 'event.json'), 'utf8')) as Record<string, unknown>;
      expect(json).toMatchObject({
        schema_version: 1,
        pair_id: quote['pairId'],
        input_mint: request.inputMint,
        output_mint: request.outputMint,
        input_amount: Number(request.amount),
      });
      // The quiet chain keeps both outputs; the event carries them (flatc prints u64 as numbers).
      expect(BigInt(json['local_output_amount'] as number)).toBe(local);
      expect(BigInt(json['external_output_amount'] as number)).toBe(ext);
      expect(BigInt(json['estimated_profit'] as number)).toBe(ext - local);
      // Hops are the best quote's route.
      expect((json['hops'] as { pool: string }[]).map((h) => h.pool)).toEqual((quote['route'] as { pool: string }[]).map((h) => h.pool));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exports traces by OTLP across aggregator → upstream calls, the upstreams\' spans parented by the aggregator\'s', async () => {
    await call(client, 'GetAggregatedQuote', pair());
    // Stream spans end with their streams: close everything, which also flushes the exporter.
    await closeAll();
    const spans = receiver.spans;
    const unary = spans.find((s) => s.name === 'tidepool.v1.QuoteAggregatorService/GetAggregatedQuote');
    expect(unary?.kind).toBe('SERVER');
    const clients = spans.filter((s) => s.name === 'tidepool.v1.QuoteService/StreamBatchQuotes' && s.kind === 'CLIENT');
    const servers = spans.filter((s) => s.name === 'tidepool.v1.QuoteService/StreamBatchQuotes' && s.kind === 'SERVER');
    expect(clients.length).toBeGreaterThanOrEqual(2);
    // Both upstreams (local and external) answered calls that carry the aggregator's trace context.
    const linked = servers.filter((server) => clients.some((c) => c.spanId === server.parentSpanId && c.traceId === server.traceId));
    expect(linked.length).toBeGreaterThanOrEqual(2);
    const sources = new Set(clients.filter((c) => linked.some((s) => s.parentSpanId === c.spanId)).map((c) => c.attributes['tidepool.upstream.source']));
    expect(sources).toEqual(new Set(['QUOTE_SOURCE_LOCAL', 'QUOTE_SOURCE_EXTERNAL']));
    expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(['tidepool-stack-test']));
  });
});
