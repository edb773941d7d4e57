/**
 * The quote aggregator as a process runs it (spec 01): its SwapRouteEvent publisher (JetStream at
 * `busUrl`, or none with `busEnabled: false`), its oracle price feed (`oracleUrl`) and the
 * aggregator itself. `tidepool aggregator` runs it alone; `tidepool start` beside the engine and the
 * external quote service. Tracing is the process's (initTracing), not the app's.
 *
 * Assembled by the ServiceHost (service-host.ts): one bus connection for the publisher (no start
 * wait: a bus that is down at start does not hold the aggregator, the publisher counts what it
 * cannot publish; its drain at close bounded by `shutdownTimeout`), the `system:health:aggregator`
 * heartbeat when given a key space (`tidepool aggregator` with REDIS_URL; always `ok`, as before),
 * the close stack and SIGTERM (`host.untilShutdown`). The aggregator's own gRPC and HTTP ports
 * (/health, /ready, /stats, /metrics, with TLS when set) stay its own; the host binds them, so a
 * port in use is TP_ERR_IO naming grpcPort or httpPort.
 */
import type { AggregatorConfig } from '../aggregator/index.js';
import { createAggregator, type Aggregator, type AggregatorPorts } from '../aggregator/index.js';
import type { RoutePublisher } from '../aggregator/index.js';
import { disabledRoutePublisher } from '../aggregator/index.js';
import { OraclePrices } from '../aggregator/index.js';
import { ROUTE_PUBLISHER_CONNECTION_NAME, SwapRoutePublisher } from '../aggregator/index.js';
import { busAuthOf } from '../config/index.js';
import type { Logger } from '../obs/index.js';
import { HeartbeatStatus, type KeySpace } from '../state/index.js';
import { ServiceHost } from './service-host.js';

/** The setting naming the aggregator's bus when no server answers. */
export const AGGREGATOR_BUS_SETTING = 'busUrl (BUS_URL, --bus-url)';

export interface AggregatorApp {
  /** The bus (when enabled), the heartbeat, the close stack, SIGTERM. */
  readonly host: ServiceHost;
  readonly aggregator: Aggregator;
  readonly publisher: RoutePublisher;
  readonly oracle: OraclePrices;
  /** Binds the gRPC and HTTP ports, then starts the heartbeat. */
  start(): Promise<AggregatorPorts>;
  /** Ends the streams, flushes the publisher within the shutdown timeout, stops the oracle, closes the bus. Idempotent. */
  close(): Promise<void>;
}

export interface AggregatorAppOptions {
  logger: Logger;
  defaultMetrics?: boolean;
  /** Where the `system:health:aggregator` heartbeat goes (the host closes its store); none: no heartbeat. */
  heartbeat?: KeySpace;
}

export async function createAggregatorApp(config: AggregatorConfig, options: AggregatorAppOptions): Promise<AggregatorApp> {
  const logger = options.logger;
  return ServiceHost.assemble(
    {
      service: 'aggregator',
      logger,
      ...(config.busEnabled
        ? {
            bus: {
              servers: [config.busUrl],
              auth: busAuthOf(config, [config.busUrl]),
              name: ROUTE_PUBLISHER_CONNECTION_NAME,
              setting: AGGREGATOR_BUS_SETTING,
              // A bus that is down at start does not hold the aggregator: the publisher connects in
              // the background and counts what it cannot publish.
              startWaitMs: 0,
              closeTimeoutMs: config.shutdownTimeout,
            },
          }
        : {}),
      // The aggregator serves quotes without the bus: its heartbeat stays `ok` (its /health says the rest).
      heartbeatStatus: () => ({ status: HeartbeatStatus.Ok }),
    },
    async (host) => {
      const keys = options.heartbeat;
      if (keys !== undefined) {
        host.onClose('key space', () => keys.store.close());
        host.heartbeatTo(keys);
      }
      const publisher: RoutePublisher = config.busEnabled
        ? await host.wait(SwapRoutePublisher.open({ bus: await host.openBus(), maxBytesScale: config.busStreamMaxBytesScale, logger: logger.child({ component: 'route-publisher' }) }))
        : disabledRoutePublisher();
      host.onClose('route publisher', () => publisher.close(config.shutdownTimeout));
      const oracle = new OraclePrices({ url: config.oracleUrl, logger: logger.child({ component: 'oracle' }) });
      host.onClose('oracle', () => oracle.close());
      const aggregator = createAggregator(config, { logger, publisher, oracle, defaultMetrics: options.defaultMetrics ?? true });
      // The aggregator's close ends the streams and its ports, then flushes the publisher and closes
      // the oracle it was given (their own closers above then find them closed).
      host.onClose('aggregator', () => aggregator.close());
      return {
        host,
        aggregator,
        publisher,
        oracle,
        async start() {
          const ports = await aggregator.start((port, bind) => host.listen(port, bind));
          await host.start();
          return ports;
        },
        close: () => host.close(),
      };
    },
  );
}

/** The lines `tidepool start` and `tidepool aggregator` print for a running aggregator. */
export function aggregatorEndpointLines(config: AggregatorConfig, ports: AggregatorPorts): string[] {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return [
    `  aggregated quotes grpc://${host}:${ports.grpcPort}   (tidepool.v1.QuoteAggregatorService)`,
    `  aggregator http   ${config['tls.certFile'] ? 'https' : 'http'}://${host}:${ports.httpPort}/stats   (also /health, /metrics)`,
    config.busEnabled ? `  route events      market.swap_route.optimal on ${config.busUrl}` : '  route events      not published (bus disabled; BUS_ENABLED=true publishes them)',
  ];
}
