/**
 * `e2e`: from a swap on the simulated chain to the moment the quote service can serve its new state,
 * in one process as `npm start` runs it (simulator, scanner, quote service), while the simulator's
 * flow keeps 2,000 transactions/s of swaps and noise going (30% of swaps through lookup tables).
 *
 * Probe swaps on every pool of the chain (all four kinds) are sent one at a time. Start: the
 * simulator emits the entry batch holding the probe (its entries listener, before the gRPC write).
 * End: the scanner has stored the state read after it in the pool cache (its publish hook, which
 * runs after the cache upsert); the next /quote reads that state. In between: gRPC stream, input
 * ring, parse worker, results ring, processing queue, getMultipleAccounts over loopback HTTP (pool,
 * vaults, tick / bin arrays), decode, upsert.
 *
 * Baseline, same run, same load: one getMultipleAccounts of the same pool's accounts through the
 * same RPC client, i.e. the RPC read the pipeline cannot avoid.
 */
import { performance } from 'node:perf_hooks';

import { createEngine } from '../../engine/app/engine-app.js';
import { engineSchema } from '../../engine/app/engine-config.js';
import { decode as decodeBase58 } from '../../engine/chain/base58.js';
import { loadConfig } from '../../engine/config/loader.js';
import { createLogger } from '../../engine/obs/logger.js';
import { RpcClient } from '../../engine/rpc/rpc-client.js';
import { simSchema } from '../../engine/sim/sim-config.js';
import { createSimulator } from '../../engine/sim/simulator.js';
import { swapTransaction, trader } from '../../engine/sim/testing/chain-fixtures.js';
import type { Figure, Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';

const PROBES = Number(process.env.BENCH_E2E_PROBES ?? 400);
const PROBE_GAP_MS = 15;

function percentileOf(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const e2eSuite: Suite = {
  name: 'e2e',
  description: 'simulator swap → new state served, one process under 2,000 tx/s, beside the bare RPC read',
  async run(): Promise<Figure[]> {
    const logger = createLogger({ name: 'bench-e2e', level: 'silent' });
    const simConfig = loadConfig(simSchema, { env: {}, flags: { seed: '21', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'http-port': '0' } }).values;
    const sim = createSimulator(simConfig, { logger });
    const simEndpoints = await sim.start();
    const at = simEndpoints.stream.lastIndexOf(':');
    const loaded = loadConfig(engineSchema, {
      env: {},
      flags: {
        'blockstream-host': simEndpoints.stream.slice(0, at),
        'blockstream-port': simEndpoints.stream.slice(at + 1),
        'rpc-endpoints': simEndpoints.rpc,
        port: '0',
        'metrics-port': '0',
        'health-port': '0',
        'scanner-metrics-port': '0',
      },
    });
    const chain = sim.chain;
    const pools = chain.pools().map((p) => p.address);
    const engine = createEngine(loaded, { logger, pools });
    await engine.start();

    // Probe bookkeeping: signature bytes → emission time; published signature → end time.
    let probe: { signature: string; bytes: Buffer; emittedAt: number; resolve: (ms: number) => void } | undefined;
    chain.onEntries((batch) => {
      if (probe === undefined || probe.emittedAt !== 0) return;
      if (Buffer.from(batch.entries.buffer, batch.entries.byteOffset, batch.entries.byteLength).indexOf(probe.bytes) >= 0) probe.emittedAt = performance.now();
    });
    const stages = { transport: new LatencyRecorder(), parse: new LatencyRecorder(), read: new LatencyRecorder(), store: new LatencyRecorder() };
    engine.scanner.onPublished((event, t) => {
      if (probe !== undefined && probe.emittedAt !== 0 && event.transaction.signature === probe.signature) {
        const p = probe;
        probe = undefined;
        stages.transport.recordNs((t.receivedAt - p.emittedAt) * 1e6);
        stages.parse.recordNs((t.matchedAt - t.receivedAt) * 1e6);
        stages.read.recordNs((t.loadedAt - t.matchedAt) * 1e6);
        stages.store.recordNs((t.publishedAt - t.loadedAt) * 1e6);
        p.resolve(t.publishedAt - p.emittedAt);
      }
    });

    const e2e = new LatencyRecorder();
    const byDex = new Map<string, number[]>();
    const rpc = new RpcClient({ endpoints: [simEndpoints.rpc] });
    const floor = new LatencyRecorder();
    await new Promise((r) => setTimeout(r, 2_000)); // warm-up: stream connected, first refresh done
    let lost = 0;
    let refused = 0;
    for (let i = 0; i < PROBES; i++) {
      const address = pools[i % pools.length]!;
      const info = chain.poolInfo(address)!;
      const tx = swapTransaction(chain, trader(chain, i % 4), info, { aToB: i % 2 === 0, exactIn: true, amount: 10_000_000n, threshold: 0n });
      const done = new Promise<number>((resolve) => {
        probe = { signature: '', bytes: Buffer.alloc(0), emittedAt: 0, resolve };
      });
      let signature: string;
      try {
        signature = chain.sendTransaction(tx);
      } catch {
        refused++; // preflight refused it (e.g. the pool cannot pay that much right now)
        probe = undefined;
        continue;
      }
      probe!.signature = signature;
      probe!.bytes = Buffer.from(decodeBase58(signature));
      const ms = await Promise.race([done, new Promise<number>((r) => setTimeout(() => r(-1), 3_000))]);
      if (ms < 0) {
        lost++;
        probe = undefined;
      } else {
        e2e.recordNs(ms * 1e6);
        const dex = info.dex;
        byDex.set(dex, [...(byDex.get(dex) ?? []), ms]);
      }
      // The floor: one read of this pool's accounts, under the same load.
      const keys = [address, info.vaultA, info.vaultB];
      const t = performance.now();
      await rpc.getMultipleAccounts(keys);
      floor.recordNs((performance.now() - t) * 1e6);
      await new Promise((r) => setTimeout(r, PROBE_GAP_MS));
    }
    const stats = engine.scanner.stats();
    await engine.close();
    await sim.close();

    const s = e2e.summary();
    const p95Us = e2e.percentileUs(95);
    const f = floor.summary();
    const stageText = Object.entries(stages)
      .map(([name, r]) => `${name} p50 ${(r.percentileUs(50) / 1000).toFixed(2)} / p95 ${(r.percentileUs(95) / 1000).toFixed(2)} ms`)
      .join('; ');
    const perDex = [...byDex.entries()]
      .map(([dex, v]) => {
        const sorted = [...v].sort((a, b) => a - b);
        return `${dex} p50 ${percentileOf(sorted, 50).toFixed(2)} / p95 ${percentileOf(sorted, 95).toFixed(2)} ms`;
      })
      .join('; ');
    return [
      {
        name: 'swap → state served, p95 (one process, 2,000 tx/s flow)',
        unit: 'ms',
        value: p95Us / 1000,
        higherIsBetter: false,
        baseline: { name: 'getMultipleAccounts of pool + vaults, p95', value: floor.percentileUs(95) / 1000 },
        p50Us: s.p50Us,
        p99Us: s.p99Us,
        p999Us: s.p999Us,
        goal: 'p95 < 5 ms',
        goalMet: p95Us < 5_000,
        note: `${s.count} probes (${lost} lost, ${refused} refused by preflight), ${pools.length} pools; ${perDex}; stages: ${stageText}; floor p50 ${(f.p50Us / 1000).toFixed(2)} ms p99 ${(f.p99Us / 1000).toFixed(2)} ms; scanner saw ${stats.transactionsProcessed} txs, ${stats.eventsPublished} events, ${stats.droppedTransactions} dropped`,
      },
    ];
  },
};
