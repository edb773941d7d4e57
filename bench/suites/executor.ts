/**
 * `executor`: 1,000 planted opportunities through `tidepool executor` on the real path, on the
 * simulator (fast slots, real swaps), the local NATS, Redis and PostgreSQL.
 *
 * The simulator runs in its own process (the built `tidepool sim`, engine/executor/testing/
 * sim-process.ts), so its slot work does not share the executor's event loop; worker wallets come
 * from the seed's genesis, opportunities and the baseline's swaps from its JSON-RPC.
 *
 * Opportunities: DCA sells of 0.001 wrapped SOL on an AMM pool (orders: the direct path), each
 * computed on the chain's state just before it is published, kept 8 in flight (a new one when a
 * result arrives), so the figure is the executor's own work, not a queue. 8 worker wallets (genesis
 * traders), maxConcurrentTrades 8.
 *
 * Figures:
 * - opportunity received → transaction submitted (the executor's ExecutionResult latency: the
 *   consumer handed it the message → the RPC node accepted the send), p50/p99 from an HDR histogram;
 *   in between: the route's pools read again over RPC with, beside it, the trade lookup and the
 *   wallet lock (balances kept by the executor, not read), the re-quote, the signed swap (the
 *   blockhash kept warm), the pending row and its routes in PostgreSQL, the send. The note gives
 *   each stage's p50/p99 (TradeStage, timed by the service), what the slowest 2% spent in each, and
 *   the event loop delay of this process (the executor's). Baseline, same run: a bare
 *   `sendTransaction` of a prebuilt signed swap to the same simulator process, from this process,
 *   after the trades. Spec 03: < 5 s p99; goal < 50 ms. Status polls every slot (50 ms).
 * - the route pools' re-read (a step of the above) against a bare getMultipleAccounts of the same
 *   accounts every 20 ms while the trades run (same load); the same read after the trades, on a
 *   quiet simulator, in the note.
 * - success rate: landed / submitted (spec 03: > 95%).
 * The box is shared: the figures are indicative.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { connect } from 'nats';

import { createExecutorApp, executorSchema } from '../../engine/app/executor-app.js';
import { TEST_PASSPHRASE, importWorkers } from '../../engine/app/testing/executor.js';
import { LOCAL_NATS_URL, TEST_STREAM_MAX_BYTES_SCALE, deleteStreams } from '../../engine/bus/testing/local-nats.js';
import { loadConfig } from '../../engine/config/loader.js';
import { createLogger } from '../../engine/obs/logger.js';
import { TEST_PG_ADMIN_URL, createServerDatabase } from '../../engine/state/db/testing.js';
import { ChainClient, RpcClient } from '../../engine/rpc/index.js';
import { routeTemplateHash } from '../../engine/state/index.js';
import { decodeExecutionResult, encodeTradeOpportunity, executionResultFilter, tradeOpportunitySubject, type ExecutionResult, type TradeOpportunity } from '../../engine/messages/index.js';
import { TradeStage } from '../../engine/executor/index.js';
import { spawnSimulator, type SimProcess } from '../../engine/executor/testing/sim-process.js';
import { SimRpcTrades } from '../../engine/executor/testing/sim-rpc-trades.js';
import { p99Figure, type Figure, type Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';
import { trackResource, trackedRedisPrefix, trackedStreamPrefix } from '../runner/resources.js';

const OPPORTUNITIES = Number(process.env.BENCH_EXECUTOR_OPPORTUNITIES ?? 1_000);
const IN_FLIGHT = 8;
const BARE_SENDS = 200;
const SLOT_MS = 50;

export const executorSuite: Suite = {
  name: 'executor',
  description: '1,000 planted opportunities through the executor (real path, simulator): received → submitted p50/p99 vs a bare sendTransaction; success rate',
  async run(): Promise<Figure[]> {
    // The child dies with the suite's process group however the suite ends; closed here when it ends normally or fails.
    const sim = await spawnSimulator({ slotMs: SLOT_MS });
    try {
      return await runOn(sim);
    } finally {
      await sim.close();
    }
  },
};

async function runOn(sim: SimProcess): Promise<Figure[]> {
  const { endpoints, genesis } = sim;
  const trades = new SimRpcTrades(endpoints.rpc, genesis);
  const nc = await connect({ servers: LOCAL_NATS_URL });
  const database = await createServerDatabase();
  trackResource({ kind: 'pg-database', name: new URL(database.url!).pathname.slice(1), adminUrl: TEST_PG_ADMIN_URL });
  const prefix = trackedStreamPrefix('BX', LOCAL_NATS_URL);
  const redisUrl = 'redis://127.0.0.1:6379';
  const streams = ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`);
  const loaded = loadConfig(executorSchema, {
    env: { TIDEPOOL_WALLET_PASSPHRASE: TEST_PASSPHRASE },
    flags: {
      'rpc-endpoints': endpoints.rpc,
      'database-url': database.url!,
      'redis-url': redisUrl,
      'redis-key-prefix': trackedRedisPrefix('bx', redisUrl),
      port: '0',
      'subject-prefix': prefix,
      'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE),
      'executor-id': 'bench',
      'block-engine-url': endpoints.http,
      'max-concurrent-trades': String(IN_FLIGHT),
      // The simulator's slot: the blockhash kept warm is read again every slot, as on a real chain.
      'blockhash-refresh': String(SLOT_MS),
      'metrics-interval': '60000',
      'log-level': 'error',
    },
  });
  // Each stage between received and submitted, timed by the service (TradeStage).
  const stages = new Map<TradeStage, LatencyRecorder>();
  const byTrade = new Map<string, Partial<Record<TradeStage, number>>>();
  const onStage = (stage: TradeStage, ms: number, tradeId: string): void => {
    let r = stages.get(stage);
    if (r === undefined) stages.set(stage, (r = new LatencyRecorder()));
    r.recordNs(ms * 1e6);
    let t = byTrade.get(tradeId);
    if (t === undefined) byTrade.set(tradeId, (t = {}));
    t[stage] = ms;
  };
  // The executor runs in this process: its event loop's stalls are this loop's.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const app = await createExecutorApp(loaded, { logger: createLogger({ name: 'bench', level: process.env.BENCH_EXECUTOR_LOG ?? 'silent' }), pollMs: SLOT_MS, onStage });
  const chain = new ChainClient({ url: endpoints.rpc });
  try {
    // The step of the pipeline that reads the route's pools again, timed around its call.
    const reread = new LatencyRecorder();
    const routePools = app.routePools;
    const refresh = routePools.refresh.bind(routePools);
    routePools.refresh = async (route) => {
      const t = process.hrtime.bigint();
      try {
        await refresh(route);
      } finally {
        reread.recordNs(process.hrtime.bigint() - t);
      }
    };
    await importWorkers(app.state.db, genesis.actors.traders.slice(2, 2 + IN_FLIGHT));
    await app.start();
    const results: ExecutionResult[] = [];
    let wake: (() => void) | undefined;
    const sub = nc.subscribe(executionResultFilter(prefix), {
      callback: (_err, m) => {
        results.push(decodeExecutionResult(m.data));
        wake?.();
      },
    });
    const js = nc.jetstream();
    let published = 0;
    let lastRoute: TradeOpportunity['route'] = [];
    const deadline = Date.now() + 100_000;
    // The re-read's baseline under the same load: a bare getMultipleAccounts of the route's accounts
    // every 20 ms while the trades run (from the first result on: the route's template names them).
    const bareReadDuring = new LatencyRecorder();
    let trading = true;
    const sampler = (async () => {
      while (trading && results.length === 0) await new Promise((r) => setTimeout(r, 20));
      const template = await app.state.keys.getRouteTemplate(routeTemplateHash(lastRoute));
      const accounts = [...new Set([...lastRoute.map((h) => h.pool), ...(template?.pools.flatMap((p) => p.accounts) ?? [])])];
      const reader = new RpcClient({ endpoints: [endpoints.rpc] });
      try {
        while (trading) {
          const t = process.hrtime.bigint();
          await reader.getMultipleAccounts(accounts);
          bareReadDuring.recordNs(process.hrtime.bigint() - t);
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await reader.close();
      }
    })();
    while (results.length < published || published < OPPORTUNITIES) {
      while (published < OPPORTUNITIES && published - results.length < IN_FLIGHT) {
        const op = await trades.orderOpportunity(1_000_000n);
        lastRoute = op.route;
        await js.publish(tradeOpportunitySubject(op.strategy, prefix), encodeTradeOpportunity(op), { msgID: op.id });
        published++;
      }
      if (Date.now() > deadline) break;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 200);
      });
    }
    sub.unsubscribe();
    loopDelay.disable();
    trading = false;
    await sampler;
    const ours = new LatencyRecorder();
    let submitted = 0;
    let landed = 0;
    for (const r of results) {
      if (r.latency.submitMs !== undefined) {
        submitted++;
        ours.recordNs(r.latency.submitMs * 1e6);
      }
      if (r.status === 'confirmed') landed++;
    }
    const skipped = Object.values(app.service.stats.skipped).reduce((a, b) => a + b, 0);
    const errors = new Map<string, number>();
    for (const r of results) if (r.error !== undefined) errors.set(r.error.slice(0, 140), (errors.get(r.error.slice(0, 140)) ?? 0) + 1);
    const errorText = [...errors].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([e, n]) => `${n}× ${e}`).join('; ');

    // Baseline: sendTransaction of prebuilt signed swaps (distinct amounts: distinct signatures).
    const trader = genesis.actors.traders[12]!;
    const prebuilt = await trades.swapTransactions(trader, Array.from({ length: BARE_SENDS }, (_, i) => 1_000_000n + BigInt(i)));
    const bare = new LatencyRecorder();
    for (const bytes of prebuilt) {
      const t = process.hrtime.bigint();
      await chain.sendTransaction(bytes, { skipPreflight: true });
      bare.recordNs(process.hrtime.bigint() - t);
    }
    // Baseline of the re-read: a bare getMultipleAccounts of the route's pool and every account its template names.
    const template = await app.state.keys.getRouteTemplate(routeTemplateHash(lastRoute));
    const keys = [...new Set([...lastRoute.map((h) => h.pool), ...(template?.pools.flatMap((p) => p.accounts) ?? [])])];
    const rpc = new RpcClient({ endpoints: [endpoints.rpc] });
    const bareRead = new LatencyRecorder();
    try {
      for (let i = 0; i < BARE_SENDS; i++) {
        const t = process.hrtime.bigint();
        await rpc.getMultipleAccounts(keys);
        bareRead.recordNs(process.hrtime.bigint() - t);
      }
    } finally {
      await rpc.close();
    }
    const s = ours.summary();
    const b = bare.summary();
    const rate = submitted === 0 ? 0 : landed / submitted;
    const r = reread.summary();
    const t = routePools.stats.templates;
    const d = bareReadDuring.summary();
    const steps = `route pools re-read p50/p99 ${(r.p50Us / 1000).toFixed(2)}/${(r.p99Us / 1000).toFixed(2)} ms over ${r.count} reads (route templates hit/miss/stale ${t.hit}/${t.miss}/${t.stale}); a bare getMultipleAccounts of the same accounts while the trades ran, p50/p99 ${(d.p50Us / 1000).toFixed(2)}/${(d.p99Us / 1000).toFixed(2)} ms over ${d.count}`;
    const stageText = Object.values(TradeStage)
      .filter((st) => stages.has(st))
      .map((st) => {
        const x = stages.get(st)!.summary();
        return `${st} ${(x.p50Us / 1000).toFixed(1)}/${(x.p99Us / 1000).toFixed(1)}`;
      })
      .join(', ');
    // The slowest 2% of trades: the mean of each stage in sequence, and what no stage accounts for.
    const slow = results.filter((x) => x.latency.submitMs !== undefined).sort((x, y) => y.latency.submitMs! - x.latency.submitMs!).slice(0, Math.max(1, Math.round(submitted / 50)));
    const sequence: TradeStage[] = [TradeStage.Semaphore, TradeStage.Pools, TradeStage.Requote, TradeStage.WalletWait, TradeStage.BlockhashWait, TradeStage.Build, TradeStage.Pending, TradeStage.Send];
    const mean = (f: (x: ExecutionResult) => number): string => (slow.reduce((a, x) => a + f(x), 0) / slow.length).toFixed(1);
    const stageOf = (x: ExecutionResult, st: TradeStage): number => byTrade.get(x.tradeId)?.[st] ?? 0;
    const tail = `slowest ${slow.length} (submit ≥ ${slow.at(-1)?.latency.submitMs ?? 0} ms) mean ms: total ${mean((x) => x.latency.submitMs!)}, ${sequence.map((st) => `${st} ${mean((x) => stageOf(x, st))}`).join(', ')}, rest ${mean((x) => x.latency.submitMs! - sequence.reduce((a, st) => a + stageOf(x, st), 0))}`;
    const eld = `event loop delay p50/p99/max ${(loopDelay.percentile(50) / 1e6).toFixed(1)}/${(loopDelay.percentile(99) / 1e6).toFixed(1)}/${(loopDelay.max / 1e6).toFixed(1)} ms`;
    const { deferred, received } = app.service.stats;
    const note = `${published} published, ${results.length} results, ${submitted} submitted, ${landed} landed, ${skipped} skipped, ${deferred} deferred, ${received} received; stages p50/p99 ms: ${stageText}; ${tail}; ${eld}; ${steps}; ms resolution (the result's timestamps)${errorText === '' ? '' : `; errors: ${errorText}`}`;
    return [
      p99Figure({
        name: `opportunity received → transaction submitted (direct path, ${IN_FLIGHT} in flight), p99`,
        unit: 'ms',
        ours: s,
        baseline: { name: 'bare sendTransaction of a prebuilt signed swap, p99', p99Us: b.p99Us },
        goal: 'p99 < 50 ms (spec 03: < 5 s)',
        goalUs: 50_000,
        note,
      }),
      p99Figure({
        name: 'route pools re-read before a trade (step of the above), p99',
        unit: 'ms',
        ours: r,
        // Under the same load: the bare read after the trades, on a quiet simulator, is in the note.
        baseline: { name: `bare getMultipleAccounts of the route's ${keys.length} accounts while the trades ran, p99`, p99Us: d.p99Us },
        goal: 'p99 ≤ 2× the bare getMultipleAccounts of its accounts',
        goalUs: 2 * d.p99Us,
        note: `${steps}; the bare read after the trades p50/p99 ${(bareRead.summary().p50Us / 1000).toFixed(2)}/${(bareRead.summary().p99Us / 1000).toFixed(2)} ms`,
      }),
      {
        name: 'success rate (landed / submitted)',
        unit: '%',
        value: rate * 100,
        higherIsBetter: true,
        baseline: { name: 'spec 03 target', value: 95 },
        goal: '≥ 95%',
        goalMet: rate >= 0.95,
        note,
      },
    ];
  } finally {
    await app.close();
    await chain.close();
    await trades.close();
    await deleteStreams(nc, streams);
    await nc.close();
    await database.drop();
  }
}
