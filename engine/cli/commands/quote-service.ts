import { createQuoteApp, loadQuoteServiceConfig, quoteServiceSchema, type QuoteApp } from '../../app/index.js';
import { redactedValues, refuseLoopbackDefaults } from '../../config/index.js';
import { maskSecretsInText } from '../../secret-mask.js';
import { createLogger } from '../../obs/index.js';
import { openSplitKeySpace, openSplitQuoteCache } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool quote-service [options]

The cache-backed quote service of the split deployment (spec 02): consumes pool state updates from
the JetStream stream POOL_UPDATES on BUS_SERVERS with the durable consumer BUS_CONSUMER_NAME
(explicit ack, 100 pending at most), keeps them in its pool cache under the slot rule, and serves
GET /quote, the quote API v1 (POST /v1/quote, /v1/quote/batch, GET /v1/pools, the Jupiter-compatible
GET /swap/v1/quote) and GET /ready on PORT (8080) from the cache with an RPC fallback on
RPC_ENDPOINTS, and tidepool.v1.QuoteService (StreamBatchQuotes, GetQuote, GetQuotes) on GRPC_PORT (50052); metrics on METRICS_PORT (9090). Concentrated and DLMM pools get their tick / bin arrays from RPC after each
update. Run one per region or behind a load balancer, each with its own BUS_CONSUMER_NAME.
Monitored pools (MONITORED_POOLS, else the pools file MONITORED_POOLS_FILE, as 'tidepool scanner'
takes them) are read from RPC at start and every REFRESH_SECONDS, beside the pools the bus names.
BUS_ENABLED=false: no bus, RPC only: the monitored pools (required then) are read and refreshed from
RPC_ENDPOINTS and quoted. SIGTERM or Ctrl-C acks what it holds, drains and exits 0.

${settingsHelp(quoteServiceSchema)}
`;

export const quoteServiceCommand: Command = {
  name: 'quote-service',
  summary: 'run the quote service, consuming pool updates from NATS JetStream (split deployment)',
  help: HELP,
  settings: quoteServiceSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, quoteServiceSchema, io, { load: loadQuoteServiceConfig });
    // A remote RPC with the external fallback left at the simulator's loopback URL is a mistake.
    refuseLoopbackDefaults(quoteServiceSchema, loaded, ['rpc.endpoints'], loaded.values['externalFallback.enabled'] ? ['externalFallback.quoteUrl'] : []);
    const logger = createLogger({ name: 'quote-service', level: loaded.values['log.level'] });
    // quote: / price: keys: over Redis when REDIS_URL is set (replicas read each other's answers
    // before RPC), else in this process (written only).
    const quoteCache = await openSplitQuoteCache({ env: io.env, logger: logger.child({ component: 'quote-cache' }) });
    // With REDIS_URL the host writes the system:health:quote-service heartbeat there.
    const heartbeat = await openSplitKeySpace(io.env).catch(async (err: unknown) => {
      await quoteCache.close();
      throw err;
    });
    let app: QuoteApp;
    try {
      app = await createQuoteApp(loaded.values, { logger, sharedQuoteCache: quoteCache.cache, ...(heartbeat === undefined ? {} : { heartbeat }) });
    } catch (err) {
      // A half-built app has closed its host (and with it the heartbeat's store) before it rejects.
      await quoteCache.close();
      throw err;
    }
    let endpoints;
    try {
      endpoints = await app.start();
    } catch (err) {
      await app.close().catch(() => undefined);
      await quoteCache.close();
      throw err;
    }
    logger.info({ endpoints, config: redactedValues(quoteServiceSchema, loaded) }, 'quote service started');
    io.stderr.write(
      [
        'tidepool quote-service is running:',
        `  quotes            ${endpoints.quote}/quote   (also /health, /ready, /debug/pprof/heap)`,
        `  quote API v1      ${endpoints.quote}/v1/quote, /v1/quote/batch, /v1/pools, /swap/v1/quote (Jupiter-compatible)`,
        `  quote metrics     ${endpoints.quoteMetrics}`,
        `  local quotes      grpc://${endpoints.localQuotes}   (tidepool.v1.QuoteService: StreamBatchQuotes, GetQuote, GetQuotes)`,
        loaded.values['bus.enabled']
          ? `  consuming         ${loaded.values['bus.streamName']} as ${loaded.values['bus.consumerName']} on ${maskSecretsInText(loaded.values['bus.servers'].join(','))}`
          : `  bus               disabled: RPC only, ${app.monitored.length} monitored pools read from ${maskSecretsInText(loaded.values['rpc.endpoints'].join(','))} every ${loaded.values.refreshSeconds} s`,
        '',
      ].join('\n'),
    );
    const code = await app.host.untilShutdown();
    await quoteCache.close();
    return code;
  },
};
