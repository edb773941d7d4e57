/**
 * The server side of the `aggregator` benchmark, on its own thread so that the clients measuring it
 * (the main thread) do not share its event loop.
 *
 *   mode 'ours': the quote aggregator (createAggregator, scoring on, no bus) between two upstream
 *                QuoteService servers on loopback that answer every pair at once and, on 'pump',
 *                push a new quote for every pair as fast as their streams drain.
 *   mode 'bare': a bare grpc-js QuoteAggregatorService from the same proto: GetAggregatedQuote
 *                returns a fixed AggregatedQuote, StreamAggregatedQuotes writes that message to
 *                every open stream as fast as the streams drain (one protobuf encode per write, as
 *                a plain grpc-js server does).
 *
 * Messages: main → worker {cmd: 'pump'} | {cmd: 'stop'}; worker → main {port} once bound,
 * {stopped: true, upstreamQuotes} after 'stop'.
 */
import { parentPort, workerData } from 'node:worker_threads';

import * as grpc from '@grpc/grpc-js';

import { defaultAggregatorConfig } from '../../engine/aggregator/aggregator-config.js';
import { createAggregator } from '../../engine/aggregator/aggregator.js';
import { disabledRoutePublisher } from '../../engine/aggregator/disabled-publisher.js';
import { FakeUpstream, makeQuote, silentLogger } from '../../engine/aggregator/testing.js';
import type { WirePairAmount } from '../../engine/quote/quote-wire.js';
import { loadTidepoolProto } from '../../engine/proto.js';

export interface AggregatorWorkerInput {
  mode: 'ours' | 'bare';
  /** For 'bare': the AggregatedQuote to answer with (as loadTidepoolProto decodes it). */
  sample?: Record<string, unknown>;
  /**
   * For 'ours': the stream limits the aggregator is configured with (streamMaxStreamsPerClient and
   * streamMaxStreams, AGGREGATOR_STREAM_MAX_STREAMS_PER_CLIENT / AGGREGATOR_STREAM_MAX_STREAMS);
   * default the aggregator's own defaults.
   */
  streamLimits?: { perClient: number; total: number };
}

export type AggregatorWorkerCommand = { cmd: 'pump' } | { cmd: 'stop' };

const input = workerData as AggregatorWorkerInput;
const port = parentPort!;

/** Writes to every open call of `calls` until stopped, waiting for 'drain' when a write is refused. */
function pumpCalls(
  calls: () => Iterable<grpc.ServerWritableStream<never, unknown>>,
  next: (call: grpc.ServerWritableStream<never, unknown>) => unknown[],
): { stop(): void; written(): number } {
  let stopped = false;
  let written = 0;
  const pumpOne = (call: grpc.ServerWritableStream<never, unknown>): void => {
    const loop = (): void => {
      while (!stopped && !call.cancelled) {
        let ok = true;
        for (const message of next(call)) {
          written++;
          ok = call.write(message) && ok;
        }
        if (!ok) {
          call.once('drain', loop);
          return;
        }
        // Yield to the event loop between rounds so acks, pings and the other calls get served.
        setImmediate(loop);
        return;
      }
    };
    loop();
  };
  for (const call of calls()) pumpOne(call);
  return {
    stop() {
      stopped = true;
    },
    written: () => written,
  };
}

async function runOurs(): Promise<void> {
  const local = new FakeUpstream();
  const external = new FakeUpstream();
  // Each upstream quote's output moves a little so that no update is a duplicate; external pays
  // slightly more, so both sources are present and the best switches sides.
  const outputs = new Map<string, bigint>();
  const quoteOf = (pair: WirePairAmount, bump: bigint, provider: 'local' | 'external'): ReturnType<typeof makeQuote> => {
    const key = `${provider}:${pair.inputMint}:${pair.outputMint}:${pair.amount}`;
    const out = (outputs.get(key) ?? 150_000_000n) + bump;
    outputs.set(key, out);
    return makeQuote(pair, out, { poolAgeSeconds: 7200, priceImpact: 0.001, ...(provider === 'external' ? { providerUptime: 0.99 } : {}) });
  };
  local.respond = (pair) => quoteOf(pair, 0n, 'local');
  external.respond = (pair) => quoteOf(pair, 1n, 'external');
  await local.start();
  await external.start();
  const config = defaultAggregatorConfig({
    grpcPort: 0,
    httpPort: 0,
    localQuoteAddr: local.address,
    externalQuoteAddr: external.address,
    busEnabled: false,
    ...(input.streamLimits === undefined ? {} : { streamMaxStreamsPerClient: input.streamLimits.perClient, streamMaxStreams: input.streamLimits.total }),
  });
  const aggregator = createAggregator(config, { logger: silentLogger(), publisher: disabledRoutePublisher() });
  const { grpcPort } = await aggregator.start();
  // As real upstreams re-send at the update interval, so held quotes stay fresh between pumps.
  const refresh = setInterval(() => {
    for (const [i, upstream] of [local, external].entries()) {
      for (const call of upstream.calls) {
        for (const p of call.request.pairs) call.write(quoteOf(p, 1n, i === 0 ? 'local' : 'external'));
      }
    }
  }, 500);
  let pumps: { stop(): void; written(): number }[] = [];
  port.on('message', (m: AggregatorWorkerCommand) => {
    if (m.cmd === 'pump') {
      pumps = [local, external].map((upstream, i) =>
        pumpCalls(
          () => upstream.calls as Iterable<grpc.ServerWritableStream<never, unknown>>,
          (call) => (call.request as unknown as { pairs: WirePairAmount[] }).pairs.map((p) => quoteOf(p, 1n, i === 0 ? 'local' : 'external')),
        ),
      );
    } else {
      clearInterval(refresh);
      for (const p of pumps) p.stop();
      const upstreamQuotes = pumps.reduce((n, p) => n + p.written(), 0);
      void aggregator.close().then(() => {
        local.close();
        external.close();
        port.postMessage({ stopped: true, upstreamQuotes });
      });
    }
  });
  port.postMessage({ port: grpcPort });
}

async function runBare(): Promise<void> {
  const sample = input.sample!;
  const server = new grpc.Server();
  const streams = new Set<grpc.ServerWritableStream<never, unknown>>();
  const handlers: grpc.UntypedServiceImplementation = {
    GetAggregatedQuote: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => callback(null, sample),
    StreamAggregatedQuotes: (call: grpc.ServerWritableStream<never, unknown>) => {
      streams.add(call);
      call.on('cancelled', () => streams.delete(call));
      call.write(sample);
    },
    GetConfidenceBreakdown: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback({ code: grpc.status.UNIMPLEMENTED }),
    Health: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback({ code: grpc.status.UNIMPLEMENTED }),
  } as unknown as grpc.UntypedServiceImplementation;
  server.addService(loadTidepoolProto().QuoteAggregatorService.service, handlers);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  let pump: { stop(): void; written(): number } | undefined;
  port.on('message', (m: AggregatorWorkerCommand) => {
    if (m.cmd === 'pump') pump = pumpCalls(() => streams, () => [sample]);
    else {
      pump?.stop();
      server.forceShutdown();
      port.postMessage({ stopped: true, upstreamQuotes: 0 });
    }
  });
  port.postMessage({ port: bound });
}

(input.mode === 'ours' ? runOurs() : runBare()).catch((err: unknown) => {
  port.postMessage({ error: (err as Error).stack ?? String(err) });
});
