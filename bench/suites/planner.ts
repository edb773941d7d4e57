/**
 * `planner`: the arbitrage search and the planner's market event → opportunity path.
 *
 * 1. Arbitrage search over 1,000 simulator pools (every cycle of two and three legs from wrapped SOL,
 *    a full sweep, gaps planted on a few pools): ours (screen, doubling, ternary search over integers)
 *    beside a naive search in the same run that quotes every cycle at 64 log-spaced input sizes and
 *    keeps the best. Figures: sweep time (lower is better) and the total profit found (ours / naive,
 *    higher is better: the naive grid misses the optimum between its sizes).
 * 2. Market event → opportunity published, through the real pieces: a MarketEvent published on
 *    JetStream → `tidepool planner`'s durable consumer → the pool re-read from the simulator's RPC →
 *    the arbitrage search → the opportunity stored on TRADE_OPPORTUNITIES → a subscriber receives it.
 *    Baseline in the same run: bare JetStream publish → pull consumer → publish → subscriber (a relay
 *    with no work). Goal (docs/architecture.md §6): p99 < 10 ms (spec: < 1 s).
 *    The streams are the suite's own: prefixed, small (bus.streamMaxBytesScale at the test scale, so
 *    they fit beside a deployment's full-size platform streams on the same server), tracked for the
 *    runner's clean-up and deleted at the end.
 */
import { performance } from 'node:perf_hooks';

import { connect, type NatsConnection } from 'nats';

import { createPlannerApp, plannerSchema } from '../../engine/app/planner-app.js';
import { ensurePlatformStreams, ensureConsumer, platformConsumerSpec } from '../../engine/bus/index.js';
import { LOCAL_NATS_URL, TEST_STREAM_MAX_BYTES_SCALE, deleteStreams } from '../../engine/bus/testing/local-nats.js';
import { PoolCache } from '../../engine/cache/index.js';
import { loadConfig } from '../../engine/config/loader.js';
import { DEX_KINDS } from '../../engine/dex/index.js';
import { createLogger } from '../../engine/obs/logger.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS } from '../../engine/planner/arbitrage-planner.js';
import { WSOL_MINT } from '../../engine/chain/index.js';
import { cycleOutput, enumerateCycles, type ArbPoolState } from '../../engine/trading/arbitrage-search.js';
import { flashLoanFeeOf } from '../../engine/messages/trade-opportunity.js';
import { encodeMarketEvent, marketEventSubject } from '../../engine/messages/market-event.js';
import { storePool } from '../../engine/quote/testing.js';
import { PriceGapError, openPriceGap } from '../../engine/sim/price-gap.js';
import { simSchema } from '../../engine/sim/sim-config.js';
import { createSimulator, type Simulator } from '../../engine/sim/simulator.js';
import { p99Figure, type Figure, type Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';
import { trackedStreamPrefix } from '../runner/resources.js';

const PROBES = Number(process.env.BENCH_PLANNER_PROBES ?? 300);
const NAIVE_SIZES = 64;

function simulator(poolsPerKind: number): Simulator {
  const config = loadConfig(simSchema, { env: {}, flags: { seed: '91', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: String(poolsPerKind >= 100 ? 64 : 2), 'pools-per-kind': String(poolsPerKind) } }).values;
  return createSimulator(config, { manual: true, logger: createLogger({ name: 'bench', level: 'silent' }) });
}

function plantGaps(sim: Simulator, count: number): string[] {
  const gapped: string[] = [];
  for (const p of sim.chain.pools()) {
    if (gapped.length >= count || p.transferFees !== undefined || (p.pool.tokenA !== WSOL_MINT && p.pool.tokenB !== WSOL_MINT)) continue;
    const other = sim.chain.poolsForPair(p.pool.tokenA, p.pool.tokenB).find((o) => o.address !== p.address && o.transferFees === undefined);
    if (other === undefined) continue;
    try {
      openPriceGap(sim.chain, { pool: p.address, reference: other.address, gapBps: 80 });
      gapped.push(p.address);
    } catch (err) {
      if (!(err instanceof PriceGapError)) throw err;
    }
  }
  sim.chain.advanceSlot();
  return gapped;
}

async function searchFigures(): Promise<Figure[]> {
  const sim = simulator(250);
  try {
    plantGaps(sim, 8);
    const cache = new PoolCache({ maxPoolCount: 2_000 });
    const views = sim.chain.pools().filter((v) => v.transferFees === undefined);
    for (const v of views) storePool(cache, v, sim.chain.slot());
    const planner = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'bench', minProfitThreshold: 0n });
    for (const v of views) planner.addPool(v.address, v.pool.tokenA, v.pool.tokenB);
    const cycles = planner.cycleCount;
    planner.evaluateAll(); // warm up
    const t0 = performance.now();
    const ours = planner.evaluateAll();
    const oursMs = performance.now() - t0;
    // naive: every cycle at 64 log-spaced sizes from screenAmount to maxInput
    const lookup = (a: string): ArbPoolState | undefined => {
      const v = sim.chain.pool(a);
      return v === undefined ? undefined : { address: a, dex: v.dex, pool: v.pool, context: v.ctx, slot: 0n };
    };
    const all = enumerateCycles(WSOL_MINT, views.map((v) => ({ address: v.address, tokenA: v.pool.tokenA, tokenB: v.pool.tokenB })), 3);
    const lo = Math.log(Number(DEFAULT_ARBITRAGE_SETTINGS.screenAmount));
    const hi = Math.log(Number(DEFAULT_ARBITRAGE_SETTINGS.maxInput));
    const sizes = Array.from({ length: NAIVE_SIZES }, (_, i) => BigInt(Math.round(Math.exp(lo + ((hi - lo) * i) / (NAIVE_SIZES - 1)))));
    const fixed = 10_000n;
    const t1 = performance.now();
    let naiveProfit = 0n;
    for (const cycle of all) {
      let best = 0n;
      for (const x of sizes) {
        const out = cycleOutput(cycle, lookup, x);
        if (out === undefined) continue;
        const p = out - x - flashLoanFeeOf(x) - fixed;
        if (p > best) best = p;
      }
      naiveProfit += best;
    }
    const naiveMs = performance.now() - t1;
    // Profit on the same cycles: the ones ours kept, searched again by the naive grid.
    const oursProfit = ours.reduce((sum, o) => sum + o.expectedProfit, 0n);
    let naiveSameCycles = 0n;
    for (const o of ours) {
      const cycle = o.route.map((h) => ({ pool: h.pool, aToB: sim.chain.pool(h.pool)!.pool.tokenA === h.inputMint, inputMint: h.inputMint, outputMint: h.outputMint }));
      let best = 0n;
      for (const x of sizes) {
        const out = cycleOutput(cycle, lookup, x);
        if (out === undefined) continue;
        const p = out - x - flashLoanFeeOf(x) - (o.costs.quotedFees + o.costs.tip);
        if (p > best) best = p;
      }
      naiveSameCycles += best;
    }
    void naiveProfit;
    return [
      {
        name: `arbitrage sweep over ${views.length} pools (${cycles} cycles, ${DEX_KINDS.length} kinds)`,
        unit: 'ms',
        value: oursMs,
        higherIsBetter: false,
        baseline: { name: `naive: ${NAIVE_SIZES} sizes per cycle`, value: naiveMs },
      },
      {
        name: `profit of the ${ours.length} cycles kept (sum, lamports)`,
        unit: 'lamports',
        value: Number(oursProfit),
        higherIsBetter: true,
        baseline: { name: `naive grid of ${NAIVE_SIZES} sizes on the same cycles`, value: Number(naiveSameCycles) },
      },
    ];
  } finally {
    await sim.close();
  }
}

/** An opportunity that does not come fails the suite at once, saying so, instead of at the runner's time limit. */
const PROBE_LIMIT_MS = 10_000;
function withinProbeLimit(done: Promise<void>, probe: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`probe ${probe}: no opportunity published within ${PROBE_LIMIT_MS} ms of its market event (is the planner funded: flash-loan reserves or worker balances?)`)), PROBE_LIMIT_MS);
  });
  return Promise.race([done, limit]).finally(() => clearTimeout(timer));
}

async function latencyFigures(): Promise<Figure[]> {
  const sim = simulator(2);
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  const gapped = plantGaps(sim, 1);
  const pool = sim.chain.pool(gapped[0]!)!;
  const nc: NatsConnection = await connect({ servers: LOCAL_NATS_URL });
  const prefix = trackedStreamPrefix('BP', LOCAL_NATS_URL);
  const streams = ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`);
  const loaded = loadConfig(plannerSchema, { env: {}, flags: { 'rpc-endpoints': endpoints.rpc, 'data-dir': 'memory', port: '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE), 'planner-id': 'bench', 'metrics-interval': '60000', 'log-level': 'error',
      // Arbitrage is sized to the capital it has (issue 27): the simulator's flash-loan reserves, as a deployment configures them.
      'flash-loan-reserves': sim.chain.genesis.lending.reserves.map((r) => r.reserve).join(',') } });
  let app: Awaited<ReturnType<typeof createPlannerApp>> | undefined;
  try {
    app = await createPlannerApp(loaded, { logger: createLogger({ name: 'bench', level: 'silent' }), pools: sim.chain.pools().map((p) => p.address) });
    await app.start();
    const js = nc.jetstream();
    const ours = new LatencyRecorder();
    let pending: (() => void) | undefined;
    const sub = nc.subscribe(`${prefix}trade.opportunities.arbitrage`, { callback: () => pending?.() });
    for (let i = 0; i < PROBES; i++) {
      const done = withinProbeLimit(new Promise<void>((r) => (pending = r)), i);
      const event = { version: 1 as const, id: `bench-${i}`, type: 'pool_update' as const, protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot().toString(), data: {} };
      const t = process.hrtime.bigint();
      await js.publish(marketEventSubject(pool.dex, 'pool_update', prefix), encodeMarketEvent(event), { msgID: event.id });
      await done;
      ours.recordNs(process.hrtime.bigint() - t);
    }
    sub.unsubscribe();
    // baseline: bare relay
    const jsm = await nc.jetstreamManager();
    await ensurePlatformStreams(jsm, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await ensureConsumer(jsm, platformConsumerSpec(`${prefix}MARKET_EVENTS`, 'bare', `${prefix}market.events.bare.>`));
    const consumer = await (await js.consumers.get(`${prefix}MARKET_EVENTS`, 'bare')).consume({ max_messages: 100 });
    const relay = (async () => {
      for await (const m of consumer) {
        await js.publish(`${prefix}trade.opportunities.bare`, m.data);
        m.ack();
      }
    })();
    const bare = new LatencyRecorder();
    const bareSub = nc.subscribe(`${prefix}trade.opportunities.bare`, { callback: () => pending?.() });
    const bytes = encodeMarketEvent({ version: 1, id: 'x', type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: 0, slot: '1', data: {} });
    for (let i = 0; i < PROBES; i++) {
      const done = new Promise<void>((r) => (pending = r));
      const t = process.hrtime.bigint();
      await js.publish(`${prefix}market.events.bare.pool_update`, bytes);
      await done;
      bare.recordNs(process.hrtime.bigint() - t);
    }
    bareSub.unsubscribe();
    await consumer.close();
    await relay;
    const s = ours.summary();
    const b = bare.summary();
    return [
      p99Figure({
        name: 'market event → opportunity published (JetStream, planner, RPC re-read, search), p99',
        unit: 'ms',
        ours: s,
        baseline: { name: 'bare JetStream relay (publish → pull consumer → publish → subscriber), p99', p99Us: b.p99Us },
        goal: 'p99 < 10 ms',
        goalUs: 10_000,
      }),
    ];
  } finally {
    await app?.close();
    await deleteStreams(nc, streams);
    await nc.close();
    await sim.close();
  }
}

export const plannerSuite: Suite = {
  name: 'planner',
  description: 'arbitrage search over 1,000 pools vs a naive size grid; market event → opportunity p99 vs a bare JetStream relay',
  async run() {
    return [...(await searchFigures()), ...(await latencyFigures())];
  },
};
