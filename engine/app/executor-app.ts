/**
 * `tidepool executor [--paper]` (spec 03 executors): trade opportunities in, trades and results out.
 *
 *   start: migrate/open the database and key space; open the worker wallets' keys (real mode);
 *          create the platform streams, the dead-letter stream and the durable consumer
 *          `executor_<executorId>` on trade.opportunities.> (explicit ack, ack wait 30 s)
 *   run:   ExecutorService per message (engine/executor/executor-service.ts), up to
 *          maxConcurrentTrades at once; ack once the outcome is recorded; a message that keeps
 *          failing goes to the dead-letter stream after 5 deliveries; an opportunity that found
 *          every wallet busy comes back after busyRetry; an executor_metrics row every metricsInterval
 *   host:  assembled by the ServiceHost (service-host.ts): the bus (5 s start wait), the
 *          `system:health:executor` heartbeat, the close stack (consumer drained before the service)
 *   HTTP:  GET /health, GET /ready (bus, database, key space), GET /metrics, GET /stats on
 *          executor.port (8085)
 */
import type { NatsConnection } from 'nats';
import type { Registry } from 'prom-client';

import { DeadLetterConsumer, PlatformStream, createDeadLetterMetrics, durableNameOf, ensureConsumer, ensurePlatformBus, platformConsumerSpec, streamSizeSchema } from '../bus/index.js';
import { bool, busAuthOf, busAuthSchema, heapProfileSchema, httpLimitsOf, httpServerSchema, checkSharedState, deploymentHealth, deploymentSafetySchema, duration, flashLoanSchema, int, refuseLoopbackDefaults, setting, str, uniqueList, url, type LoadedConfig } from '../config/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import { BlockEngineClient, BundleSubmitter, RecentBlockhash, DirectSubmitter, ExecutorMetrics, ExecutorService, FlashLoans, RoutePools, TradeStore, WorkerWallets, fetchLanded, sumBalanceChanges, type BalanceChangesReader, type HandleOutcome, type Submitter, type TradeStageObserver } from '../executor/index.js';
import { OperatorLookupTables, ChainClient, AccountFetcher, RpcClient } from '../rpc/index.js';
import { type ExecutionPath, MAX_TIP, MIN_TIP, decodeTradeOpportunity } from '../messages/index.js';
import { PlannerPools } from '../trading/index.js';
import { readAccountsOf } from '../lending/index.js';
import { WalletManager, WalletPassphrase } from '../wallets/index.js';
import { databaseSchema, openPlatformState, redisSchema, walletSchema, type PlatformState } from '../state/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { scannerSchema } from '../scanner/index.js';
import { ServiceHost, sendJson } from './service-host.js';

export const EXECUTOR_PORT = 8085;

export const executorSchema = {
  'bus.servers': scannerSchema['bus.servers'],
  ...busAuthSchema,
  ...streamSizeSchema,
  'rpc.endpoints': scannerSchema['rpc.endpoints'],
  'metrics.logLevel': scannerSchema['metrics.logLevel'],
  ...databaseSchema,
  ...redisSchema,
  ...deploymentSafetySchema,
  ...httpServerSchema,
  ...heapProfileSchema,
  'wallets.passphrase': walletSchema['wallets.passphrase'],
  'wallets.keyFile': walletSchema['wallets.keyFile'],
  'executor.paper': setting({ description: 'paper trading: the same pipeline, fills computed on the live state, trades recorded as paper, nothing sent', parse: bool(), default: false, env: 'PAPER_TRADING', flag: 'paper' }),
  'executor.id': setting({ description: 'executor id: executor_metrics.executor_id, the metrics label `executor` and the durable consumer executor_<id> (replicas with one id share the opportunities)', parse: str({ nonEmpty: true }), default: 'executor-1', env: 'EXECUTOR_ID', flag: 'executor-id' }),
  'executor.maxConcurrentTrades': setting({ description: 'trades in flight at once (spec 03: 1 to 50)', parse: int({ min: 1, max: 50 }), default: 4, env: 'MAX_CONCURRENT_TRADES', flag: 'max-concurrent-trades' }),
  'executor.host': setting({ description: 'bind address of the probes, /metrics and /stats', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'EXECUTOR_HOST', flag: 'host' }),
  'executor.port': setting({ description: 'HTTP port: /health, /ready, /metrics, /stats', parse: int({ min: 0, max: 65_535 }), default: EXECUTOR_PORT, env: 'EXECUTOR_PORT', flag: 'port' }),
  'executor.metricsInterval': setting({ description: 'time between two executor_metrics rows', parse: duration({ min: 100 }), default: 10_000, env: 'EXECUTOR_METRICS_INTERVAL', flag: 'metrics-interval' }),
  'executor.maxStateAge': setting({ description: 'opportunities computed on a state older than this (stateAgeMs) are skipped', parse: duration({ min: 1 }), default: 10_000, env: 'EXECUTOR_MAX_STATE_AGE', flag: 'max-state-age' }),
  'executor.maxSlotLag': setting({ description: 'skipped when the route pools, read again, are this many slots past the opportunity\'s slot', parse: int({ min: 0 }), default: 150, env: 'EXECUTOR_MAX_SLOT_LAG', flag: 'max-slot-lag' }),
  'executor.minProfit': setting({ description: 'arbitrage: the re-quoted profit must exceed this (atoms of the profit mint, lamports for wrapped SOL)', parse: int({ min: 0 }), default: 10_000, env: 'EXECUTOR_MIN_PROFIT', flag: 'min-profit' }),
  'executor.computeUnitPrice': setting({ description: 'priority fee of the swap transaction, micro-lamports per compute unit', parse: int({ min: 0 }), default: 0, env: 'EXECUTOR_COMPUTE_UNIT_PRICE', flag: 'compute-unit-price' }),
  'executor.tip': setting({ description: 'bundle tip when the opportunity carries none, lamports (spec 03: 5000 to 6000)', parse: int({ min: Number(MIN_TIP), max: Number(MAX_TIP) }), default: Number(MIN_TIP), env: 'EXECUTOR_TIP', flag: 'tip' }),
  'executor.slippageBps': setting({ description: 'per hop slippage of the transaction\'s minimum outputs (0: exactly the pre-trade re-quote)', parse: int({ min: 0, max: 10_000 }), default: 0, env: 'EXECUTOR_SLIPPAGE_BPS', flag: 'slippage-bps' }),
  'executor.lookupTables': setting({ description: 'address lookup tables a route that does not fit a legacy transaction is compiled with (v0); tables you keep with the pools\' accounts', parse: uniqueList(str({ nonEmpty: true })), default: [] as string[], env: 'EXECUTOR_LOOKUP_TABLES', flag: 'lookup-tables' }),
  'executor.busyRetry': setting({ description: 'when every worker wallet is locked, the opportunity comes back after this', parse: duration({ min: 1 }), default: 500, env: 'EXECUTOR_BUSY_RETRY', flag: 'busy-retry' }),
  'executor.blockhashRefresh': setting({ description: 'real mode: how often the recent blockhash trades sign with is read again in the background (a slot; trades do not read it on their path)', parse: duration({ min: 10 }), default: 400, env: 'EXECUTOR_BLOCKHASH_REFRESH', flag: 'blockhash-refresh' }),
  'executor.blockEngineUrl': setting({ description: 'block engine (bundles): http(s)://host:port; the simulator serves one on its HTTP port', parse: url(), default: 'http://127.0.0.1:8890', env: 'BLOCK_ENGINE_URL', flag: 'block-engine-url' }),
  'executor.blockEngineUuid': setting({ description: 'block engine auth uuid (x-jito-auth), when it needs one', parse: str(), default: '', env: 'BLOCK_ENGINE_UUID', secret: true }),
  ...flashLoanSchema,
  'executor.subjectPrefix': setting({ description: 'prefix in front of every stream name and subject (tests; empty in deployments)', parse: str(), default: '', env: 'EXECUTOR_SUBJECT_PREFIX', flag: 'subject-prefix' }),
};
export type ExecutorConfig = { [K in keyof typeof executorSchema]: ReturnType<(typeof executorSchema)[K]['parse']> };

export interface ExecutorAppOptions {
  logger: Logger;
  now?: () => number;
  /** Redelivery delay after a failed message, ms (default the dead-letter helper's 1 s; tests shorten it). */
  retryDelayMs?: number;
  /** Replace the submission paths (tests); default the direct and bundle submitters. */
  submitters?: (chain: ChainClient) => Record<ExecutionPath, Submitter>;
  /** Wraps the database client (tests: a database that fails on demand). */
  wrapDb?: (state: PlatformState) => PlatformState['db'];
  /** Submitter poll interval, ms (default a slot, 400 ms). */
  pollMs?: number;
  /** Told how long each stage of a real trade took (the bench). */
  onStage?: TradeStageObserver;
  /** The blockhash kept warm (real mode): the oldest served, ms (default RecentBlockhash's). */
  blockhashMaxAgeMs?: number;
}

export interface ExecutorApp {
  /** The bus, the ops port (probes, metrics, GET /stats), the heartbeat and the close stack. */
  readonly host: ServiceHost;
  readonly service: ExecutorService;
  /** The route pools the service reads before a trade (their template counts; the bench times their reads). */
  readonly routePools: RoutePools;
  /** The worker wallets (real mode): their locks and the balances kept for them. */
  readonly wallets: WorkerWallets | undefined;
  readonly state: PlatformState;
  readonly registry: Registry;
  readonly config: ExecutorConfig;
  start(): Promise<{ http: string }>;
  close(): Promise<void>;
}

export async function createExecutorApp(loaded: LoadedConfig<typeof executorSchema>, options: ExecutorAppOptions): Promise<ExecutorApp> {
  const config = loaded.values as ExecutorConfig;
  const log = options.logger;
  const prefix = config['executor.subjectPrefix'];
  const paper = config['executor.paper'];
  // Real mode moves money: shared state, and no simulator default next to a real chain.
  const safety = paper ? undefined : checkSharedState('the executor (real mode)', config);
  if (!paper) refuseLoopbackDefaults(executorSchema, loaded, ['rpc.endpoints'], ['executor.blockEngineUrl']);
  let opened: PlatformState | undefined;
  return ServiceHost.assemble(
    {
      service: 'executor',
      logger: log,
      heapProfile: config['debug.heapProfile'],
      bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: `tidepool-executor-${config['executor.id']}` },
      http: { host: config['executor.host'], port: config['executor.port'], portSetting: 'executor.port (EXECUTOR_PORT, --port)', limits: httpLimitsOf(config) },
      ...(safety === undefined ? {} : { health: () => deploymentHealth(safety) }),
      ready: async () => {
        const dependencies = (await opened?.dependencyStatus()) ?? [];
        return { ok: opened !== undefined && dependencies.every((d) => d.ok), detail: { dependencies } };
      },
    },
    async (host) => {
      // Every start wait ends at a shutdown (host.signal): the build then closes what it opened.
      // A database connection for each trade in flight (one query at a time each) and the wallet list
      // or metrics row beside them, open from the start and kept when idle (warm, in start): no trade
      // waits for a connection to be opened (issue 23; capped by the pool's size).
      const state = await host.open('platform state', openPlatformState(config, { minConnections: config['executor.maxConcurrentTrades'] + 2 }), (s) => s.close());
      opened = state;
      host.heartbeatTo(state.keys);
      const rpc = new RpcClient({ endpoints: [...config['rpc.endpoints']] });
      host.onClose('rpc', () => rpc.close());
      // Every endpoint, with failover (issue 24 item 4): a send or a status poll no node answers goes to the next.
      // A connection for every call that can be in flight at once, so that a trade's send never waits
      // for one behind the status polls (issue 23): per trade its send and one poll (a status, a block
      // height or getTransaction, one after the other), plus the blockhash kept warm and a wallet's reads.
      const chain = new ChainClient({ endpoints: config['rpc.endpoints'], connections: 2 * config['executor.maxConcurrentTrades'] + 4 });
      host.onClose('chain', () => chain.close());
      const db = options.wrapDb?.(state) ?? state.db;
      const registry = host.registry;
      registry.setDefaultLabels({ executor: config['executor.id'] });
      const metrics = new ExecutorMetrics(registry);
      const registryOfDex = createDecoderRegistry();
      const fetcher = new AccountFetcher(rpc);
      const loader = new RpcPoolLoader({ fetcher, registry: registryOfDex, readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
      // Route templates (route_template:{hash}): a route's first read here is one getMultipleAccounts.
      const pools = new RoutePools(new PlannerPools(loader, { ...(options.now === undefined ? {} : { now: options.now }) }), registryOfDex, {
        loader,
        templates: state.keys,
        metrics,
        logger: log.child({ component: 'route-pools' }),
        ...(options.now === undefined ? {} : { now: options.now }),
      });
      host.onClose('route templates', () => pools.settled());
      const flashLoans = await host.wait(FlashLoans.load(readAccountsOf(rpc), config['flashLoan.reserves']));

      let wallets: WorkerWallets | undefined;
      let submitters: Record<ExecutionPath, Submitter> | undefined;
      let balanceChanges: BalanceChangesReader | undefined;
      let blockhashes: RecentBlockhash | undefined;
      if (!paper) {
        blockhashes = new RecentBlockhash({ read: () => chain.getLatestBlockhash(), refreshMs: config['executor.blockhashRefresh'], ...(options.blockhashMaxAgeMs === undefined ? {} : { maxAgeMs: options.blockhashMaxAgeMs }) });
        host.onClose('recent blockhash', () => blockhashes?.close());
        const passphrase = WalletPassphrase.resolve({ passphrase: config['wallets.passphrase'], keyFile: config['wallets.keyFile'] });
        const manager = new WalletManager({ db, keys: state.keys, chain, passphrase, logger: log.child({ component: 'wallets' }) });
        wallets = new WorkerWallets({ wallets: manager, keys: state.keys, chain, logger: log.child({ component: 'wallets' }) });
        const pollMs = options.pollMs ?? 400;
        submitters = options.submitters?.(chain) ?? {
          direct: new DirectSubmitter({ chain, pollMs, logger: log.child({ component: 'direct' }) }),
          bundle: new BundleSubmitter({
            chain,
            blockEngine: new BlockEngineClient({ url: config['executor.blockEngineUrl'], ...(config['executor.blockEngineUuid'] === '' ? {} : { uuid: config['executor.blockEngineUuid'] }) }),
            pollMs,
            logger: log.child({ component: 'bundle' }),
          }),
        };
        balanceChanges = async (signature, owner, mints) => sumBalanceChanges([await fetchLanded(chain, signature, owner, { pollMs: 200, until: Date.now() + 10_000 })], mints);
      }

      const nc: NatsConnection = (await host.openBus()).connection!;
      const jsm = await host.wait(ensurePlatformBus(nc, { prefix, maxBytesScale: config['bus.streamMaxBytesScale'] }));
      host.publishMetrics({ prefix });
      const stream = `${prefix}${PlatformStream.TradeOpportunities}`;
      const consumerName = durableNameOf('executor', config['executor.id']);
      const concurrency = config['executor.maxConcurrentTrades'];
      await host.wait(ensureConsumer(jsm, platformConsumerSpec(stream, consumerName, `${prefix}trade.opportunities.>`, { maxAckPending: Math.max(100, concurrency * 4) })));

      const service = new ExecutorService({
        settings: {
          executorId: config['executor.id'],
          paper,
          maxConcurrentTrades: concurrency,
          maxStateAgeMs: config['executor.maxStateAge'],
          maxSlotLag: BigInt(config['executor.maxSlotLag']),
          minProfit: BigInt(config['executor.minProfit']),
          computeUnitPriceMicroLamports: BigInt(config['executor.computeUnitPrice']),
          defaultTip: BigInt(config['executor.tip']),
          slippageBps: config['executor.slippageBps'],
          busyRetryMs: config['executor.busyRetry'],
        },
        trades: new TradeStore(db),
        pools,
        chain,
        metrics,
        results: nc.jetstream(),
        subjectPrefix: prefix,
        ...(wallets === undefined ? {} : { wallets }),
        ...(submitters === undefined ? {} : { submitters }),
        ...(balanceChanges === undefined ? {} : { balanceChanges }),
        ...(blockhashes === undefined ? {} : { blockhashes }),
        flashLoans,
        lookupTables: new OperatorLookupTables({ reader: fetcher, addresses: config['executor.lookupTables'], logger: log.child({ component: 'lookup-tables' }) }),
        logger: log.child({ component: 'executor' }),
        ...(options.now === undefined ? {} : { now: options.now }),
        ...(options.onStage === undefined ? {} : { onStage: options.onStage }),
        // The host's close aborts the submissions in flight before the consumer's drain waits for them.
        signal: host.signal,
      });
      host.onClose('executor service', () => service.close());
      const dlqMetrics = createDeadLetterMetrics(registry);
      const now = options.now ?? Date.now;
      host.route({ method: 'GET', path: '/stats', handle: (_req, res) => sendJson(res, 200, { executorId: config['executor.id'], paper, maxConcurrentTrades: concurrency, ...service.stats }) });

      const app: ExecutorApp = {
        host,
        service,
        routePools: pools,
        wallets,
        state,
        registry,
        config,
        async start() {
          if (wallets !== undefined) log.info({ wallets: await host.wait(wallets.warm()) }, 'worker wallet keys opened');
          await host.wait(state.db.warm?.() ?? Promise.resolve());
          await blockhashes?.start();
          // Drain on close: stop pulling, let the trades in flight finish and be recorded, then close.
          await host.open('opportunities consumer', DeadLetterConsumer.start({
            nc,
            stream,
            consumer: consumerName,
            metrics: dlqMetrics,
            subjectRoot: `${prefix}dlq`,
            concurrency,
            batch: Math.max(10, concurrency * 2),
            workingIntervalMs: 10_000,
            ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
            logger: log.child({ component: 'consumer' }),
            handler: async (msg) => {
              const receivedAt = now();
              const outcome: HandleOutcome = await service.handle(decodeTradeOpportunity(msg.data), receivedAt);
              if (outcome.kind === 'defer') return { nakDelayMs: outcome.delayMs };
              return undefined;
            },
          }), (consumer) => consumer.stop());
          service.startMetricsRows(config['executor.metricsInterval']);
          const { http } = await host.start();
          return { http: http! };
        },
        close: () => host.close(),
      };
      return app;
    },
  );
}
