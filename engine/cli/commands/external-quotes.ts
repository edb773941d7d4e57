import { redactedValues } from '../../config/index.js';
import type { ExternalEndpoints } from '../../external/index.js';
import { createExternalQuotesApp, type ExternalQuotesApp } from '../../app/index.js';
import { externalSchema, loadExternalConfig, providerNameOf } from '../../external/index.js';
import { createLogger } from '../../obs/index.js';
import { initTracing } from '../../obs/index.js';
import { openSplitKeySpace, type KeySpace } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool external-quotes [options]

The external upstream quote service of spec 01: polls an aggregator-style GET /quote API
(-quote-url, Jupiter Swap API shape; default the simulator's) for every pair of its open streams,
at most -rate-limit-rps requests a second and each pair at most once per -poll-interval, honouring
429 Retry-After, behind a circuit breaker (5 failures open it, 30 s to half-open, 3 successes close
it), and serves the results over gRPC tidepool.v1.QuoteService.StreamBatchQuotes on -grpc-port
(50053). Provider uptime, latency, errors and breaker state: GET /health and GET /metrics on
-metrics-port (9093). The API key (-api-key) is sent as x-api-key and never logged.
Traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (one span per stream, under the caller's
trace). SIGTERM or Ctrl-C ends the streams (UNAVAILABLE) and exits 0.

Example (the public API): tidepool external-quotes -quote-url https://lite-api.jup.ag/swap/v1/quote -rate-limit-rps 1

${settingsHelp(externalSchema)}
`;

export const externalQuotesCommand: Command = {
  name: 'external-quotes',
  summary: 'run the external quote service: poll a /quote API, stream quotes over gRPC (:50053)',
  help: HELP,
  settings: externalSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, externalSchema, io, { load: loadExternalConfig });
    const logger = createLogger({ name: 'external-quotes', level: loaded.values['log.level'] });
    const tracing = await initTracing({ serviceName: 'tidepool-external-quotes', env: io.env, logger });
    // With REDIS_URL the host writes the system:health:external-quotes heartbeat there.
    let heartbeat: KeySpace | undefined;
    let app: ExternalQuotesApp | undefined;
    let started: { running: ExternalQuotesApp; endpoints: ExternalEndpoints };
    try {
      heartbeat = await openSplitKeySpace(io.env);
      const running = await createExternalQuotesApp(loaded.values, { logger, defaultMetrics: true, ...(heartbeat === undefined ? {} : { heartbeat }) });
      app = running;
      started = { running, endpoints: await running.start() };
    } catch (err) {
      // Once the app is built its host owns the heartbeat's store.
      await (app === undefined ? heartbeat?.store.close() : app.close())?.catch(() => undefined);
      await tracing.shutdown();
      throw err;
    }
    const { endpoints } = started;
    logger.info({ endpoints, config: redactedValues(externalSchema, loaded) }, 'external quote service running');
    const url = new URL(loaded.values.quoteUrl);
    io.stderr.write(
      [
        'tidepool external-quotes is running:',
        `  StreamBatchQuotes  ${endpoints.grpc}   (gRPC tidepool.v1.QuoteService)`,
        `  metrics, health    ${endpoints.metrics}/metrics   ${endpoints.metrics}/health`,
        `  provider           ${providerNameOf(loaded.values)} at ${url.origin}${url.pathname}, ${loaded.values.rateLimitRps} req/s, poll every ${loaded.values.pollInterval} ms`,
        '',
      ].join('\n'),
    );
    const code = await started.running.host.untilShutdown();
    await tracing.shutdown();
    return code;
  },
};
