/**
 * The quote aggregator as a process runs it (spec 01): its SwapRouteEvent publisher (JetStream at
 * `busUrl`, or none with `busEnabled: false`), its oracle price feed (`oracleUrl`) and the
 * aggregator itself. `tidepool aggregator` runs it alone; `tidepool start` beside the engine and the
 * external quote service. Tracing is the process's (initTracing), not the app's.
 */
import type { AggregatorConfig } from '../aggregator/index.js';
import { createAggregator, type Aggregator, type AggregatorPorts } from '../aggregator/index.js';
import type { RoutePublisher } from '../aggregator/index.js';
import { disabledRoutePublisher } from '../aggregator/index.js';
import { OraclePrices } from '../aggregator/index.js';
import { SwapRoutePublisher } from '../aggregator/index.js';
import { busAuthOf } from '../config/index.js';
import type { Logger } from '../obs/index.js';

export interface AggregatorApp {
  readonly aggregator: Aggregator;
  readonly publisher: RoutePublisher;
  readonly oracle: OraclePrices;
  /** Binds the gRPC and HTTP ports. */
  start(): Promise<AggregatorPorts>;
  /** Ends the streams, flushes the publisher within the shutdown timeout, stops the oracle. Idempotent. */
  close(): Promise<void>;
}

export async function createAggregatorApp(config: AggregatorConfig, options: { logger: Logger; defaultMetrics?: boolean }): Promise<AggregatorApp> {
  const logger = options.logger;
  // A bus that is down at start does not hold the aggregator: the publisher connects in the
  // background and counts what it cannot publish.
  const publisher: RoutePublisher = config.busEnabled
    ? await SwapRoutePublisher.open({ bus: config.busUrl, auth: busAuthOf(config, [config.busUrl]), maxBytesScale: config.busStreamMaxBytesScale, logger: logger.child({ component: 'route-publisher' }) })
    : disabledRoutePublisher();
  const oracle = new OraclePrices({ url: config.oracleUrl, logger: logger.child({ component: 'oracle' }) });
  const aggregator = createAggregator(config, { logger, publisher, oracle, defaultMetrics: options.defaultMetrics ?? true });
  return {
    aggregator,
    publisher,
    oracle,
    start: () => aggregator.start(),
    // The aggregator's close flushes the publisher and closes the oracle it was given.
    close: () => aggregator.close(),
  };
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
