/**
 * `e2e`: from a swap on the simulated chain to the moment the quote service can serve its new state,
 * in one process as `npm start` runs it (the simulator on its own thread, the scanner and the quote
 * service on the main thread and the parse worker), while the simulator's flow keeps 2,000
 * transactions/s of swaps and noise going (30% of swaps through lookup tables).
 *
 * Probe swaps on every pool of the chain (all four kinds) are sent one at a time. Start: the
 * simulator emits the entry batch holding the probe (its entries listener, before the gRPC write;
 * process.hrtime, the monotonic clock every thread shares).
 * End: the scanner has stored the state read after it in the pool cache (its publish hook, which
 * runs after the cache upsert); the next /quote reads that state. In between: gRPC stream, input
 * ring, parse worker, results ring, processing queue, getMultipleAccounts over loopback HTTP (pool,
 * vaults, tick / bin arrays), decode, upsert.
 *
 * Baseline, same run, same load: one getMultipleAccounts of the same pool's account through the
 * same kind of RPC client, i.e. the RPC read the pipeline cannot avoid.
 *
 * The note breaks each probe down by stage (HDR p50 / p95): transport (chain thread's emission →
 * the scanner has the gRPC message), parse (input ring → parse worker → results ring → main thread),
 * queue (processing queue until its batch starts), read (the batch's getMultipleAccounts of the pool
 * and its swap accounts, coalesced with whatever else was read in that run, and their decode), store
 * (event built, cache upsert). Beside the one-account floor it times a second reference read: one
 * getMultipleAccounts of every account the pool's state needs (pool, vaults, tick / bin arrays), what
 * the pipeline must read for a concentrated pool; and it counts the probes whose state was read at a
 * slot before the probe's own (the simulator serves committed slots only, as a node serves what it
 * has: the swap's own state arrives with the scanner's settle read once the slot is committed),
 * and times that publish too: swap → the first state read at the swap's slot or later.
 */
import { performance } from 'node:perf_hooks';

import { createEngine } from '../../engine/app/engine-app.js';
import { createDecoderRegistry } from '../../engine/dex/index.js';
import { RpcPoolLoader } from '../../engine/pools/index.js';
import { AccountFetcher } from '../../engine/rpc/account-fetcher.js';
import { engineSchema } from '../../engine/app/engine-config.js';
import { loadConfig } from '../../engine/config/loader.js';
import { createLogger } from '../../engine/obs/logger.js';
import { RpcClient } from '../../engine/rpc/rpc-client.js';
import { simSchema } from '../../engine/sim/sim-config.js';
import { startSimulatorThread } from '../../engine/sim/sim-thread.js';
import type { PublishTiming } from '../../engine/scanner/scanner.js';
import type { ProbeTimes } from '../../engine/sim/sim-thread.js';
import type { Figure, Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';

const PROBES = Number(process.env.BENCH_E2E_PROBES ?? 400);
/** Cases to run (profiling one path): a comma list of quiet-rpc, quiet-geyser, flow-rpc, flow-geyser; default all. */
const CASES = (process.env.BENCH_E2E_CASES ?? 'quiet-rpc,quiet-geyser,flow-rpc,flow-geyser').split(',');
const PROBE_GAP_MS = 15;
/** The simulator's sim.txsPerEntry (its batch per entry; default: the setting's own), for A/B runs of the batch size. */
const TXS_PER_ENTRY = process.env.BENCH_E2E_TXS_PER_ENTRY;

/** A recorder's "p50 x / p95 y ms" (ms with two decimals), as the note prints each stage. */
function p50p95(r: LatencyRecorder): string {
  return `p50 ${(r.percentileUs(50) / 1000).toFixed(2)} / p95 ${(r.percentileUs(95) / 1000).toFixed(2)} ms`;
}

function percentileOf(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const e2eSuite: Suite = {
  name: 'e2e',
  description: 'simulator swap → new state served, one process, quiet chain and 2,000 tx/s flow, beside the bare RPC read',
  async run(): Promise<Figure[]> {
    // The engine's own pipeline on a quiet chain (only the probes), then under the default flow.
    // Each beside the same pipeline on the Geyser state source (scanner.stateSource geyser).
    const figures: Figure[] = [];
    for (const [name, txRate, source] of [
      ['quiet-rpc', 0, 'block-entries'],
      ['quiet-geyser', 0, 'geyser'],
      ['flow-rpc', 2_000, 'block-entries'],
      ['flow-geyser', 2_000, 'geyser'],
    ] as const) {
      if (!CASES.includes(name)) continue;
      const figure = await measure(txRate, source);
      process.stderr.write(`bench: e2e ${name}: p95 ${figure.value.toFixed(2)} ms, ${figure.baseline.name} ${figure.baseline.value.toFixed(2)} ms; ${figure.note}\n`);
      figures.push(figure);
    }
    return figures;
  },
};

/**
 * `geyser`: the engine on scanner.stateSource geyser. The simulator's Geyser server streams each
 * transaction's account writes as the chain applies them, with the transaction's signature
 * (txn_signature); the engine's events carry it, so a probe's publish is found by its signature on
 * both paths. Start, as on the block-entry path: the simulator emits the entry batch holding the
 * probe (its account writes were streamed a moment before, in the same batch); the stages read
 * transport = until the scanner has the account update, parse = the wait for the refresh (the
 * writes of one event-loop turn are coalesced), queue, read (from the held accounts) and store as above.
 * The chain thread's side is timed too (its probe reply): send = the chain applied the swap → the
 * Geyser server has written its account updates to the stream; flush = → the chain thread's next
 * check phase (its sockets written by then: the rest of the probe's batch of sim.txsPerEntry
 * transactions runs first, the piece's later batches come in later turns); wire = → the
 * scanner has the update; and the whole path from the swap's application, the physical start.
 */
async function measure(txRate: number, source: 'block-entries' | 'geyser' = 'block-entries'): Promise<Figure> {
  const logger = createLogger({ name: 'bench-e2e', level: 'silent' });
  const simConfig = loadConfig(simSchema, { env: {}, flags: { seed: '21', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': String(txRate), ...(TXS_PER_ENTRY !== undefined ? { 'txs-per-entry': TXS_PER_ENTRY } : {}) } }).values;
  const sim = await startSimulatorThread(simConfig, { logLevel: 'silent' });
  const simEndpoints = sim.endpoints;
  const at = simEndpoints.stream.lastIndexOf(':');
  const loaded = loadConfig(engineSchema, {
    env: {},
    flags: {
      'blockstream-host': simEndpoints.stream.slice(0, at),
      'blockstream-port': simEndpoints.stream.slice(at + 1),
      'rpc-endpoints': simEndpoints.rpc,
      port: '0',
      'metrics-port': '0',
      'grpc-port': '0',
      'health-port': '0',
      'scanner-metrics-port': '0',
      ...(source === 'geyser' ? { 'state-source': 'geyser', 'geyser-url': `http://${simEndpoints.geyser}` } : {}),
    },
  });
  const pools = sim.pools;
  const engine = createEngine(loaded, { logger, pools: pools.map((p) => p.address) });
  await engine.start();

  // performance.now() of this thread → the process-wide monotonic clock the simulator reports in.
  const perfToNs = (ms: number): bigint => hrtimeAtPerfZero + BigInt(Math.round(ms * 1e6));
  const hrtimeAtPerfZero = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6));
  const published = new Map<string, PublishTiming & { stateBehind: boolean }>();
  const poolStates = new Map<string, { slot: bigint; at: number }[]>();
  /** The first publish of `pool` after `after` (perf ms) whose state was read at `slot` or later. */
  const ownStateAt = (pool: string, slot: bigint, after: number): number | undefined => poolStates.get(pool)?.find((s) => s.at >= after && s.slot >= slot)?.at;
  engine.scanner.onPublished((event, t) => {
    // Every publish is kept (the flow's too): a probe's publish may beat the simulator's reply.
    if (published.size > 50_000) published.clear();
    // Read at a slot before the newest one the stream has shown: the state predates the probe's slot.
    const stateBehind = BigInt(event.state.slot) < engine.scanner.streamSlot;
    if (!published.has(event.transaction.signature)) published.set(event.transaction.signature, { ...t, stateBehind });
    // Each pool's publishes: a probe's own state is the first read at its slot or later, published
    // under whichever transaction of the pool was last (the scanner's settle read).
    const states = poolStates.get(event.pool.address) ?? [];
    if (states.length > 5_000) states.splice(0, 2_500);
    states.push({ slot: BigInt(event.state.slot), at: t.publishedAt });
    poolStates.set(event.pool.address, states);
    waiting.get(event.transaction.signature)?.();
  });
  const waiting = new Map<string, () => void>();
  const stages = { transport: new LatencyRecorder(), parse: new LatencyRecorder(), queue: new LatencyRecorder(), read: new LatencyRecorder(), store: new LatencyRecorder() };
  // The chain thread's side, and the whole path from the swap's application (the Geyser writes
  // leave before the entry batch does: its start point).
  const chainStages = { send: new LatencyRecorder(), flush: new LatencyRecorder(), wire: new LatencyRecorder() };
  const fromApplied = new LatencyRecorder();
  const e2e = new LatencyRecorder();
  const byDex = new Map<string, number[]>();
  const rpc = new RpcClient({ endpoints: [simEndpoints.rpc] });
  const floor = new LatencyRecorder();
  const fullRead = new LatencyRecorder();
  // Every account each pool's state is read from (the reference read), from one load of each.
  const referenceLoader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry(), keepAccounts: true });
  const swapAccounts = new Map<string, string[]>();
  for (const [i, r] of (await referenceLoader.load(pools.map((p) => p.address))).entries()) {
    swapAccounts.set(pools[i]!.address, r.ok && r.value.accounts !== undefined ? [...r.value.accounts.keys()] : [pools[i]!.address]);
  }
  let behind = 0;
  /** Each probe seen: its pool, its slot, its first publish and its emission. */
  const probesSeen: { pool: string; slot: bigint; firstAt: number; emittedNs: bigint }[] = [];
  await new Promise((r) => setTimeout(r, 2_000)); // warm-up: stream connected, first refresh done
  // Geyser: reads of the scanner's loader the stream could not answer (read over RPC), from here on.
  const missesAtStart = engine.geyser?.reader.misses ?? 0;
  const aheadAtStart = engine.geyser?.reader.ahead.accounts ?? 0;
  let lost = 0;
  let refused = 0;
  for (let i = 0; i < PROBES; i++) {
    const { address, dex } = pools[i % pools.length]!;
    let sent: ProbeTimes;
    let seen: Promise<boolean>;
    try {
      // The signature is known only once sent; catch a publish that beats the reply.
      const ready = sim.swap(address, i % 2 === 0, 10_000_000n);
      sent = await ready;
    } catch {
      refused++; // preflight refused it (e.g. the pool cannot pay that much right now)
      continue;
    }
    if (published.has(sent.signature)) seen = Promise.resolve(true);
    else {
      seen = Promise.race([
        new Promise<boolean>((r) => waiting.set(sent.signature, () => r(true))),
        new Promise<boolean>((r) => setTimeout(() => r(false), 3_000)),
      ]);
    }
    if (!(await seen)) {
      lost++;
    } else {
      const t = published.get(sent.signature)!;
      const ms = Number(perfToNs(t.publishedAt) - sent.emittedNs) / 1e6;
      e2e.recordNs(ms * 1e6);
      stages.transport.recordNs(Number(perfToNs(t.receivedAt) - sent.emittedNs));
      stages.parse.recordNs((t.matchedAt - t.receivedAt) * 1e6);
      stages.queue.recordNs((t.dequeuedAt - t.matchedAt) * 1e6);
      stages.read.recordNs((t.loadedAt - t.dequeuedAt) * 1e6);
      stages.store.recordNs((t.publishedAt - t.loadedAt) * 1e6);
      chainStages.send.recordNs(Number(sent.handedNs - sent.appliedNs));
      chainStages.flush.recordNs(Number(sent.flushedNs - sent.handedNs));
      chainStages.wire.recordNs(Math.max(0, Number(perfToNs(t.receivedAt) - sent.flushedNs)));
      fromApplied.recordNs(Number(perfToNs(t.publishedAt) - sent.appliedNs));
      if (t.stateBehind) behind++;
      probesSeen.push({ pool: address, slot: t.transactionSlot, firstAt: t.publishedAt, emittedNs: sent.emittedNs });
      byDex.set(dex, [...(byDex.get(dex) ?? []), ms]);
    }
    waiting.delete(sent.signature);
    published.delete(sent.signature);
    // The floor: one read of this pool's account, under the same load; then the reference read of
    // all its swap accounts.
    let started = performance.now();
    await rpc.getMultipleAccounts([address]);
    floor.recordNs((performance.now() - started) * 1e6);
    started = performance.now();
    await rpc.getMultipleAccounts(swapAccounts.get(address)!);
    fullRead.recordNs((performance.now() - started) * 1e6);
    await new Promise((r) => setTimeout(r, PROBE_GAP_MS));
    if (process.env.BENCH_E2E_PROGRESS !== undefined && (i + 1) % 50 === 0) process.stderr.write(`bench: e2e ${source} ${txRate} tx/s: ${i + 1} probes, ${lost} lost, ${refused} refused\n`);
  }
  // The swap's own state: the last probe's slot must end first (a few hundred ms).
  const ownDeadline = performance.now() + 3_000;
  const last = probesSeen.at(-1);
  while (last !== undefined && ownStateAt(last.pool, last.slot, last.firstAt) === undefined && performance.now() < ownDeadline) await new Promise((r) => setTimeout(r, 20));
  const ownState = new LatencyRecorder();
  for (const p of probesSeen) {
    const at = ownStateAt(p.pool, p.slot, p.firstAt);
    if (at !== undefined) ownState.recordNs(Number(perfToNs(at) - p.emittedNs));
  }
  const stats = engine.scanner.stats();
  const loads = engine.loader.stats.loads;
  const geyserText = engine.geyser === undefined ? '' : `; Geyser reader: ${engine.geyser.reader.misses - missesAtStart} RPC reads during the probes (${missesAtStart} before), ${engine.geyser.reader.ahead.accounts - aheadAtStart} read ahead (${aheadAtStart} before), ${engine.geyser.stream.followedAccounts} accounts followed`;
  await engine.close();
  await rpc.close();
  await sim.close();

  const s = e2e.summary();
  const p95Us = e2e.percentileUs(95);
  const f = floor.summary();
  const stageText = Object.entries(stages)
    .map(([name, r]) => `${name} ${p50p95(r)}`)
    .join('; ');
  const chainText = Object.entries(chainStages)
    .map(([name, r]) => `${name} ${p50p95(r)}`)
    .join('; ');
  const perDex = [...byDex.entries()]
    .map(([dex, v]) => {
      const sorted = [...v].sort((a, b) => a - b);
      return `${dex} p50 ${percentileOf(sorted, 50).toFixed(2)} / p95 ${percentileOf(sorted, 95).toFixed(2)} ms`;
    })
    .join('; ');
  return {
      name: `swap → state served, p95 (engine + chain thread, ${source === 'geyser' ? 'Geyser account stream' : 'block entries + RPC re-read'}, ${txRate === 0 ? 'quiet chain' : `${txRate.toLocaleString('en-US')} tx/s flow`})`,
      unit: 'ms',
      value: p95Us / 1000,
      higherIsBetter: false,
      baseline: { name: 'getMultipleAccounts of the pool account, p95', value: floor.percentileUs(95) / 1000 },
      p50Us: s.p50Us,
      p99Us: s.p99Us,
      p999Us: s.p999Us,
      goal: 'p95 < 5 ms',
      goalMet: p95Us < 5_000,
      note: `${s.count} probes (${lost} lost, ${refused} refused by preflight), ${pools.length} pools; ${perDex}; stages: ${stageText}; chain thread: ${chainText}; from the swap's application ${p50p95(fromApplied)}; floor p50 ${(f.p50Us / 1000).toFixed(2)} ms p99 ${(f.p99Us / 1000).toFixed(2)} ms; all swap accounts of the pool (${Math.min(...[...swapAccounts.values()].map((a) => a.length))}–${Math.max(...[...swapAccounts.values()].map((a) => a.length))} keys) ${p50p95(fullRead)}; ${behind} of ${s.count} probe states read at a slot before the stream's newest; the swap's own state (read at its slot or later, after the slot's end) ${p50p95(ownState)}, ${ownState.summary().count} of ${probesSeen.length}; scanner saw ${stats.transactionsProcessed} txs, ${stats.eventsPublished} events, ${stats.droppedTransactions} dropped, ${stats.queue.batches} batches, ${loads} pool loads${geyserText}`,
  };
}
