import { authIssues } from '../../auth/index.js';
import { consoleSchema, quoteLatencySource, RpcPoolRows, startConsole, streamLatencySource, type ServiceProbe } from '../../console/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { createLogger } from '../../obs/index.js';
import { openDatabase, openKeySpace, type KeySpace, type SqlClient } from '../../state/index.js';
import { ServiceHost } from '../../app/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool console [options]

The operators' web console (also inside 'npm start', on CONSOLE_PORT 8088): open the printed URL in
a browser. Live over a WebSocket, no page reloads:
  services   health (/health) and readiness (/ready where the service has one) of the quote
             service, scanner, aggregator, external quote service and RPC proxy: red when down
  pools      the scanner's monitored pools (GET /config) read by JSON-RPC: DEX, mints,
             reserves, liquidity, last slot, state age, fresh or stale; filterable
  quote      pair, amount, ExactIn / ExactOut through the quote service's GET /quote
  latency    quote p50 / p99 and stream → cache p50 / p99 over the last 10 minutes (uPlot),
             from the services' /metrics histograms
  opportunities  the TRADE_OPPORTUNITIES stream (with BUS_SERVERS)
  trades, wallets, paper trading   from PostgreSQL (with DATABASE_URL) and Redis (REDIS_URL)
The defaults are the ports of scripts/run-split.sh; an empty URL (--rpc-proxy-url=) leaves that
service out. With auth on (TIDEPOOL_AUTH=on, or a
non-loopback --host under auto), /api/* and the WebSocket need a JWT (engine/auth); the page asks.

${settingsHelp(consoleSchema)}
`;

export const consoleCommand: Command = {
  name: 'console',
  summary: 'run the web console: live health, pools, quotes, latency, opportunities, trades, wallets (:8088)',
  help: HELP,
  settings: consoleSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, consoleSchema, io);
    const v = loaded.values;
    const issues = authIssues(v, v.host);
    if (issues.length > 0) throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
    const logger = createLogger({ name: 'console', level: v['log.level'] });
    const services: ServiceProbe[] = [];
    if (v.quoteUrl) services.push({ name: 'quote-service', health: `${v.quoteUrl}/health`, ready: `${v.quoteUrl}/ready`, ...(v.quoteMetricsUrl ? { metrics: v.quoteMetricsUrl } : {}) });
    if (v.scannerUrl) services.push({ name: 'scanner', health: `${v.scannerUrl}/health`, ready: `${v.scannerUrl}/ready`, ...(v.scannerMetricsUrl ? { metrics: v.scannerMetricsUrl } : {}) });
    if (v.aggregatorUrl) services.push({ name: 'aggregator', health: `${v.aggregatorUrl}/health`, ready: `${v.aggregatorUrl}/ready`, metrics: `${v.aggregatorUrl}/metrics` });
    if (v.externalUrl) services.push({ name: 'external-quotes', health: `${v.externalUrl}/health`, ready: `${v.externalUrl}/ready`, metrics: `${v.externalUrl}/metrics` });
    if (v.plannerUrl) services.push({ name: 'planner', health: `${v.plannerUrl}/health`, ready: `${v.plannerUrl}/ready`, metrics: `${v.plannerUrl}/metrics` });
    if (v.rpcProxyUrl) services.push({ name: 'rpc-proxy', health: `${v.rpcProxyUrl}/rpc/health`, ready: `${v.rpcProxyUrl}/ready`, metrics: `${v.rpcProxyUrl}/rpc/metrics` });
    // The console's own HTTP/WebSocket port and its optional opportunities feed stay its own
    // (engine/console); the host gives it the close stack, the shutdown handling and, with
    // REDIS_URL, the system:health:console heartbeat.
    const { host, app } = await ServiceHost.assemble({ service: 'console', logger }, async (host) => {
      let db: SqlClient | undefined;
      let keys: KeySpace | undefined;
      if (v['database.url'] !== '') {
        const opened = await openDatabase({ url: v['database.url'] });
        db = opened;
        host.onClose('database', () => opened.close());
      }
      if (v['redis.url'] !== '') {
        const opened = await openKeySpace({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'] });
        keys = opened;
        host.onClose('key space', () => opened.store.close());
        host.heartbeatTo(opened);
      }
      const pools = new RpcPoolRows({ rpcEndpoints: v['rpc.endpoints'], pools: { scannerUrl: v.scannerUrl }, staleAfterMs: v.staleAfter });
      // Until the console runs: once started, its own close closes the pool rows.
      let poolsHandedOver = false;
      host.onClose('pool rows', () => (poolsHandedOver ? undefined : pools.close()));
      const started = await startConsole({
        host: v.host,
        port: v.port,
        auth: v,
        services,
        quoteUrl: v.quoteUrl,
        plannerUrl: v.plannerUrl,
        pools,
        latency: {
          ...(v.quoteMetricsUrl ? { quote: quoteLatencySource(v.quoteMetricsUrl) } : {}),
          ...(v.scannerMetricsUrl ? { stream: streamLatencySource(v.scannerMetricsUrl) } : {}),
        },
        busServers: v['bus.servers'],
        ...(db === undefined ? {} : { db: () => db, ...(keys === undefined ? {} : { keys }) }),
        logger,
      });
      poolsHandedOver = true;
      host.onClose('console', () => started.close());
      await host.start();
      return { host, app: started };
    });
    logger.info({ url: app.url, auth: app.authEnabled, services: services.map((s) => s.name) }, 'console running');
    io.stderr.write(`tidepool console is running: ${app.url}/   (watching ${services.map((s) => s.name).join(', ')}${app.authEnabled ? '; JWT bearer auth on' : ''})\n`);
    return host.untilShutdown();
  },
};
