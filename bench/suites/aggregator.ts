/**
 * `aggregator`: the quote aggregator's gRPC API (spec 01) beside a bare grpc-js server of the same
 * proto, in the same run. The servers run on a worker thread (aggregator-worker.ts); the clients
 * run here, on the main thread, so each side has a core of the 2-core box.
 *
 * Unary: GetAggregatedQuote, one call at a time (closed loop, sequential), every round trip in an
 * HDR histogram; the measuring client sends pre-encoded requests and does not decode the answers
 * (both servers alike), so its own allocations stay out of the tail. Ours answers from the quotes its two upstream streams hold (local and external,
 * both present, scored, best picked, decision made); the bare server returns a fixed
 * AggregatedQuote of the same size (the first answer of ours). Goal: p99 < 2 ms.
 *
 * Streams: 100 concurrent StreamAggregatedQuotes streams on 10 client connections, each asking for
 * the same 10 pairs. All come from one address, one client to the aggregator, whose defaults admit
 * 16 streams per client and 64 in all (RESOURCE_EXHAUSTED past them): the suite raises both to 100
 * through the aggregator's configuration (streamMaxStreamsPerClient / streamMaxStreams, as an
 * operator sets AGGREGATOR_STREAM_MAX_STREAMS_PER_CLIENT=100 AGGREGATOR_STREAM_MAX_STREAMS=100) and
 * says so in its output and note. A stream that errors or sends nothing within STREAM_READY_MS fails
 * the suite with the status it got. Ours: both upstreams push a new quote for every pair as fast as their streams
 * drain; each one is aggregated, encoded once and written to all 100 streams. Bare: the server
 * writes the fixed message to all 100 streams as fast as they drain, one encode per write, as a
 * plain grpc-js server does. Counted: messages received by the clients per second, in total.
 * The clients do not decode (identity deserializer) on either side, so the figure is the server's.
 * Goal: ≥ 50,000 updates/s.
 */
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';

import * as grpc from '@grpc/grpc-js';

import { encode as encodeBase58 } from '../../engine/chain/base58.js';
import { loadTidepoolProto } from '../../engine/proto.js';
import { DEFAULT_STREAM_LIMITS } from '../../engine/quote-grpc/stream-limits.js';
import type { Figure, Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';
import type { AggregatorWorkerCommand, AggregatorWorkerInput } from './aggregator-worker.js';

const UNARY_CALLS = Number(process.env.BENCH_AGGREGATOR_CALLS ?? 20_000);
const UNARY_WARMUP = 2_000;
const STREAMS = 100;
const CONNECTIONS = 10;
const PAIRS = 10;
const STREAM_SECONDS = Number(process.env.BENCH_AGGREGATOR_STREAM_SECONDS ?? 5);
/** How long every stream has to deliver its first update. */
const STREAM_READY_MS = 30_000;
const SERVICE = '/tidepool.v1.QuoteAggregatorService';
/** The aggregator's stream limits for this suite: its 100 streams come from one client. */
const STREAM_LIMITS = { perClient: STREAMS, total: STREAMS };
const LIMITS_NOTE = `stream limits raised for the bench client through the aggregator's configuration: streamMaxStreamsPerClient ${STREAM_LIMITS.perClient}, streamMaxStreams ${STREAM_LIMITS.total} (AGGREGATOR_STREAM_MAX_STREAMS_PER_CLIENT, AGGREGATOR_STREAM_MAX_STREAMS; defaults ${DEFAULT_STREAM_LIMITS.maxStreamsPerClient} and ${DEFAULT_STREAM_LIMITS.maxStreams})`;

interface ServerThread {
  port: number;
  send(command: AggregatorWorkerCommand): void;
  stop(): Promise<void>;
}

function startServer(input: AggregatorWorkerInput): Promise<ServerThread> {
  const worker = new Worker(new URL('./aggregator-worker.js', import.meta.url), { workerData: input });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { port?: number; error?: string }) => {
      if (m.error !== undefined) return reject(new Error(m.error));
      resolve({
        port: m.port!,
        send: (command) => worker.postMessage(command),
        stop: () =>
          new Promise<void>((done) => {
            worker.once('message', () => void worker.terminate().then(() => done()));
            worker.postMessage({ cmd: 'stop' } satisfies AggregatorWorkerCommand);
          }),
      });
    });
  });
}

const mint = (): string => encodeBase58(randomBytes(32));
const PAIR_LIST = Array.from({ length: PAIRS }, (_, i) => ({ inputMint: mint(), outputMint: mint(), amount: String(1_000_000_000 + i) }));

type Client = grpc.Client & { GetAggregatedQuote: (req: object, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void };

function unaryClient(port: number): Client {
  const Ctor = loadTidepoolProto().QuoteAggregatorService;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Client;
}

function call(client: Client, request: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => client.GetAggregatedQuote(request, (err, res) => (err ? reject(err) : resolve(res))));
}

/**
 * Warm-up through a decoding client (its last answer is the sample the bare server returns), then
 * UNARY_CALLS measured round trips through a raw client: request bytes encoded once, answers not
 * decoded, so the client's own garbage does not show in the server's tail.
 */
async function measureUnary(port: number): Promise<{ latency: LatencyRecorder; sample: Record<string, unknown>; callsPerSecond: number }> {
  const client = unaryClient(port);
  const raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const latency = new LatencyRecorder();
  try {
    const request = (i: number): object => ({ ...PAIR_LIST[i % PAIRS]!, slippageBps: 50 });
    let sample: Record<string, unknown> = {};
    for (let i = 0; i < UNARY_WARMUP; i++) sample = await call(client, request(i));
    const serialize = loadTidepoolProto().QuoteAggregatorService.service['GetAggregatedQuote']!.requestSerialize as (value: object) => Buffer;
    const encoded = PAIR_LIST.map((_, i) => serialize(request(i)));
    const rawCall = (bytes: Buffer): Promise<void> =>
      new Promise((resolve, reject) =>
        raw.makeUnaryRequest(`${SERVICE}/GetAggregatedQuote`, (b: Buffer) => b, (b: Buffer) => b, bytes, (err) => (err ? reject(err) : resolve())),
      );
    for (let i = 0; i < UNARY_WARMUP; i++) await rawCall(encoded[i % PAIRS]!);
    const started = process.hrtime.bigint();
    for (let i = 0; i < UNARY_CALLS; i++) {
      const t0 = process.hrtime.bigint();
      await rawCall(encoded[i % PAIRS]!);
      latency.recordNs(process.hrtime.bigint() - t0);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { latency, sample, callsPerSecond: UNARY_CALLS / seconds };
  } finally {
    client.close();
    raw.close();
  }
}

/**
 * Opens the streams, waits for a first update on each, then counts for STREAM_SECONDS. A stream
 * that ends with an error (a refusal, a reset) or sends nothing within STREAM_READY_MS fails the
 * measurement with what it got; only the CANCELLED of the suite's own cancel at the end is expected.
 */
async function measureStreams(server: ServerThread): Promise<{ perSecond: number; received: number }> {
  const definition = loadTidepoolProto().QuoteAggregatorService.service['StreamAggregatedQuotes']!;
  const clients = Array.from(
    { length: CONNECTIONS },
    () => new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
  );
  let received = 0;
  let readyStreams = 0;
  let cancelling = false;
  const failures: string[] = [];
  const calls: grpc.ClientReadableStream<Buffer>[] = [];
  const ready: Promise<void>[] = [];
  const request = { pairs: PAIR_LIST, slippageBps: 50, updateIntervalMs: 1000 };
  try {
    for (let i = 0; i < STREAMS; i++) {
      const stream = clients[i % CONNECTIONS]!.makeServerStreamRequest(
        `${SERVICE}/StreamAggregatedQuotes`,
        definition.requestSerialize as (value: object) => Buffer,
        (bytes: Buffer) => bytes,
        request,
      );
      calls.push(stream);
      ready.push(
        new Promise<void>((resolve, reject) => {
          let first = true;
          stream.on('data', () => {
            received++;
            if (first) {
              first = false;
              readyStreams++;
              resolve();
            }
          });
          stream.on('error', (err: grpc.ServiceError) => {
            if (cancelling && err.code === grpc.status.CANCELLED) return;
            const what = `stream ${i + 1}: ${grpc.status[err.code] ?? err.code} ${err.details}`;
            failures.push(what);
            reject(new Error(what));
          });
          stream.on('end', () => {
            if (!cancelling) reject(new Error(`stream ${i + 1} ended by the server`));
          });
        }),
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${STREAMS - readyStreams} of ${STREAMS} streams sent no update within ${STREAM_READY_MS} ms`)), STREAM_READY_MS);
    });
    try {
      await Promise.race([Promise.all(ready), timeout]);
    } finally {
      clearTimeout(timer);
    }
    server.send({ cmd: 'pump' });
    await new Promise((r) => setTimeout(r, 500));
    const from = received;
    const t0 = process.hrtime.bigint();
    await new Promise((r) => setTimeout(r, STREAM_SECONDS * 1000));
    const count = received - from;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (failures.length > 0) throw new Error(`${failures.length} of ${STREAMS} streams failed during the measurement: ${failures.slice(0, 3).join('; ')}`);
    return { perSecond: count / seconds, received: count };
  } catch (err) {
    const also = failures.length > 1 ? ` (${failures.length} streams failed in all; first: ${failures.slice(0, 3).join('; ')})` : '';
    throw new Error(`StreamAggregatedQuotes: ${(err as Error).message}${also}`, { cause: err });
  } finally {
    cancelling = true;
    for (const s of calls) s.cancel();
    for (const c of clients) c.close();
  }
}

export const aggregatorSuite: Suite = {
  name: 'aggregator',
  description: 'GetAggregatedQuote p50/p99 and StreamAggregatedQuotes updates/s over 100 streams, beside a bare grpc-js server',
  async run(): Promise<Figure[]> {
    const ours = await startServer({ mode: 'ours', streamLimits: STREAM_LIMITS });
    process.stderr.write(`bench: aggregator: ${LIMITS_NOTE}\n`);
    let oursUnary;
    let bare: ServerThread | undefined;
    try {
      const progress = (what: string): boolean => process.stderr.write(`bench: aggregator: ${what}\n`);
      progress('GetAggregatedQuote, ours');
      oursUnary = await measureUnary(ours.port);
      progress('GetAggregatedQuote, bare grpc-js');
      bare = await startServer({ mode: 'bare', sample: oursUnary.sample });
      const bareUnary = await measureUnary(bare.port);
      progress(`StreamAggregatedQuotes, ours, ${STREAM_SECONDS} s`);
      const oursStreams = await measureStreams(ours);
      progress(`StreamAggregatedQuotes, bare grpc-js, ${STREAM_SECONDS} s`);
      const bareStreams = await measureStreams(bare);
      const o = oursUnary.latency.summary();
      const b = bareUnary.latency.summary();
      return [
        {
          name: 'GetAggregatedQuote round trip, one call at a time',
          unit: 'µs p99',
          value: o.p99Us,
          higherIsBetter: false,
          baseline: { name: `bare grpc-js unary (p50 ${b.p50Us.toFixed(0)} µs, p99 ${b.p99Us.toFixed(0)} µs)`, value: b.p99Us },
          p50Us: o.p50Us,
          p99Us: o.p99Us,
          p999Us: o.p999Us,
          goal: 'p99 < 2 ms',
          goalMet: o.p99Us < 2000,
          note: `${UNARY_CALLS} calls; ours ${oursUnary.callsPerSecond.toFixed(0)} calls/s, bare ${bareUnary.callsPerSecond.toFixed(0)} calls/s; quote source class ${String(oursUnary.sample['sourceClass'])}`,
        },
        {
          name: `StreamAggregatedQuotes, ${STREAMS} streams × ${PAIRS} pairs`,
          unit: 'updates/s',
          value: oursStreams.perSecond,
          higherIsBetter: true,
          baseline: { name: 'bare grpc-js stream writing a fixed message', value: bareStreams.perSecond },
          goal: '≥ 50,000 updates/s',
          goalMet: oursStreams.perSecond >= 50_000,
          note: `${oursStreams.received} updates in ${STREAM_SECONDS} s (bare ${bareStreams.received}); ${LIMITS_NOTE}`,
        },
      ];
    } finally {
      await Promise.allSettled([ours.stop(), bare?.stop()]);
    }
  },
};
