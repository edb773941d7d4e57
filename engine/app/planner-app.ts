/**
 * `tidepool planner --strategy arbitrage|grid|dca` (spec 03 planners): one process runs the
 * enabled strategy_configs rows of the strategies asked for.
 *
 *   start: migrate/open the database and key space; read strategy_configs; read the monitored pools
 *          from RPC; create the platform streams, the dead-letter stream and the durable consumer
 *          `planner_<plannerId>` on market.events.*.pool_update (explicit ack, ack wait 30 s)
 *          with the signal strategy: the durable consumer `planner_<plannerId>_signals` on signals.>
 *          (stream SIGNALS)
 *   run:   PlannerService per message (engine/planner/planner-service.ts); dead-letter after
 *          5 failed deliveries; a planner_metrics row every metricsInterval; strategy_configs
 *          re-read every strategyReloadInterval (StrategyConfigWatcher: `tidepool strategies`)
 *   host:  assembled by the ServiceHost (service-host.ts): the bus (5 s start wait), the
 *          `system:health:planner` heartbeat, the close stack
 *   HTTP:  GET /health, GET /ready (bus, database, key space), GET /metrics on planner.port (8084);
 *          POST /signals: a TradeSignal (JSON), checked and published on signals.<source>, where the
 *          consumer above takes it like any other (JWT bearer auth as the other write endpoints:
 *          on unless the port is bound to loopback, TIDEPOOL_AUTH);
 *          GET, POST /strategies, GET, PATCH, DELETE /strategies/{id}: the strategies, managed through
 *          StrategyAdmin as `tidepool strategies` does (planner-strategy-routes.ts; same JWT auth)
 */
import type { JsMsg, NatsConnection } from 'nats';
import type { Registry } from 'prom-client';

import { authSchema, createHttpAuth, type HttpAuthorizer } from '../auth/index.js';
import { DeadLetterConsumer, PlatformStream, createDeadLetterMetrics, durableNameOf, ensureConsumer, ensurePlatformBus, platformConsumerSpec, streamSizeSchema } from '../bus/index.js';
import { busAuthOf, busAuthSchema, heapProfileSchema, httpLimitsOf, httpServerSchema, setting, type LoadedConfig } from '../config/index.js';
import { duration, flashLoanSchema, int, oneOf, str, uniqueList } from '../config/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { ArbitrageStrategy, ConfiguredFunding, DcaStrategy, FUNDING_REFRESH_MS, arbitrageSettingsOf, refreshFundingEvery, GridStrategy, OpportunityPublisher, PlannerMetrics, PlannerService, RouteTemplateWriter, SignalStrategy, StrategyAdmin, StrategyConfigWatcher, StrategyStore, priceOf, defaultArbitrageParameters, type PlannerStrategy, type StrategyConfigRow } from '../planner/index.js';
import { PlannerPools } from '../trading/index.js';
import { databaseSchema, openPlatformState, redisSchema, type PlatformState } from '../state/index.js';
import { decodeExecutionResult, decodeMarketEvent, decodeTradeSignal, executionResultFilter, STRATEGIES, type Strategy } from '../messages/index.js';
import { readLimitedBody } from '../scanner/index.js';
import { SignalPublisher } from '../signals/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { readAccountsOf } from '../lending/index.js';
import { scannerSchema } from '../scanner/index.js';
import { addStrategyRoutes } from './planner-strategy-routes.js';
import { ServiceHost, sendJson, type ServiceHostOptions } from './service-host.js';

export const plannerSchema = {
  'pools.monitored': scannerSchema['pools.monitored'],
  'pools.file': scannerSchema['pools.file'],
  'bus.servers': scannerSchema['bus.servers'],
  ...busAuthSchema,
  ...streamSizeSchema,
  'rpc.endpoints': scannerSchema['rpc.endpoints'],
  'metrics.logLevel': scannerSchema['metrics.logLevel'],
  ...databaseSchema,
  ...redisSchema,
  'planner.strategies': setting({ description: 'strategies this process runs (their enabled strategy_configs rows): arbitrage, grid, dca, signal', parse: uniqueList(oneOf(STRATEGIES), { min: 1 }), default: ['arbitrage'] as Strategy[], env: 'PLANNER_STRATEGIES', flag: 'strategy' }),
  'planner.id': setting({ description: 'planner id: planner_metrics.planner_id and the durable consumer planner_<id> (replicas with one id share the events)', parse: str({ nonEmpty: true }), default: 'planner-1', env: 'PLANNER_ID', flag: 'planner-id' }),
  'planner.host': setting({ description: 'bind address of the probes and /metrics', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'PLANNER_HOST', flag: 'host' }),
  'planner.port': setting({ description: 'HTTP port: /health, /ready, /metrics, POST /signals, /strategies', parse: int({ min: 0, max: 65_535 }), default: 8084, env: 'PLANNER_PORT', flag: 'port' }),
  'planner.strategyReloadInterval': setting({ description: 'time between two reads of strategy_configs: a strategy added, paused, resumed or removed runs (or stops) within it', parse: duration({ min: 100 }), default: 2_000, env: 'PLANNER_STRATEGY_RELOAD_INTERVAL', flag: 'strategy-reload-interval' }),
  'planner.metricsInterval': setting({ description: 'time between two planner_metrics rows', parse: duration({ min: 100 }), default: 10_000, env: 'PLANNER_METRICS_INTERVAL', flag: 'metrics-interval' }),
  ...authSchema,
  ...httpServerSchema,
  ...heapProfileSchema,
  ...flashLoanSchema,
  'planner.subjectPrefix': setting({ description: 'prefix in front of every stream name and subject (tests; empty in deployments)', parse: str(), default: '', env: 'PLANNER_SUBJECT_PREFIX', flag: 'subject-prefix' }),
};
export type PlannerConfig = { [K in keyof typeof plannerSchema]: ReturnType<(typeof plannerSchema)[K]['parse']> };

/** Builds the strategy of one row (grid and DCA plug in here). */
export type StrategyFactory = (row: StrategyConfigRow, ctx: { pools: PlannerPools; state: PlatformState; now: () => number; metrics: PlannerMetrics }) => Promise<PlannerStrategy> | PlannerStrategy;

/** Bytes of a POST /signals body: a TradeSignal is well under 4 KiB with its details. */
export const MAX_SIGNAL_BODY_BYTES = 64 * 1024;

export interface PlannerAppOptions {
  logger: Logger;
  pools: readonly string[];
  /** Factories per strategy type, over the built-in ones (arbitrage, grid, dca). */
  factories?: Partial<Record<Strategy, StrategyFactory>>;
  now?: () => number;
  /** Redelivery delay after a failed message, ms (default the dead-letter helper's 1 s; tests shorten it). */
  retryDelayMs?: number;
  /** What cancels the start (ServiceHostOptions.startShutdown); default the process's SIGTERM, SIGINT, SIGHUP or its parent gone. */
  startShutdown?: ServiceHostOptions['startShutdown'];
}

export interface PlannerApp {
  /** The bus, the ops port (probes, metrics, POST /signals, /strategies), the heartbeat and the close stack. */
  readonly host: ServiceHost;
  readonly service: PlannerService;
  readonly strategies: readonly PlannerStrategy[];
  readonly pools: PlannerPools;
  readonly state: PlatformState;
  readonly registry: Registry;
  start(): Promise<{ http: string }>;
  close(): Promise<void>;
}

export async function createPlannerApp(loaded: LoadedConfig<typeof plannerSchema>, options: PlannerAppOptions): Promise<PlannerApp> {
  const config = loaded.values as PlannerConfig;
  const log = options.logger;
  const now = options.now ?? Date.now;
  const prefix = config['planner.subjectPrefix'];
  const authorizeSignals: HttpAuthorizer | undefined = createHttpAuth(config, config['planner.host'], 'planner.host');
  let state: PlatformState | undefined;
  return ServiceHost.assemble(
    {
      service: 'planner',
      logger: log,
      ...(options.startShutdown === undefined ? {} : { startShutdown: options.startShutdown }),
      heapProfile: config['debug.heapProfile'],
      bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: `tidepool-planner-${config['planner.id']}` },
      http: { host: config['planner.host'], port: config['planner.port'], portSetting: 'planner.port (PLANNER_PORT, --port)', limits: httpLimitsOf(config), ...(authorizeSignals === undefined ? {} : { authorize: authorizeSignals }) },
      ready: async () => {
        const dependencies = (await state?.dependencyStatus()) ?? [];
        return { ok: state !== undefined && dependencies.every((d) => d.ok), detail: { dependencies } };
      },
    },
    async (host, signal) => {
      // Every start wait ends at a shutdown (host.signal): the build then closes what it opened.
      const opened = await host.open('platform state', openPlatformState(config), (s) => s.close());
      state = opened;
      host.heartbeatTo(opened.keys);
      const rpc = new RpcClient({ endpoints: [...config['rpc.endpoints']] });
      host.onClose('rpc', () => rpc.close());
      // readMints + an epoch clock: a pool of a Token-2022 mint with transfer fees is read (and kept out of arbitrage), not refused.
      const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry(), readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
      const pools = new PlannerPools(loader, { now });
      const store = new StrategyStore(opened.db);
      const registry = host.registry;
      const metrics = new PlannerMetrics(registry);
      const rows = await host.wait(store.forPlanner(config['planner.strategies'], defaultArbitrageParameters));
      // Arbitrage capital (issue 27): flash loans where a reserve is configured, else the free worker balances.
      const mints = [...new Set(rows.filter((r) => r.strategyType === 'arbitrage').flatMap((r) => arbitrageSettingsOf(r.id, r.parameters).baseMints))];
      const funding = new ConfiguredFunding({ reserves: { addresses: config['flashLoan.reserves'], read: readAccountsOf(rpc) }, wallets: { db: opened.db, keys: opened.keys }, mints });
      await host.open('funding refresh', refreshFundingEvery(funding, FUNDING_REFRESH_MS, (err) => log.warn({ err: (err as Error).message }, 'arbitrage funding not refreshed')), (stop) => stop());
      const factories: Partial<Record<Strategy, StrategyFactory>> = {
        arbitrage: (row, ctx) => new ArbitrageStrategy(row.id, row.parameters, ctx.pools, ctx.now, funding),
        grid: (row, ctx) => new GridStrategy(row.id, row.parameters, { pools: ctx.pools, keys: ctx.state.keys, db: ctx.state.db, now: ctx.now }),
        dca: (row, ctx) => new DcaStrategy(row.id, row.parameters, { pools: ctx.pools, keys: ctx.state.keys, now: ctx.now }),
        signal: (row, ctx) =>
          new SignalStrategy(row.id, row.parameters, { pools: ctx.pools, keys: ctx.state.keys, now: ctx.now, onDecision: (d) => ctx.metrics.signalDecisions.inc({ action: d.action, reason: d.reason }) }),
        ...options.factories,
      };
      const build = async (row: StrategyConfigRow): Promise<PlannerStrategy> => {
        const factory = factories[row.strategyType];
        if (factory === undefined) throw new TpError(ErrorCode.ConfigInvalid, `strategy ${row.strategyType} is not built into this planner`, { context: { setting: 'planner.strategies' } });
        return factory(row, { pools, state: opened, now, metrics });
      };
      const strategies: PlannerStrategy[] = [];
      for (const row of rows) strategies.push(await host.wait(build(row)));
      const failed = await pools.refresh(options.pools, signal);
      for (const [address, reason] of failed) log.warn({ pool: address, reason }, 'monitored pool not read at start');

      const bus = await host.openBus();
      const nc: NatsConnection = bus.connection!;
      const jsm = await host.wait(ensurePlatformBus(nc, { prefix, maxBytesScale: config['bus.streamMaxBytesScale'] }));
      host.publishMetrics({ prefix });
      const stream = `${prefix}${PlatformStream.MarketEvents}`;
      const consumerName = durableNameOf('planner', config['planner.id']);
      await host.wait(ensureConsumer(jsm, platformConsumerSpec(stream, consumerName, `${prefix}market.events.*.pool_update`)));
      const takesSignals = strategies.some((s) => s.onSignal !== undefined);
      const signalStream = `${prefix}${PlatformStream.Signals}`;
      const signalConsumer = `${consumerName}_signals`;
      if (takesSignals) await host.wait(ensureConsumer(jsm, platformConsumerSpec(signalStream, signalConsumer, `${prefix}signals.>`)));
      // Order reconciliation (grid, DCA): the executors' results come back on EXECUTION_ORDERS
      // (results only: the requests beside them, execution.orders.request.*, are not the planner's).
      const executionStream = `${prefix}${PlatformStream.ExecutionOrders}`;
      const executionConsumer = `${consumerName}_executions`;
      await host.wait(ensureConsumer(jsm, platformConsumerSpec(executionStream, executionConsumer, executionResultFilter(prefix))));
      const signalPublisher = new SignalPublisher(nc.jetstream(), prefix);
      // Route templates (route_template:{hash}) from this loader's plans: an executor's first read of a published route is one round.
      const routeTemplates = new RouteTemplateWriter({ keys: opened.keys, planned: (pool) => loader.plannedAccounts(pool), metrics, logger: log.child({ component: 'route-templates' }), now });
      const service = new PlannerService({ plannerId: config['planner.id'], strategies, pools, publisher: new OpportunityPublisher(nc.jetstream(), prefix), metrics, store, routeTemplates, logger: log.child({ component: 'planner' }), now });
      host.onClose('planner service', () => service.close());
      const watcher = new StrategyConfigWatcher({ store, types: config['planner.strategies'], initial: rows.map((row, i) => ({ row, strategy: strategies[i]! })), build, apply: (next) => service.replaceStrategies(next), intervalMs: config['planner.strategyReloadInterval'], logger: log.child({ component: 'strategies' }) });
      host.onClose('strategy watcher', () => watcher.close());
      const dlqMetrics = createDeadLetterMetrics(registry);

      /** POST /signals (auth: the host's authorizer): 202 with where the signal was stored; 400 for a body that is not a TradeSignal. */
      host.route({
        method: 'POST',
        path: '/signals',
        auth: true,
        handle: async (req, res) => {
          const body = await readLimitedBody(req, MAX_SIGNAL_BODY_BYTES);
          const signal = decodeTradeSignal(body);
          const stored = await signalPublisher.publish(signal);
          sendJson(res, 202, { id: signal.id, subject: stored.subject, seq: stored.seq, duplicate: stored.duplicate, taken: takesSignals });
        },
      });

      addStrategyRoutes(
        host,
        new StrategyAdmin(opened.db, {
          keys: opened.keys,
          price: (address, token) => {
            const loaded = pools.loaded(address);
            return loaded === undefined ? undefined : priceOf(loaded, token);
          },
        }),
        () => new Set(service.strategies.map((s) => s.id)),
      );

      const app: PlannerApp = {
        host,
        service,
        strategies,
        pools,
        state: opened,
        registry,
        async start() {
          /** A dead-letter consumer of the planner's, on the close stack (a shutdown ends its start). */
          const consume = (what: string, on: { stream: string; consumer: string; component: string }, handler: (msg: JsMsg) => Promise<void>): Promise<DeadLetterConsumer> =>
            host.open(
              what,
              DeadLetterConsumer.start({
                nc,
                stream: on.stream,
                consumer: on.consumer,
                metrics: dlqMetrics,
                subjectRoot: `${prefix}dlq`,
                ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
                logger: log.child({ component: on.component }),
                handler,
              }),
              (c) => c.stop(),
            );
          await consume('market events consumer', { stream, consumer: consumerName, component: 'consumer' }, async (msg) => {
            await service.handle(decodeMarketEvent(msg.data), now());
          });
          await consume('executions consumer', { stream: executionStream, consumer: executionConsumer, component: 'execution-consumer' }, async (msg) => {
            await service.handleExecution(decodeExecutionResult(msg.data));
          });
          if (takesSignals) {
            await consume('signals consumer', { stream: signalStream, consumer: signalConsumer, component: 'signal-consumer' }, async (msg) => {
              await service.handleSignal(decodeTradeSignal(msg.data), now());
            });
          }
          service.startMetricsRows(config['planner.metricsInterval']);
          watcher.start();
          const { http } = await host.start();
          return { http: http! };
        },
        close: () => host.close(),
      };
      return app;
    },
  );
}
