import { redactedValues } from '../../config/index.js';
import { createLogger, type Logger } from '../../obs/index.js';
import { initTracing } from '../../obs/index.js';
import { aggregatorSchema, loadAggregatorConfig, type AggregatorConfig } from '../../aggregator/index.js';
import type { AggregatorPorts } from '../../aggregator/index.js';
import { aggregatorEndpointLines, createAggregatorApp, type AggregatorApp } from '../../app/index.js';
import { openSplitKeySpace, type KeySpace } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { CliIo, Command } from '../command.js';

const HELP = `Usage: tidepool aggregator [options]

The quote aggregator (spec 01): keeps one StreamBatchQuotes stream to the local quote service
(-local-quote-addr, LOCAL_QUOTE_SERVICE_ADDR, localhost:50052) and one to the external quote service
(-external-quote-addr, EXTERNAL_QUOTE_SERVICE_ADDR, localhost:50053), merges their quotes with a
5-factor confidence score and a decision (Execute / Verify / Cautious / Skip), and serves
QuoteAggregatorService on -grpc-port (50051): StreamAggregatedQuotes, GetAggregatedQuote (150 ms),
GetConfidenceBreakdown, Health. HTTP on -http-port (8080): GET /health, /stats, /metrics.
Aggregated quotes with both sources publish a SwapRouteEvent on market.swap_route.optimal to the bus
at -bus-url (BUS_URL); -bus-enabled=false publishes nothing. Traces go to OTEL_EXPORTER_OTLP_ENDPOINT
when set. SIGTERM or Ctrl-C ends the streams, flushes the publisher within -shutdown-timeout, exits 0.

${settingsHelp(aggregatorSchema)}
`;

export interface RunningAggregator {
  ports: AggregatorPorts;
  logger: Logger;
  /** Its host: the bus, the heartbeat (with REDIS_URL), the close stack, SIGTERM. */
  app: AggregatorApp;
  /** Closes the app, then flushes the traces. */
  close(): Promise<void>;
}

/**
 * Builds and starts the aggregator with its real publisher and oracle, from the command line; with
 * REDIS_URL its host writes the `system:health:aggregator` heartbeat there.
 */
export async function startAggregatorService(argv: string[], io: CliIo): Promise<RunningAggregator> {
  const { loaded } = readCommandSettings(argv, aggregatorSchema, io, { load: loadAggregatorConfig });
  const config: AggregatorConfig = loaded.values;
  const logger = createLogger({ name: 'aggregator', level: config['log.level'] });
  const tracing = await initTracing({ serviceName: 'tidepool-aggregator', logger, env: io.env });
  let app: AggregatorApp | undefined;
  let heartbeat: KeySpace | undefined;
  const close = async (): Promise<void> => {
    // Once the app is built its host owns the heartbeat's store.
    await (app === undefined ? heartbeat?.store.close() : app.close());
    await tracing.shutdown();
  };
  let ports: AggregatorPorts;
  try {
    heartbeat = await openSplitKeySpace(io.env);
    app = await createAggregatorApp(config, { logger, ...(heartbeat === undefined ? {} : { heartbeat }) });
    ports = await app.start();
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  logger.info({ ports, config: redactedValues(aggregatorSchema, loaded) }, 'aggregator started');
  io.stderr.write(
    [
      'tidepool aggregator is running:',
      ...aggregatorEndpointLines(config, ports),
      `  local quotes      ${config.localQuoteAddr}`,
      `  external quotes   ${config.externalQuoteAddr}`,
      '',
    ].join('\n'),
  );
  return { ports, logger, app, close };
}

export const aggregatorCommand: Command = {
  name: 'aggregator',
  summary: 'run the quote aggregator (gRPC QuoteAggregatorService over the local and external quote services)',
  help: HELP,
  settings: aggregatorSchema,
  async run(argv, io) {
    const running = await startAggregatorService(argv, io);
    const code = await running.app.host.untilShutdown();
    await running.close();
    return code;
  },
};
