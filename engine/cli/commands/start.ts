import { ServiceHost, createEngine } from '../../app/index.js';
import { aggregatorEndpointLines, createAggregatorApp, createExternalQuotesApp } from '../../app/index.js';
import { aggregatorConfigUnderSim, checkStartConfig, engineConfigUnderSim, externalConfigUnderSim, startSchema } from '../../app/index.js';
import { cachePoolRows, quoteLatencySource, startConsole, streamLatencySource, type ConsoleApp } from '../../console/index.js';
import { initTracing } from '../../obs/index.js';
import { createLogger } from '../../obs/index.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/index.js';
import { startSimulatorThread } from '../../sim/index.js';
import type { SimConfig } from '../../sim/index.js';
import { openQuoteCache, startEmbeddedPlatform, type EmbeddedPlatform, type QuoteCacheHandle } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';
import { endpointLines } from './engine.js';
import { startPaperTrading, type StartPaperTrading } from '../../app/index.js';

const HELP = `Usage: tidepool start [options]      (what 'npm start' runs)

Runs everything in one process on the embedded defaults, no servers needed: the local chain
simulator on its own thread (JSON-RPC :8899, PubSub :8900, ShredStream gRPC :9999, quote API /
block engine / faults :8890), the scanner reading its block-entry stream, and the quote service serving quotes from the
scanner's pool cache (:8080; gRPC quote stream StreamBatchQuotes :50052), and the web console
(:8088, CONSOLE_PORT; CONSOLE_ENABLED=false leaves it out), and paper trading: the arbitrage
planner sweeping the pools and a paper executor recording trades with status paper in the embedded
database (/stats on :8085, EXECUTOR_PORT; START_PAPER_TRADING=false leaves it out). Every pool of the simulator is monitored unless MONITORED_POOLS says
otherwise. Prints the endpoints and a ready-to-run quote request. SIGTERM or Ctrl-C drains and exits 0.

${settingsHelp(startSchema)}
`;

function platformLine(v: { 'database.url': string; 'database.dataDir': string; 'redis.url': string; 'platform.scannerMetricsInterval': number }): string {
  const db = v['database.url'] === '' ? `embedded PostgreSQL in ${v['database.dataDir']}/pglite` : 'PostgreSQL at DATABASE_URL';
  const kv = v['redis.url'] === '' ? 'in-process key-value store' : 'Redis at REDIS_URL';
  return `${db} (scanner_metrics every ${v['platform.scannerMetricsInterval'] / 1000} s), ${kv} (system:health heartbeats)`;
}

export const startCommand: Command = {
  name: 'start',
  summary: 'run the simulator, scanner, quote service, external quote service and aggregator in one process (npm start)',
  help: HELP,
  settings: startSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, startSchema, io);
    checkStartConfig(loaded.values);
    const v = loaded.values;
    const logger = createLogger({ name: 'tidepool', level: v['log.level'] });
    // One close stack for the whole process (ServiceHost): each part goes on it as it opens, and it
    // unwinds last opened first, on SIGTERM and after a start that fails half way: the console and
    // paper trading before the aggregator, whose streams end and events flush before its upstreams
    // (the external quote service, the engine) go; the chain last.
    const running = await ServiceHost.assemble({ service: 'tidepool', logger }, async (host, signal) => {
      const tracing = await initTracing({ serviceName: 'tidepool', logger, env: io.env });
      host.onClose('tracing', () => tracing.shutdown());
      // The chain runs on its own thread, as a node would beside the engine.
      const sim = await startSimulatorThread(v as unknown as SimConfig, { logLevel: v['log.level'] });
      host.onClose('simulator', () => sim.close());
      const simEndpoints = sim.endpoints;
      const pools = v['pools.monitored'].length > 0 ? v['pools.monitored'] : sim.pools.map((p) => p.address);
      // The shared quote cache (quote: / price: keys) is part of the platform state; it is opened
      // before the engine, whose quote engine takes it at construction, and its key space is the
      // platform's (heartbeats included). Its close flushes the cache, then closes the store.
      let quoteCache: QuoteCacheHandle | undefined;
      if (v['platform.enabled']) {
        const opened = await openQuoteCache({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'], logger: logger.child({ component: 'platform' }) });
        quoteCache = opened;
        host.onClose('quote cache', () => opened.close());
      }
      const engine = createEngine(engineConfigUnderSim(loaded, simEndpoints), { logger, pools, ...(quoteCache === undefined ? {} : { sharedQuoteCache: quoteCache.cache }) });
      host.onClose('engine', () => engine.close());
      const endpoints = await engine.start(signal);
      const external = await createExternalQuotesApp(externalConfigUnderSim(loaded, simEndpoints), { logger: logger.child({ component: 'external-quotes' }), defaultMetrics: false });
      host.onClose('external quotes', () => external.close());
      const externalEndpoints = await external.start();
      const aggregatorConfig = aggregatorConfigUnderSim(loaded, simEndpoints, { local: endpoints.localQuotes, external: externalEndpoints.grpc });
      const aggregatorApp = await createAggregatorApp(aggregatorConfig, { logger: logger.child({ component: 'aggregator' }) });
      host.onClose('aggregator', () => aggregatorApp.close());
      const aggregatorPorts = await aggregatorApp.start();
      let platform: EmbeddedPlatform | undefined;
      if (v['platform.enabled']) {
        const opened = await startEmbeddedPlatform({
          settings: v,
          services: ['scanner', 'quote-service', 'external-quotes', 'aggregator'],
          scanner: { metrics: engine.scanner.metrics, scannerId: 'scanner' },
          logger: logger.child({ component: 'platform' }),
          ...(quoteCache === undefined ? {} : { keys: quoteCache.cache.keys }),
        });
        platform = opened;
        host.onClose('platform state', () => opened.close());
      }
      let paper: StartPaperTrading | undefined;
      if (platform !== undefined && v['paper.enabled']) {
        const opened = await startPaperTrading({
          rpcUrl: simEndpoints.rpc,
          pools,
          flashLoanReserves: sim.reserves,
          database: platform.database,
          host: v.host,
          port: v['paper.port'],
          intervalMs: v['paper.interval'],
          logger: logger.child({ component: 'paper-trading' }),
        });
        paper = opened;
        host.onClose('paper trading', () => opened.close());
      }
      let consoleApp: ConsoleApp | undefined;
      if (v['console.enabled']) {
        let db: Awaited<EmbeddedPlatform['database']>;
        void platform?.database.then((opened) => (db = opened));
        const aggregatorHost = aggregatorConfig.host.includes(':') ? `[${aggregatorConfig.host}]` : aggregatorConfig.host;
        const opened = await startConsole({
          host: v.host,
          port: v['console.port'],
          auth: v,
          services: [
            { name: 'quote-service', health: `${endpoints.quote}/health`, ready: `${endpoints.quote}/ready`, metrics: endpoints.quoteMetrics },
            { name: 'scanner', health: `${endpoints.scanner}/health`, ready: `${endpoints.scanner}/ready`, metrics: endpoints.scannerMetrics },
            { name: 'external-quotes', health: `${externalEndpoints.metrics}/health`, ready: `${externalEndpoints.metrics}/ready`, metrics: `${externalEndpoints.metrics}/metrics` },
            {
              name: 'aggregator',
              health: `http://${aggregatorHost}:${aggregatorPorts.httpPort}/health`,
              ready: `http://${aggregatorHost}:${aggregatorPorts.httpPort}/ready`,
              metrics: `http://${aggregatorHost}:${aggregatorPorts.httpPort}/metrics`,
            },
            ...(paper === undefined ? [] : [{ name: 'paper-executor', health: `${paper.url}/health`, ready: `${paper.url}/ready`, metrics: `${paper.url}/metrics` }]),
          ],
          quoteUrl: endpoints.quote,
          pools: cachePoolRows(engine.cache, () => engine.scanner.pools),
          latency: { quote: quoteLatencySource(endpoints.quoteMetrics), stream: streamLatencySource(endpoints.scannerMetrics) },
          busServers: aggregatorConfig.busEnabled ? [aggregatorConfig.busUrl] : [],
          ...(platform === undefined ? {} : { db: () => db, keys: platform.keys }),
          logger: logger.child({ component: 'console' }),
        });
        consoleApp = opened;
        host.onClose('console', () => opened.close());
      }
      return { host, simEndpoints, pools, endpoints, external, externalEndpoints, aggregatorConfig, aggregatorPorts, platform, paper, consoleApp };
    });
    const { simEndpoints, pools, endpoints, external, externalEndpoints, aggregatorConfig, aggregatorPorts, platform, paper, consoleApp } = running;
    logger.info({ endpoints, external: externalEndpoints, aggregator: aggregatorPorts, sim: simEndpoints, pools: pools.length }, 'tidepool started');
    io.stderr.write(
      [
        `tidepool is running (simulated chain, ${pools.length} pools monitored):`,
        ...endpointLines(endpoints),
        `  external quotes   grpc://${externalEndpoints.grpc}   (polling ${external.service.provider}; /health, /metrics on ${externalEndpoints.metrics})`,
        ...aggregatorEndpointLines(aggregatorConfig, aggregatorPorts),
        `  chain JSON-RPC    ${simEndpoints.rpc}   (PubSub ${simEndpoints.ws}, ShredStream ${simEndpoints.stream})`,
        `  chain quote API   ${simEndpoints.http}/quote   (block engine /api/v1/bundles, faults /admin/faults)`,
        ...(platform === undefined ? [] : [`  platform state    ${platformLine(v)}`]),
        ...(paper === undefined ? [] : [`  paper trading     ${paper.url}/stats   (arbitrage planner + paper executor: trades with status paper; /metrics, /health)`]),
        ...(consoleApp === undefined ? [] : [`  web console       ${consoleApp.url}/   (live over a WebSocket${consoleApp.authEnabled ? '; JWT bearer auth on' : ''})`]),
        'Try (1 wrapped SOL to USDC):',
        `  curl -s '${endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000'`,
        `  node dist/engine/cli/main.js aggregated-quote --addr 127.0.0.1:${aggregatorPorts.grpcPort} --input ${WSOL_MINT} --output ${USDC_MINT} --amount 1000000000`,
        '',
      ].join('\n'),
    );
    return running.host.untilShutdown();
  },
};
