/**
 * Paper trading inside `tidepool start` (`npm start`): the arbitrage planner and the executor in
 * paper mode, so a newcomer sees opportunities and paper trades appear with no server to install.
 *
 * `npm start` runs no message bus, so the two are joined in the process instead of through
 * TRADE_OPPORTUNITIES: every `paper.interval` the monitored pools are read over the simulator's
 * JSON-RPC (the planner's `PlannerPools`), the arbitrage planner sweeps every cycle
 * (`ArbitragePlanner.evaluateAll`, the planner's own settings and profit rule), and each opportunity
 * goes to the same `ExecutorService` `tidepool executor --paper` runs: route re-quoted on the pools
 * read again, paper fill with the real path's fees and tip, a `trades` row with status `paper` and
 * its `trade_routes` in the embedded database. Results are kept in memory (`/stats`) and logged;
 * the executor's /health, /ready, /metrics and /stats are on `paper.port` (8085).
 */

import { Registry } from 'prom-client';

import { setting, types } from '../config/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { ArbitragePlanner, ConfiguredFunding, DEFAULT_ARBITRAGE_SETTINGS } from '../planner/index.js';
import { readAccountsOf } from '../lending/index.js';
import { ChainClient, AccountFetcher, RpcClient, sharedAbortController } from '../rpc/index.js';
import { ExecutorMetrics, ExecutorService, FlashLoans, RoutePools, TradeStore } from '../executor/index.js';
import { MIN_TIP } from '../messages/index.js';
import { PlannerPools } from '../trading/index.js';
import { type SqlClient } from '../state/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { EXECUTOR_PORT } from './executor-app.js';
import { ServiceHost, sendJson } from './service-host.js';

export const startPaperTradingSchema = {
  'paper.enabled': setting({ description: 'run the arbitrage planner and a paper executor in the process (trades with status paper, nothing sent)', parse: types.bool(), default: true, env: 'START_PAPER_TRADING', flag: 'paper-trading' }),
  'paper.port': setting({ description: 'HTTP port of the paper executor: /health, /ready, /metrics, /stats', parse: types.int({ min: 0, max: 65_535 }), default: EXECUTOR_PORT, env: 'EXECUTOR_PORT', flag: 'executor-port' }),
  'paper.interval': setting({ description: 'time between two sweeps of the arbitrage planner over the monitored pools', parse: types.duration({ min: 100 }), default: 2_000, env: 'PAPER_SWEEP_INTERVAL', flag: 'paper-interval' }),
};

export interface StartPaperTradingOptions {
  rpcUrl: string;
  pools: readonly string[];
  /** Flash-loan reserves (the simulator's): the planner borrows from them, the executor wraps the trades in their loans. */
  flashLoanReserves?: readonly string[];
  /** The embedded database, once open (undefined: paper trading stays off). */
  database: Promise<SqlClient | undefined>;
  host: string;
  port: number;
  intervalMs: number;
  logger: Logger;
}

export interface StartPaperTrading {
  readonly url: string;
  readonly service: ExecutorService;
  close(): Promise<void>;
}

export async function startPaperTrading(o: StartPaperTradingOptions): Promise<StartPaperTrading> {
  const rpc = new RpcClient({ endpoints: [o.rpcUrl] });
  const chain = new ChainClient({ url: o.rpcUrl });
  const decoders = createDecoderRegistry();
  const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: decoders, readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
  const plannerPools = new PlannerPools(loader);
  const reserves = o.flashLoanReserves ?? [];
  const funding = new ConfiguredFunding({ reserves: { addresses: reserves, read: readAccountsOf(rpc) }, mints: DEFAULT_ARBITRAGE_SETTINGS.baseMints });
  const planner = new ArbitragePlanner(plannerPools.cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'start-arbitrage', opportunityTtlMs: 10_000 }, Date.now, funding);
  plannerPools.join(planner);
  const registry = new Registry();
  registry.setDefaultLabels({ executor: 'start-paper' });
  const metrics = new ExecutorMetrics(registry);
  const log = o.logger;
  let db: SqlClient | undefined;
  let service: ExecutorService | undefined;
  let opportunities = 0;
  const dbReady = o.database.then((opened) => (db = opened));

  // The executor's ops port, as `tidepool executor` serves it (/stats included); the engine's own
  // process owns the signals and the bus, so the host here has only the port.
  const host = new ServiceHost({
    service: 'executor',
    logger: log,
    registry,
    http: { host: o.host, port: o.port, portSetting: 'paper.port (EXECUTOR_PORT, --executor-port)' },
    ready: async () => ({ ok: service !== undefined, detail: { database: db !== undefined } }),
  });
  host.route({ method: 'GET', path: '/stats', handle: (_req, res) => sendJson(res, 200, { executorId: 'start-paper', paper: true, opportunitiesFound: opportunities, ...(service?.stats ?? { waiting: 'for the embedded database' }) }) });
  const { http: url } = await host.start();

  let stopped = false;
  let stop: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => (stop = resolve));
  // Aborted at close: a sweep's pool reads stop at once instead of holding the close.
  const halt = sharedAbortController();
  const sweep = async (): Promise<void> => {
    const s = service!;
    await funding.refresh();
    const failed = await plannerPools.refresh(o.pools, halt.signal);
    if (failed.size > 0) log.debug({ failed: failed.size }, 'pools not read this sweep');
    for (const op of planner.evaluateAll()) {
      if (stopped) return;
      opportunities++;
      const outcome = await s.handle(op);
      if (outcome.kind === 'traded') log.info({ tradeId: outcome.result.tradeId, profit: outcome.result.actualProfit?.toString(), fees: outcome.result.fees.toString(), tip: outcome.result.tip.toString() }, 'paper trade');
    }
  };
  const loop = (async (): Promise<void> => {
    await Promise.race([dbReady, stopping]);
    if (db === undefined || stopped) return;
    service = new ExecutorService({
      settings: {
        executorId: 'start-paper',
        paper: true,
        maxConcurrentTrades: 1,
        maxStateAgeMs: 10_000,
        maxSlotLag: 150n,
        minProfit: DEFAULT_ARBITRAGE_SETTINGS.minProfitThreshold,
        computeUnitPriceMicroLamports: 0n,
        defaultTip: MIN_TIP,
        slippageBps: 0,
        busyRetryMs: 500,
      },
      trades: new TradeStore(db),
      pools: new RoutePools(plannerPools, decoders),
      chain,
      metrics,
      results: { publish: () => Promise.resolve() },
      flashLoans: await FlashLoans.load(readAccountsOf(rpc), reserves),
      logger: log,
    });
    service.startMetricsRows(10_000);
    while (!stopped) {
      try {
        await sweep();
      } catch (err) {
        if (stopped) break;
        log.warn({ err: (err as Error).message }, 'paper trading sweep failed');
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, o.intervalMs))), stopping]);
      clearTimeout(timer);
    }
  })();

  return {
    url: url!,
    get service() {
      return service!;
    },
    async close() {
      stopped = true;
      stop();
      halt.abort(new TpError(ErrorCode.Aborted, 'paper trading: closed', { context: { reason: 'closed' } }));
      await loop.catch(() => undefined);
      await service?.close();
      await host.close();
      await rpc.close();
      await chain.close();
    },
  };
}
