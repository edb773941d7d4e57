/**
 * `quote`: cache-hit GET /quote over HTTP on loopback, beside a bare uWebSockets.js server that
 * answers every request with the same bytes (a real /quote response), both measured in the same run.
 *
 * Processes: the quote service (bench/servers/quote-server.ts: a PoolCache of 1,000 pools from a
 * manual simulator, QuoteHttpServer with its rate limiter on) and the bare server
 * (bench/servers/bare-server.ts) each run alone in a child process started the same way, so neither
 * shares an event loop with a load generator; the generators are native programs.
 *
 * Tools, each for what it measures right:
 * - max throughput: wrk (Debian `wrk`), closed loop, the same threads and connections for both
 *   servers, the same Lua request rotation over the cache-hit targets (the bare server ignores
 *   the query), interleaved rounds, median reported. Closed loop is what a max-throughput figure
 *   wants: every connection always has a request outstanding.
 * - latency at a fixed 10,000 req/s: bench/loadgen/openloop.c, compiled here with gcc. It is open
 *   loop (requests leave on a fixed schedule, pipelined when every connection is busy) and counts
 *   each latency from the request's due time, so stalls are not hidden (coordinated omission).
 *   The packaged tools do not: wrk is closed loop; h2load --rps keeps a schedule but times each
 *   request from its actual submission, one at a time per HTTP/1.1 connection; hey -q is closed
 *   loop per worker. The generator's own lateness (write time - due time) is reported beside the
 *   figure: it is counted in the latency, so it bounds how much of the figure the generator is.
 *   Its per-request latencies go into the HDR histogram of bench/latency.ts.
 * - memory: VmRSS and VmHWM from /proc/<pid>/status of each server after the load (both servers
 *   reset VmHWM once ready, so the fill's peak is not counted; both idle 6 s and collect
 *   before their ready line, so V8 gives back the young generation the fill grew, which it
 *   otherwise does or does not do before the load, bench/servers/common.ts: the best case of a
 *   start, as the figure's note says; a service loaded from the moment its cache is filled may keep
 *   up to ~33 MB more). The quote server says on stderr where its memory is when the busy load
 *   stops, a moment after the figure is read.
 *
 * Two more open-loop figures, each beside the bare server at the same rate in the same run:
 * - two-hop routes: GET /quote of pairs with no pool of their own, answered through SOL or USDC
 *   (every target checked to be a two-hop cache answer), at 5,000 req/s;
 * - a busy cache: GET /quote at 10,000 req/s while the quote server stores 2,000 pool updates per
 *   second (state and context at a new slot, round-robin over its pools: each one voids the
 *   memoized quotes of its pair, as a scanner's updates do), switched on and off by SIGUSR2.
 *
 * Run alone: `npm run bench -- quote` (about two minutes). Needs the Debian packages wrk and gcc; the
 * suite says so and fails when either is missing.
 *
 * Quote API v1 (issue 12), in the same run against the same quote server process:
 * - `GET /swap/v1/quote` (the public swap API path) throughput: the same wrk rounds over the same
 *   pairs and amounts written as that API's query, interleaved with the /quote rounds; the goal is
 *   at least 0.8× of GET /quote.
 * - `POST /v1/quote/batch` of 100 quotes (100 distinct cache-hit targets) at 100 batches/s, open loop,
 *   latency of the whole batch; baseline: the bare uWS server answering the same batch response
 *   bytes to the same POST. Goal p99 < 5 ms.
 *
 * Every /quote target is checked to be a cache hit before the run; a non-200 answer (a miss, a
 * 429 from the limiter, an error) fails the suite. The rate limiter stays on at 1,000,000 req/s
 * per client, above any offered load here (all generator connections are one client,
 * 127.0.0.1), so its cost is counted and it never refuses.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { p99Figure, type Figure, type Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';
import { buildOpenloop, cpuSecondsOf, median, memoryOf, requireTools, runOpenloop, runWrk, settle, startServer, stopServer, type ServerProcess } from '../load-tools.js';

const RATE = 10_000;
/** Two-hop GET /quote (pairs without a pool of their own, through SOL or USDC): issue 12's rate. */
const TWO_HOP_RATE = 5_000;
/** Pool updates per second into the quote server's cache during the "busy cache" run. */
const UPDATES_PER_SECOND = 2_000;
const GOAL_P99_US = 1_000;
const GOAL_THROUGHPUT_RATIO = 0.5;
const GOAL_RSS_MB = 100;
const RATE_LIMIT_RPS = 1_000_000;
/** Generator lateness p99 above this: the box is too busy for a sub-millisecond p99 to mean much. */
const NOISY_LAG_P99_US = 200;
/** Pools in the quote server's cache: 64 tokens besides SOL and USDC, 250 pools of each of 4 kinds. */
const SIM_TOKENS = 64;
const POOLS_PER_KIND = 250;

const WRK_THREADS = 1;
const WRK_CONNECTIONS = 32;
const WRK_SECONDS = 4;
const WRK_WARMUP_SECONDS = 2;
const WRK_ROUNDS = 3;

const LATENCY_CONNECTIONS = 32;
const LATENCY_SECONDS = 5;
const LATENCY_WARMUP_SECONDS = 1;
const LATENCY_ROUNDS = 2;

const GOAL_SWAP_API_RATIO = 0.8;
const BATCH_SIZE = 100;
const BATCH_RATE = 100;
const GOAL_BATCH_P99_US = 5_000;
const BATCH_CONNECTIONS = 8;
const BATCH_SECONDS = 5;

/** A /quote target (`/quote?input=..&output=..&amount=..`) as the public swap API's quote target. */
function swapApiTarget(target: string): string {
  const q = new URLSearchParams(target.slice(target.indexOf('?') + 1));
  return `/swap/v1/quote?inputMint=${q.get('input')!}&outputMint=${q.get('output')!}&amount=${q.get('amount')!}`;
}

/** The POST /v1/quote/batch body of the first BATCH_SIZE /quote targets. */
function batchBody(targets: readonly string[]): string {
  const requests = targets.slice(0, BATCH_SIZE).map((t) => {
    const q = new URLSearchParams(t.slice(t.indexOf('?') + 1));
    return { inputMint: q.get('input')!, outputMint: q.get('output')!, amount: q.get('amount')! };
  });
  return JSON.stringify({ requests });
}

/** The quote server's memory breakdown at ready (bench/servers/quote-server.ts). */
interface QuoteBreakdown {
  cacheHeapMB: number;
  youngGenerationMB?: number;
  contexts: { tickArrays: number; tickSlots: number; ticksKept: number; binArrays: number; bins: number };
}

type QuoteServerProcess = ServerProcess<{ breakdown?: QuoteBreakdown; pools?: number; pairs?: number }>;

const WRK_SCRIPT = `-- Rotates over the request targets of the file given after --, preformatted once.
local reqs, n, i = {}, 0, 0
init = function(args)
  for line in io.lines(args[1]) do
    if #line > 0 then n = n + 1; reqs[n] = wrk.format("GET", line) end
  end
end
request = function()
  i = i % n + 1
  return reqs[i]
end
`;

function wrk(tool: string, script: string, paths: string, port: number, seconds: number): Promise<{ rps: number; requests: number }> {
  return runWrk(tool, { threads: WRK_THREADS, connections: WRK_CONNECTIONS, seconds, script, url: `http://127.0.0.1:${port}/`, scriptArgs: [paths] });
}

/** The quote server's ready-line memory figures in one line. */
function breakdownText(ready: QuoteServerProcess['ready']): string {
  const m = ready.memory;
  const b = ready.breakdown;
  const parts = [`RSS ${String(m?.rssMB ?? '?')} MB, V8 heap used ${String(m?.heapUsedMB ?? '?')} MB`];
  if (b !== undefined) {
    const c = b.contexts;
    parts.push(
      `of which the filled cache ${b.cacheHeapMB} MB (${c.tickArrays} tick arrays keeping ${c.ticksKept} initialized of ${c.tickSlots} ticks, ` +
        `${c.binArrays} bin arrays of ${c.bins} bins)`,
    );
    if (b.youngGenerationMB !== undefined) parts.push(`young generation ${b.youngGenerationMB} MB after the fill, ${String(m?.youngMB ?? '?')} MB at ready (after an idle collection)`);
  }
  return parts.join(', ');
}

const us = (n: number): string => `${n.toLocaleString('en-US', { maximumFractionDigits: 0 })} µs`;

export const quoteSuite: Suite = {
  name: 'quote',
  description: 'cache-hit GET /quote on loopback (1,000 pools, rate limiter on) vs a bare uWS server: wrk throughput, open-loop latency at 10,000 req/s, RSS; GET /swap/v1/quote throughput vs GET /quote; POST /v1/quote/batch of 100 at 100 batches/s',
  async run(): Promise<Figure[]> {
    const tools = requireTools('quote');
    const loadBefore = loadavg()[0]!;
    const generator = await buildOpenloop(tools.cc);
    const dir = mkdtempSync(join(tmpdir(), 'tidepool-bench-quote-'));
    const paths = join(dir, 'paths.txt');
    const twoHopPaths = join(dir, 'two-hop-paths.txt');
    const script = join(dir, 'rotate.lua');
    const bodyFile = join(dir, 'body.json');
    const swapPaths = join(dir, 'swap-paths.txt');
    const batchPaths = join(dir, 'batch-paths.txt');
    const batchFile = join(dir, 'batch.json');
    const batchAnswerFile = join(dir, 'batch-answer.json');
    writeFileSync(script, WRK_SCRIPT);
    const servers: QuoteServerProcess[] = [];
    try {
      const quote: QuoteServerProcess = await startServer(
        'quote',
        'quote-server.js',
        [
          '--paths',
          paths,
          '--two-hop-paths',
          twoHopPaths,
          '--updates-per-second',
          String(UPDATES_PER_SECOND),
          '--rps',
          String(RATE_LIMIT_RPS),
          '--tokens',
          String(SIM_TOKENS),
          '--pools-per-kind',
          String(POOLS_PER_KIND),
          '--idle-gc',
        ],
        120_000,
      );
      servers.push(quote);
      const targets = readFileSync(paths, 'utf8').trim().split('\n');
      const sample = await fetch(`http://127.0.0.1:${quote.ready.port}${targets[0]}`);
      const body = await sample.text();
      if (sample.status !== 200) throw new Error(`quote server answered ${sample.status} to ${targets[0]}: ${body}`);
      writeFileSync(bodyFile, body);
      const bare: QuoteServerProcess = await startServer('bare', 'bare-server.js', ['--body', bodyFile, '--idle-gc'], 30_000);
      servers.push(bare);

      // Quote API v1 targets: every swap API target and the batch answer checked before the run.
      writeFileSync(swapPaths, `${targets.map(swapApiTarget).join('\n')}\n`);
      const swapSample = await fetch(`http://127.0.0.1:${quote.ready.port}${swapApiTarget(targets[0]!)}`);
      if (swapSample.status !== 200) throw new Error(`quote server answered ${swapSample.status} to GET /swap/v1/quote: ${await swapSample.text()}`);
      if (targets.length < BATCH_SIZE) throw new Error(`only ${targets.length} request targets, a batch needs ${BATCH_SIZE}`);
      const batch = batchBody(targets);
      writeFileSync(batchFile, batch);
      writeFileSync(batchPaths, '/v1/quote/batch\n');
      const batchSample = await fetch(`http://127.0.0.1:${quote.ready.port}/v1/quote/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch });
      const batchAnswer = await batchSample.text();
      const answered = batchSample.status === 200 ? (JSON.parse(batchAnswer) as { results: { status: number }[] }).results : [];
      if (answered.length !== BATCH_SIZE || answered.some((r) => r.status !== 200)) throw new Error(`POST /v1/quote/batch did not answer every quote: ${batchAnswer.slice(0, 500)}`);
      writeFileSync(batchAnswerFile, batchAnswer);
      const bareBatch: QuoteServerProcess = await startServer('bare-batch', 'bare-server.js', ['--body', batchAnswerFile], 30_000);
      servers.push(bareBatch);
      process.stderr.write(
        `bench quote: ${String(quote.ready.pools)} pools, ${String(quote.ready.pairs)} pairs, ${targets.length} request targets, ` +
          `body ${Buffer.byteLength(body)} bytes; quote pid ${quote.ready.pid} port ${quote.ready.port}, bare pid ${bare.ready.pid} port ${bare.ready.port}\n` +
          `bench quote: memory at ready: ${breakdownText(quote.ready)}\n`,
      );

      // Warm up both (JIT, connection buffers), then interleaved wrk rounds.
      for (const s of [bare, quote]) await wrk(tools.wrk, script, paths, s.ready.port, WRK_WARMUP_SECONDS);
      await wrk(tools.wrk, script, swapPaths, quote.ready.port, WRK_WARMUP_SECONDS);
      const rps: Record<string, number[]> = { bare: [], quote: [], swap: [] };
      // CPU of the quote server per request, /quote rounds against swap API rounds (same process).
      const cpu: Record<string, { seconds: number; requests: number }> = { bare: { seconds: 0, requests: 0 }, quote: { seconds: 0, requests: 0 }, swap: { seconds: 0, requests: 0 } };
      // The swap API rounds run against the quote server, on its own targets: [name, port, targets].
      const runs: [string, number, string][] = [
        ['bare', bare.ready.port, paths],
        ['quote', quote.ready.port, paths],
        ['swap', quote.ready.port, swapPaths],
      ];
      for (let round = 0; round < WRK_ROUNDS; round++) {
        for (const [name, port, targetsFile] of round % 2 === 0 ? runs : [...runs].reverse()) {
          await settle();
          const pid = name === 'bare' ? bare.ready.pid : quote.ready.pid;
          const cpuBefore = cpuSecondsOf(pid);
          const r = await wrk(tools.wrk, script, targetsFile, port, WRK_SECONDS);
          cpu[name]!.seconds += cpuSecondsOf(pid) - cpuBefore;
          cpu[name]!.requests += r.requests;
          rps[name]!.push(r.rps);
          process.stderr.write(`bench quote: wrk ${name} round ${round + 1}: ${Math.round(r.rps).toLocaleString('en-US')} req/s\n`);
        }
      }

      // Open-loop latency at RATE, interleaved rounds into one histogram per server.
      const latency = { bare: new LatencyRecorder(), quote: new LatencyRecorder() };
      const lag = { bare: new LatencyRecorder(), quote: new LatencyRecorder() };
      const pipelined = { bare: 0, quote: 0 };
      const incomplete = { bare: 0, quote: 0 };
      const maxInFlight = { bare: 0, quote: 0 };
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        for (const s of round % 2 === 0 ? [bare, quote] : [quote, bare]) {
          const name = s.name as 'bare' | 'quote';
          const summary = await runOpenloop(
            generator,
            { port: s.ready.port, rate: RATE, seconds: LATENCY_SECONDS, warmupSeconds: LATENCY_WARMUP_SECONDS, connections: LATENCY_CONNECTIONS, paths, out: join(dir, `${name}-${round}.bin`) },
            latency[name],
            lag[name],
          );
          await settle();
          pipelined[name] += summary.pipelined;
          incomplete[name] += summary.incomplete;
          maxInFlight[name] = Math.max(maxInFlight[name], summary.maxInFlight);
          process.stderr.write(
            `bench quote: open loop ${name} round ${round + 1}: ${summary.recorded} recorded, p99 so far ${us(latency[name].percentileUs(99))}\n`,
          );
        }
      }

      // POST /v1/quote/batch of BATCH_SIZE at BATCH_RATE batches/s, beside the bare server answering the same bytes.
      const batchLatency = { quote: new LatencyRecorder(), bare: new LatencyRecorder() };
      const batchLag = { quote: new LatencyRecorder(), bare: new LatencyRecorder() };
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        for (const [name, s] of (round % 2 === 0 ? [['bare', bareBatch], ['quote', quote]] : [['quote', quote], ['bare', bareBatch]]) as ['quote' | 'bare', QuoteServerProcess][]) {
          await runOpenloop(
            generator,
            { port: s.ready.port, rate: BATCH_RATE, seconds: BATCH_SECONDS, warmupSeconds: LATENCY_WARMUP_SECONDS, connections: BATCH_CONNECTIONS, paths: batchPaths, body: batchFile, out: join(dir, `batch-${name}-${round}.bin`) },
            batchLatency[name],
            batchLag[name],
          );
          await settle();
          process.stderr.write(`bench quote: batch ${name} round ${round + 1}: p99 so far ${us(batchLatency[name].percentileUs(99))}\n`);
        }
      }

      /** Open-loop rounds at `rate` over `targets`, interleaved between the quote and the bare server. */
      const openLoop = async (label: string, rate: number, targets: string) => {
        const rec = { bare: new LatencyRecorder(), quote: new LatencyRecorder() };
        const late = { bare: new LatencyRecorder(), quote: new LatencyRecorder() };
        for (let round = 0; round < LATENCY_ROUNDS; round++) {
          for (const s of round % 2 === 0 ? [bare, quote] : [quote, bare]) {
            const name = s.name as 'bare' | 'quote';
            const summary = await runOpenloop(
              generator,
              { port: s.ready.port, rate, seconds: LATENCY_SECONDS, warmupSeconds: LATENCY_WARMUP_SECONDS, connections: LATENCY_CONNECTIONS, paths: targets, out: join(dir, `${label}-${name}-${round}.bin`) },
              rec[name],
              late[name],
            );
            await settle();
            process.stderr.write(`bench quote: ${label} ${name} round ${round + 1}: ${summary.recorded} recorded, p99 so far ${us(rec[name].percentileUs(99))}\n`);
          }
        }
        return { q: rec.quote.summary(), b: rec.bare.summary(), lagP99: Math.max(late.quote.percentileUs(99), late.bare.percentileUs(99)) };
      };
      const twoHopCheck = readFileSync(twoHopPaths, 'utf8').trim().split('\n');
      const twoHopSample = (await (await fetch(`http://127.0.0.1:${quote.ready.port}${twoHopCheck[0]}`)).json()) as { route?: unknown[] };
      if (twoHopSample.route?.length !== 2) throw new Error(`two-hop target ${twoHopCheck[0]} did not answer a two-hop route`);
      const twoHop = await openLoop('two-hop', TWO_HOP_RATE, twoHopPaths);
      process.kill(quote.ready.pid, 'SIGUSR2'); // pool updates on
      let busy;
      try {
        busy = await openLoop('busy cache', RATE, paths);
      } finally {
        process.kill(quote.ready.pid, 'SIGUSR2'); // and off (the server reports the rate applied)
      }

      const memory = { bare: memoryOf(bare.ready.pid), quote: memoryOf(quote.ready.pid) };
      const lagP99 = Math.max(lag.quote.percentileUs(99), lag.bare.percentileUs(99));
      const machine = `1-min load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after, on ${cpus().length} CPUs`;
      const q = latency.quote.summary();
      const b = latency.bare.summary();
      const quoteRps = median(rps.quote!);
      const bareRps = median(rps.bare!);
      const tool = `bench/loadgen/openloop.c (open loop, latency from the due time), ${RATE.toLocaleString('en-US')} req/s, ${LATENCY_CONNECTIONS} connections, ${LATENCY_ROUNDS}×${LATENCY_SECONDS} s after ${LATENCY_WARMUP_SECONDS} s warm-up`;
      const fmtRounds = (xs: number[]): string => xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ');
      const mb = (x: number): string => `${x.toFixed(1)} MB`;
      const swapRps = median(rps.swap!);
      const cpuUs = (name: string): number => (cpu[name]!.seconds / cpu[name]!.requests) * 1e6;
      const qb = batchLatency.quote.summary();
      const bb = batchLatency.bare.summary();
      const batchLagP99 = Math.max(batchLag.quote.percentileUs(99), batchLag.bare.percentileUs(99));
      return [
        {
          name: `quote throughput (wrk -t${WRK_THREADS} -c${WRK_CONNECTIONS}, closed loop)`,
          unit: 'req/s',
          value: quoteRps,
          higherIsBetter: true,
          baseline: { name: 'bare uWS, same body', value: bareRps },
          goal: `≥ ${GOAL_THROUGHPUT_RATIO * 100}% of bare uWS`,
          goalMet: quoteRps >= GOAL_THROUGHPUT_RATIO * bareRps,
          note: `median of ${WRK_ROUNDS} interleaved ${WRK_SECONDS} s rounds; quote ${fmtRounds(rps.quote!)}; bare ${fmtRounds(rps.bare!)}; all 2xx`,
        },
        p99Figure({
          name: `quote latency p99 at ${RATE.toLocaleString('en-US')} req/s (open loop)`,
          unit: 'µs',
          ours: q,
          baseline: { name: 'bare uWS p99', p99Us: b.p99Us },
          goal: `p99 < ${GOAL_P99_US.toLocaleString('en-US')} µs at ${RATE.toLocaleString('en-US')} req/s`,
          goalUs: GOAL_P99_US,
          note:
            (lagP99 > NOISY_LAG_P99_US
              ? `NOISY: the generator's own lateness p99 was ${us(lagP99)} (> ${us(NOISY_LAG_P99_US)}), the box is busy (${machine}); `
              : `${machine}; `) +
            (quoteRps < RATE
              ? `OVERLOAD: the offered ${RATE.toLocaleString('en-US')} req/s is above the quote server's max throughput in this run (${Math.round(quoteRps).toLocaleString('en-US')} req/s), so this is a queueing figure; `
              : '') +
            (incomplete.quote + incomplete.bare > 0
              ? `unanswered 10 s after the last send, recorded at their age then: quote ${incomplete.quote}, bare ${incomplete.bare}; `
              : '') +
            `${tool}; ${q.count} quote requests, every answer 200, max ${us(q.maxUs)}; ` +
            `bare p50 ${us(b.p50Us)} p99 ${us(b.p99Us)} p99.9 ${us(b.p999Us)} max ${us(b.maxUs)}; ` +
            `generator lateness (counted in the latency) p50/p99: quote run ${us(lag.quote.percentileUs(50))}/${us(lag.quote.percentileUs(99))}, ` +
            `bare run ${us(lag.bare.percentileUs(50))}/${us(lag.bare.percentileUs(99))}; ` +
            `pipelined sends (all connections busy): quote ${pipelined.quote}, bare ${pipelined.bare}; max in flight: quote ${maxInFlight.quote}, bare ${maxInFlight.bare}`,
        }),
        {
          name: `GET /swap/v1/quote throughput (wrk -t${WRK_THREADS} -c${WRK_CONNECTIONS}, closed loop)`,
          unit: 'req/s',
          value: swapRps,
          higherIsBetter: true,
          baseline: { name: 'GET /quote, same server, same pairs and amounts', value: quoteRps },
          goal: `≥ ${GOAL_SWAP_API_RATIO}× GET /quote`,
          goalMet: swapRps >= GOAL_SWAP_API_RATIO * quoteRps,
          note: `median of ${WRK_ROUNDS} rounds interleaved with the /quote and bare rounds; swap API ${fmtRounds(rps.swap!)}; /quote ${fmtRounds(rps.quote!)}; all 2xx; ratio ${(swapRps / quoteRps).toFixed(2)}×`,
        },
        {
          name: 'GET /swap/v1/quote server CPU per request (during the wrk rounds)',
          unit: 'µs',
          value: cpuUs('swap'),
          higherIsBetter: false,
          baseline: { name: 'GET /quote server CPU per request', value: cpuUs('quote') },
          goal: `≤ ${(1 / GOAL_SWAP_API_RATIO).toFixed(2)}× GET /quote (the CPU form of ≥ ${GOAL_SWAP_API_RATIO}× its throughput)`,
          goalMet: cpuUs('swap') <= cpuUs('quote') / GOAL_SWAP_API_RATIO,
          note: `utime + stime of the quote server process over ${WRK_ROUNDS} rounds each (/proc, 10 ms ticks): swap API ${cpu.swap!.requests.toLocaleString('en-US')} requests, /quote ${cpu.quote!.requests.toLocaleString('en-US')}; bare server ${us(cpuUs('bare'))} per request; less sensitive than throughput to other load on the box`,
        },
        p99Figure({
          name: `POST /v1/quote/batch of ${BATCH_SIZE} p99 at ${BATCH_RATE} batches/s (open loop)`,
          unit: 'µs',
          ours: qb,
          baseline: { name: 'bare uWS answering the same batch bytes, p99', p99Us: bb.p99Us },
          goal: `p99 < ${GOAL_BATCH_P99_US.toLocaleString('en-US')} µs at ${BATCH_RATE} batches/s`,
          goalUs: GOAL_BATCH_P99_US,
          note:
            (batchLagP99 > NOISY_LAG_P99_US ? `NOISY: generator lateness p99 ${us(batchLagP99)}; ` : '') +
            `${qb.count} batches of ${BATCH_SIZE} distinct cache-hit quotes (${Buffer.byteLength(batch)} bytes in, ${Buffer.byteLength(batchAnswer)} bytes out), every answer 200, max ${us(qb.maxUs)}; ` +
            `bare p50 ${us(bb.p50Us)} p99 ${us(bb.p99Us)}; ${BATCH_CONNECTIONS} connections, ${LATENCY_ROUNDS}×${BATCH_SECONDS} s after ${LATENCY_WARMUP_SECONDS} s warm-up; ${machine}`,
        }),
        p99Figure({
          name: `two-hop quote latency p99 at ${TWO_HOP_RATE.toLocaleString('en-US')} req/s (open loop)`,
          unit: 'µs',
          ours: twoHop.q,
          baseline: { name: 'bare uWS p99, same rate', p99Us: twoHop.b.p99Us },
          goal: `p99 < ${GOAL_P99_US.toLocaleString('en-US')} µs at ${TWO_HOP_RATE.toLocaleString('en-US')} req/s`,
          goalUs: GOAL_P99_US,
          note:
            (twoHop.lagP99 > NOISY_LAG_P99_US ? `NOISY: generator lateness p99 ${us(twoHop.lagP99)}; ` : '') +
            `${twoHopCheck.length} targets of pairs without a pool of their own, each a two-hop cache answer; ${twoHop.q.count} requests, every answer 200, max ${us(twoHop.q.maxUs)}; ` +
            `bare p50 ${us(twoHop.b.p50Us)} p99 ${us(twoHop.b.p99Us)} p99.9 ${us(twoHop.b.p999Us)}`,
        }),
        p99Figure({
          name: `quote latency p99 at ${RATE.toLocaleString('en-US')} req/s while the cache takes ${UPDATES_PER_SECOND.toLocaleString('en-US')} pool updates/s`,
          unit: 'µs',
          ours: busy.q,
          baseline: { name: 'bare uWS p99, same rate', p99Us: busy.b.p99Us },
          goal: `p99 < ${GOAL_P99_US.toLocaleString('en-US')} µs at ${RATE.toLocaleString('en-US')} req/s`,
          goalUs: GOAL_P99_US,
          note:
            (busy.lagP99 > NOISY_LAG_P99_US ? `NOISY: generator lateness p99 ${us(busy.lagP99)}; ` : '') +
            `updates: state and context of a pool stored again at a new slot, round-robin, in 10 ms ticks (the server reports the rate applied on stderr); ` +
            `${busy.q.count} requests, every answer 200, max ${us(busy.q.maxUs)}; bare p50 ${us(busy.b.p50Us)} p99 ${us(busy.b.p99Us)} p99.9 ${us(busy.b.p999Us)}`,
        }),
        {
          name: `quote server RSS after load (${String(quote.ready.pools)} pools cached)`,
          unit: 'MB',
          value: memory.quote.rssMB,
          higherIsBetter: false,
          baseline: { name: 'bare uWS server RSS', value: memory.bare.rssMB },
          goal: `< ${GOAL_RSS_MB} MB at 1,000 pools`,
          goalMet: memory.quote.rssMB < GOAL_RSS_MB,
          note:
            `VmRSS / VmHWM since ready: quote ${mb(memory.quote.rssMB)} / ${mb(memory.quote.hwmMB)}, bare ${mb(memory.bare.rssMB)} / ${mb(memory.bare.hwmMB)}; ` +
            `quote V8 heap used at ready ${String(quote.ready.memory?.heapUsedMB ?? '?')} MB (bare ${String(bare.ready.memory?.heapUsedMB ?? '?')} MB); ` +
            `quote memory at ready: ${breakdownText(quote.ready)}; ` +
            `both servers idled 6 s and collected before ready (--idle-gc), so V8 gave back the young generation the fill grew: ` +
            `the best case of a start; a service loaded from the moment its cache is filled may keep up to ~33 MB more`,
        },
      ];
    } finally {
      await Promise.all(servers.map(stopServer));
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
