/**
 * The web console assembled: the hub (what is polled, from where), the opportunity feed, and the
 * HTTP / WebSocket server. `startConsole` is what `tidepool console` and `tidepool start` call; each
 * says where its services are and where the pools come from (an in-process pool cache, or RPC).
 */
import { authEnabled, verifierFromSettings, type AuthSettings } from '../auth/index.js';
import type { Logger } from '../obs/index.js';
import type { KeySpace, SqlClient } from '../state/index.js';
import { ConsoleHub } from './console-hub.js';
import { ConsoleServer } from './console-server.js';
import type { LatencySeriesSource } from './latency-window.js';
import { OpportunityFeed } from './opportunity-feed.js';
import type { PoolRowSource } from './pool-rows.js';
import type { ServiceProbe } from './service-probes.js';

export interface ConsoleAppOptions {
  host: string;
  port: number;
  auth: AuthSettings;
  services: readonly ServiceProbe[];
  /** The quote service's base URL (the quote box asks its GET /quote). */
  quoteUrl: string;
  /** The planner's base URL (the strategies view asks its /strategies API); absent or empty: none. */
  plannerUrl?: string;
  pools: PoolRowSource;
  latency: { quote?: LatencySeriesSource; stream?: LatencySeriesSource };
  /** NATS servers of TRADE_OPPORTUNITIES; empty or absent: no feed. */
  busServers?: readonly string[];
  /** The stream of the opportunities; default TRADE_OPPORTUNITIES (tests use their own). */
  opportunityStream?: string;
  /** The database of the trades and wallets, once open (undefined while it is not). */
  db?: () => SqlClient | undefined;
  keys?: KeySpace;
  logger: Logger;
  /** Poll intervals and the WebSocket ping interval (tests shorten them). */
  intervals?: { servicesMs?: number; poolsMs?: number; metricsMs?: number; platformMs?: number; pingMs?: number };
}

export interface ConsoleApp {
  readonly hub: ConsoleHub;
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly authEnabled: boolean;
  close(): Promise<void>;
}

/** The quote latency histogram of a quote service's metrics (cache-served quotes). */
export function quoteLatencySource(metricsUrl: string): LatencySeriesSource {
  return { url: metricsUrl, histogram: 'quote_service_quote_latency_seconds', match: { source: 'cache' }, toMs: 1000 };
}

/** The scanner's stream → publish (in `npm start`: → pool cache) latency histogram. */
export function streamLatencySource(metricsUrl: string): LatencySeriesSource {
  return { url: metricsUrl, histogram: 'end_to_end_latency_ms', toMs: 1 };
}

export async function startConsole(options: ConsoleAppOptions): Promise<ConsoleApp> {
  const log = options.logger;
  const on = authEnabled(options.auth['auth.mode'], options.host);
  const verifier = on ? verifierFromSettings(options.auth) : undefined;
  const hub = new ConsoleHub({
    services: options.services,
    pools: options.pools,
    latency: options.latency,
    ...(options.db === undefined ? {} : { platform: { db: options.db, keys: options.keys } }),
    logger: log,
    ...options.intervals,
  });
  const pingMs = options.intervals?.pingMs;
  let feed: OpportunityFeed | undefined;
  if (options.busServers !== undefined && options.busServers.length > 0) {
    feed = new OpportunityFeed({
      servers: options.busServers,
      logger: log,
      ...(options.opportunityStream === undefined ? {} : { stream: options.opportunityStream }),
      onOpportunity: (row) => hub.addOpportunity(row, feed?.status ?? 'consuming'),
    });
    hub.setOpportunityFeed(feed.status);
  }
  const server = new ConsoleServer({ hub, quoteUrl: options.quoteUrl, plannerUrl: options.plannerUrl, host: options.host, port: options.port, verifier, logger: log, ...(pingMs === undefined ? {} : { pingIntervalMs: pingMs }) });
  await hub.start();
  let port: number;
  try {
    port = await server.start();
  } catch (err) {
    await hub.close();
    await feed?.close();
    throw err;
  }
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closed: Promise<void> | undefined;
  return {
    hub,
    url: `http://${host}:${port}`,
    port,
    authEnabled: on,
    close() {
      closed ??= (async () => {
        await server.close();
        await hub.close();
        await feed?.close();
        await options.pools.close();
      })();
      return closed;
    },
  };
}
