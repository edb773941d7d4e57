import { checkMarketScannerConfig, createMarketScannerApp, marketScannerSchema, type MarketScannerConfig } from '../../app/index.js';
import { redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { checkScannerConfig, monitoredPools } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp, startOrClose } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool market-scanner [options]

The market scanner of spec 03: publishes MarketEvents (pool_update, large_swap, liquidity_change) on
market.events.<protocol>.<type> and PriceUpdates on market.events.prices.<token> to the JetStream
stream MARKET_EVENTS on BUS_SERVERS, and keeps the price:{token}:{dex} and volume:{token}:24h keys
in REDIS_URL (an in-process store without it). Modes: blockstream (the pool-state scanner's
pipeline: block-entry stream, parse workers, account reads, decoders), rpc-polling
(getMultipleAccounts every --poll-interval), websocket (accountSubscribe on --ws-url, default the
first RPC endpoint with ws and port + 1; context accounts read by RPC; reconnects with backoff and
subscribes again after a drop). The four platform streams are created or updated at start with spec 03's settings; the
market-events stream's duplicate window is --dedup-window-ms. Watched accounts: --accounts, else
pools.monitored, else pools.file. In every mode the system:health:market-scanner heartbeat goes to
REDIS_URL; blockstream mode serves the scanner's ports (--health-port, --metrics-port), the other
modes /health, /ready and /metrics on --health-port (8081). SIGTERM or Ctrl-C drains the bus and
exits 0.

${settingsHelp(marketScannerSchema)}
`;

export const marketScannerCommand: Command = {
  name: 'market-scanner',
  summary: 'publish MarketEvents and PriceUpdates to NATS JetStream (spec 03 market scanner)',
  help: HELP,
  settings: marketScannerSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, marketScannerSchema, io);
    const config = loaded.values as MarketScannerConfig;
    if (config['market.mode'] === 'blockstream') checkScannerConfig(config);
    const accounts = config['market.accounts'].length > 0 ? config['market.accounts'] : monitoredPools(config);
    checkMarketScannerConfig(config, accounts);
    const logger = createLogger({ name: 'market-scanner', level: config['metrics.logLevel'] });
    const app = await createMarketScannerApp(loaded, { logger, accounts });
    const endpoints = await startOrClose(app);
    logger.info({ endpoints, accounts: accounts.length, config: redactedValues(marketScannerSchema, loaded) }, 'market scanner started');
    io.stderr.write(
      [
        `tidepool market-scanner is running (${config['market.mode']}, ${accounts.length} accounts, publishing to ${config['market.natsStream']} on ${config['bus.servers'].join(',')}):`,
        ...(endpoints.scanner === undefined ? [] : [`  scanner           ${endpoints.scanner}/health   (also /stats, /config)`, `  scanner metrics   ${endpoints.scannerMetrics}`]),
        ...(endpoints.http === undefined ? [] : [`  probes, metrics   ${endpoints.http}/health  ${endpoints.http}/ready  ${endpoints.http}/metrics`]),
        `  watch             nats sub 'market.events.>'`,
        '',
      ].join('\n'),
    );
    return app.host.untilShutdown();
  },
};
