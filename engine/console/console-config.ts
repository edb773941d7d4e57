/**
 * Settings of the web console: `tidepool console` (every service it watches named by URL; the
 * defaults are the ports of `scripts/run-split.sh` and `npm start`), and the two settings it adds to
 * `tidepool start` (CONSOLE_PORT, CONSOLE_ENABLED), where it watches the services of the process.
 */
import { authSchema } from '../auth/index.js';
import { setting, types } from '../config/index.js';
import { SettingIssue } from '../config/index.js';
import { LOG_LEVELS } from '../obs/index.js';
import { redisSchema } from '../state/index.js';

const { bool, busServer, duration, oneOf, port, str, uniqueList, url } = types;

/** The console's port (docs/architecture.md, Ports: 8080-8083 and 9090-9093 are the services'). */
export const DEFAULT_CONSOLE_PORT = 8088;

/** An http(s) URL, or empty for "not watched" (`--aggregator-url=`: an empty variable counts as unset). */
function optionalUrl(): types.SettingParser<string> {
  const parse = url();
  return (raw) => {
    if (raw === '') return '';
    if (typeof raw !== 'string') throw new SettingIssue('must be a URL or empty');
    return parse(raw.replace(/\/+$/, ''));
  };
}

const consoleUrl = (description: string, def: string, env: string, flag: string) =>
  setting({ description, parse: optionalUrl(), default: def, env, flag });

export const consoleSchema = {
  host: setting({ description: 'bind address of the console', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'CONSOLE_HOST', flag: 'host' }),
  port: setting({ description: 'HTTP and WebSocket port of the console (0: any free port)', parse: port(), default: DEFAULT_CONSOLE_PORT, env: 'CONSOLE_PORT', flag: 'port' }),
  quoteUrl: consoleUrl('quote service HTTP (GET /quote, /health)', 'http://127.0.0.1:8080', 'CONSOLE_QUOTE_URL', 'quote-url'),
  quoteMetricsUrl: consoleUrl('quote service metrics (quote latency chart)', 'http://127.0.0.1:9090/metrics', 'CONSOLE_QUOTE_METRICS_URL', 'quote-metrics-url'),
  scannerUrl: consoleUrl('scanner HTTP (/health, /config: the monitored pools)', 'http://127.0.0.1:8081', 'CONSOLE_SCANNER_URL', 'scanner-url'),
  scannerMetricsUrl: consoleUrl('scanner metrics (stream → cache latency chart)', 'http://127.0.0.1:9091/metrics', 'CONSOLE_SCANNER_METRICS_URL', 'scanner-metrics-url'),
  aggregatorUrl: consoleUrl('quote aggregator HTTP (/health)', 'http://127.0.0.1:8082', 'CONSOLE_AGGREGATOR_URL', 'aggregator-url'),
  externalUrl: consoleUrl('external quote service health and metrics port (/health)', 'http://127.0.0.1:9093', 'CONSOLE_EXTERNAL_URL', 'external-url'),
  plannerUrl: consoleUrl('planner HTTP (/health, /ready, the /strategies API of the strategies view); empty: no strategies view', 'http://127.0.0.1:8084', 'CONSOLE_PLANNER_URL', 'planner-url'),
  rpcProxyUrl: consoleUrl('RPC proxy (/rpc/health, /ready); empty: not watched', 'http://127.0.0.1:8083', 'CONSOLE_RPC_PROXY_URL', 'rpc-proxy-url'),
  'rpc.endpoints': setting({ description: 'Solana JSON-RPC read for the pool table', parse: uniqueList(url(), { min: 1 }), default: ['http://127.0.0.1:8899'], env: 'RPC_ENDPOINTS', flag: 'rpc-endpoints' }),
  staleAfter: setting({ description: 'pool state age shown as stale', parse: duration({ min: 100 }), default: 30_000, env: 'STALENESS_THRESHOLD', flag: 'stale-after' }),
  'bus.servers': setting({ description: 'NATS servers of the TRADE_OPPORTUNITIES stream (empty: no opportunities feed)', parse: uniqueList(busServer()), default: [] as string[], env: 'BUS_SERVERS', flag: 'bus-servers' }),
  'database.url': setting({ description: 'PostgreSQL of the trades and wallets (empty: those panels stay empty; the embedded database is never opened, npm start holds it)', parse: (raw: unknown) => (raw === '' ? '' : url(['postgres:', 'postgresql:'])(raw)), default: '', env: 'DATABASE_URL', flag: 'database-url', secret: true }),
  // Redis of the wallet:balance: keys (empty: the balances of the wallets table are shown).
  ...redisSchema,
  'log.level': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  ...authSchema,
};

/** What `tidepool start` adds for its console. */
export const startConsoleSchema = {
  'console.enabled': setting({ description: 'serve the web console', parse: bool(), default: true, env: 'CONSOLE_ENABLED', flag: 'console' }),
  'console.port': setting({ description: 'HTTP and WebSocket port of the web console', parse: port(), default: DEFAULT_CONSOLE_PORT, env: 'CONSOLE_PORT', flag: 'console-port' }),
};
