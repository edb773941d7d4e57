/**
 * `quote-streams`: GET /quote latency of a normal client while another client runs the heaviest
 * StreamBatchQuotes load the stream limits allow (issue 11 item 1), against the same client's
 * latency with no stream open, both measured in the same run.
 *
 * Processes (none shares an event loop with another): the quote service (bench/servers/
 * quote-server.ts with `--streams`: 1,000 cached pools, the rate limiter on, QuoteStreamServer on
 * the same engine with the default limits: 16 streams per client, 1,000 pairs per stream, 100 ms
 * least interval, shedding at 20 ms event-loop delay or 85% utilization); the heavy client
 * (bench/servers/stream-client.ts) asking for one stream more than allowed, each of 1,000 distinct
 * pairs at 100 ms: 160,000 quotes a second requested; the normal client, bench/loadgen/openloop.c
 * at 1,000 req/s (open loop, latency counted from each request's due time, so stalls are not hidden),
 * its latencies in the HDR histogram of bench/latency.ts.
 *
 * Rounds interleave: no streams, streams, no streams, streams, ...; the heavy client is started
 * afresh (and its first quotes awaited) before each loaded round. Reported: the p50 and p99 under
 * load (HDR histogram, bench/latency.ts), each beside the same client's figure with no stream open
 * in the same run and the ratio; each round's own p99 and 1-min load average (other processes on
 * the box move the figures: compare with the same run's baseline); the quotes a second the streams
 * asked for and got (the client's quote budget, stream.maxQuotesPerSecondPerClient, bounds it);
 * the server's CPU share in loaded and idle rounds; pushes shed and coalesced; the refusal of the
 * stream over the limit; the load generator.
 *
 * Run alone: `npm run bench -- quote-streams` (about a minute). Needs gcc (the suite says so).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { p99Figure, type Figure, type Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';
import { DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT } from '../../engine/quote-grpc/stream-budget.js';
import { buildOpenloop, cpuSecondsOf, requireTools, runOpenloop, settle, startServer, stopServer, type ServerProcess } from '../load-tools.js';

const RATE = 1_000;
const GOAL_P99_US = 5_000;
const STREAMS_ALLOWED = 16;
const PAIRS = 1_000;
const INTERVAL_MS = 100;
const CONNECTIONS = 8;
const SECONDS = 5;
const WARMUP_SECONDS = 1;
const ROUNDS = 3;
const GENERATOR = 'bench/loadgen/openloop.c (open loop, latency from each request\'s due time)';

type QuoteServer = ServerProcess<{ grpcPort?: number; pools?: number }>;

/** The next JSON line `child` prints on stdout after its ready line. */
function nextLine(server: ServerProcess<unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${server.name}: no report within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      server.child.stdout!.off('data', onData);
      resolve(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
    };
    server.child.stdout!.on('data', onData);
  });
}

const us = (n: number): string => `${n.toLocaleString('en-US', { maximumFractionDigits: 0 })} µs`;

export const quoteStreamsSuite: Suite = {
  name: 'quote-streams',
  description: `GET /quote p50/p99 at ${RATE} req/s while another client runs ${STREAMS_ALLOWED} streams × ${PAIRS} pairs at ${INTERVAL_MS} ms (the limits' maximum), vs no streams`,
  async run(): Promise<Figure[]> {
    const tools = requireTools('quote-streams');
    const loadBefore = loadavg()[0]!;
    const generator = await buildOpenloop(tools.cc);
    const dir = mkdtempSync(join(tmpdir(), 'tidepool-bench-quote-streams-'));
    const paths = join(dir, 'paths.txt');
    let quote: QuoteServer | undefined;
    let heavy: ServerProcess | undefined;
    try {
      quote = await startServer('quote', 'quote-server.js', ['--paths', paths, '--rps', '1000000', '--streams'], 120_000);
      const targets = readFileSync(paths, 'utf8').trim().split('\n');
      process.stderr.write(`bench quote-streams: ${String(quote.ready.pools)} pools, ${targets.length} targets, grpc port ${String(quote.ready.grpcPort)}, load generator ${GENERATOR}\n`);
      const latency = { idle: new LatencyRecorder(), loaded: new LatencyRecorder() };
      const lag = { idle: new LatencyRecorder(), loaded: new LatencyRecorder() };
      const cpu = { idle: { seconds: 0, wall: 0 }, loaded: { seconds: 0, wall: 0 } };
      const rounds: string[] = [];
      const streamRates: number[] = [];
      const refusals: string[] = [];
      let shed = 0;
      let coalesced = 0;
      let saturated = 0;
      for (let round = 0; round < 2 * ROUNDS; round++) {
        const loaded = round % 2 === 1;
        if (loaded) {
          heavy = await startServer(
            'streams',
            'stream-client.js',
            ['--grpc-port', String(quote.ready.grpcPort), '--paths', paths, '--streams', String(STREAMS_ALLOWED + 1), '--pairs', String(PAIRS), '--interval', String(INTERVAL_MS)],
            120_000,
          );
          const ready = heavy.ready as unknown as { streams: number; refused: string[]; readyMs: number };
          refusals.push(...ready.refused);
          process.stderr.write(`bench quote-streams: ${ready.streams} streams delivering after ${ready.readyMs} ms, refused: ${JSON.stringify(ready.refused)}\n`);
          heavy.child.stdin!.write('x'); // count the streams' quotes from now
        }
        const name = loaded ? 'loaded' : 'idle';
        const own = new LatencyRecorder();
        const cpuBefore = cpuSecondsOf(quote.ready.pid);
        const wallBefore = performance.now();
        const summary = await runOpenloop(
          generator,
          { port: quote.ready.port, rate: RATE, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS, paths, out: join(dir, `${name}-${round}.bin`) },
          own,
          lag[name],
        );
        cpu[name].seconds += cpuSecondsOf(quote.ready.pid) - cpuBefore;
        cpu[name].wall += (performance.now() - wallBefore) / 1000;
        latency[name].add(own);
        let extra = '';
        if (loaded && heavy !== undefined) {
          const figures = nextLine(quote, 5_000);
          quote.child.kill('SIGUSR2');
          const f = (await figures) as { shedPushes: number; coalescedPushes: number; saturatedTurns: number };
          shed += f.shedPushes;
          coalesced += f.coalescedPushes;
          saturated += f.saturatedTurns;
          const report = nextLine(heavy, 10_000);
          const stopped = stopServer(heavy);
          const r = (await report) as { quotesPerSecond: number; errors: number };
          await stopped;
          heavy = undefined;
          streamRates.push(r.quotesPerSecond);
          extra = `, streams got ${r.quotesPerSecond.toLocaleString('en-US')} quotes/s (${r.errors} error quotes), shed ${f.shedPushes}, coalesced ${f.coalescedPushes}`;
        }
        const line = `${name} round ${round + 1}: p50 ${us(own.percentileUs(50))} p99 ${us(own.percentileUs(99))} (${summary.recorded} requests), load ${loadavg()[0]!.toFixed(2)}${extra}`;
        rounds.push(line);
        process.stderr.write(`bench quote-streams: ${line}\n`);
        await settle();
      }
      const l = latency.loaded.summary();
      const i = latency.idle.summary();
      const machine = `1-min load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after, on ${cpus().length} CPUs`;
      const refusedOk = refusals.length === ROUNDS && refusals.every((r) => r.startsWith('8 too many streams'));
      const share = (c: { seconds: number; wall: number }): string => `${((100 * c.seconds) / c.wall).toFixed(0)}%`;
      const setup = `load generator ${GENERATOR}, ${RATE.toLocaleString('en-US')} req/s, ${CONNECTIONS} connections, ${ROUNDS}×${SECONDS} s per side interleaved; latencies in HDR histograms (bench/latency.ts)`;
      const note =
        `${machine}; ${setup}; every answer 200; ` +
        `no streams p50 ${us(i.p50Us)} p99 ${us(i.p99Us)} p99.9 ${us(i.p999Us)}; loaded max ${us(l.maxUs)}; ` +
        `generator lateness p99: idle ${us(lag.idle.percentileUs(99))}, loaded ${us(lag.loaded.percentileUs(99))}; ` +
        `requested ${(STREAMS_ALLOWED * PAIRS * (1000 / INTERVAL_MS)).toLocaleString('en-US')} quotes/s, client budget ${DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT.toLocaleString('en-US')}/s (stream.maxQuotesPerSecondPerClient), ` +
        `the streams got ${streamRates.map((r) => r.toLocaleString('en-US')).join(' / ')} quotes/s; ` +
        `server CPU ${share(cpu.loaded)} loaded, ${share(cpu.idle)} idle; ` +
        `interval pushes shed ${shed.toLocaleString('en-US')}, coalesced ${coalesced.toLocaleString('en-US')}; stream turns out of time ${saturated.toLocaleString('en-US')}; ` +
        `the ${STREAMS_ALLOWED + 1}th stream: ${refusedOk ? 'refused RESOURCE_EXHAUSTED (stream.maxStreamsPerClient) each round' : `NOT refused as expected: ${JSON.stringify(refusals)}`}; ` +
        `rounds: ${rounds.join('; ')}`;
      process.stderr.write(
        `bench quote-streams: GET /quote beside the streams p50 ${us(l.p50Us)} p99 ${us(l.p99Us)}; no streams (same run) p50 ${us(i.p50Us)} p99 ${us(i.p99Us)}; ` +
          `ratio p50 ${(l.p50Us / i.p50Us).toFixed(2)}×, p99 ${(l.p99Us / i.p99Us).toFixed(2)}×; ${setup}\n`,
      );
      const beside = `at ${RATE.toLocaleString('en-US')} req/s beside ${STREAMS_ALLOWED} streams × ${PAIRS.toLocaleString('en-US')} pairs at ${INTERVAL_MS} ms`;
      return [
        p99Figure({
          name: `GET /quote p99 ${beside}`,
          unit: 'µs',
          ours: l,
          baseline: { name: 'same client, no stream open, same run', p99Us: i.p99Us },
          goal: `p99 < ${GOAL_P99_US.toLocaleString('en-US')} µs under the heaviest stream load the limits allow`,
          goalUs: GOAL_P99_US,
          note,
        }),
        {
          name: `GET /quote p50 ${beside}`,
          unit: 'µs',
          value: l.p50Us,
          higherIsBetter: false,
          baseline: { name: 'same client, no stream open, same run', value: i.p50Us },
          p50Us: l.p50Us,
          p99Us: l.p99Us,
          p999Us: l.p999Us,
          note: setup,
        },
      ];
    } finally {
      if (heavy !== undefined) await stopServer(heavy);
      if (quote !== undefined) await stopServer(quote);
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
