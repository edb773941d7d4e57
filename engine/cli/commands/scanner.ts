import { createScannerApp, scannerServiceSchema, type ScannerApp } from '../../app/index.js';
import { redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { checkScannerConfig, monitoredPools } from '../../scanner/index.js';
import { openSplitKeySpace, startSplitServiceState } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool scanner [options]

The pool-state scanner of the split deployment (spec 02): reads the block-entry stream (ShredStream
proxy gRPC), parses entries in worker threads, reads the state of every monitored pool a transaction
touches from Solana JSON-RPC, and publishes one PoolStateUpdateEvent per transaction and pool to the
JetStream stream POOL_UPDATES (subject pool.state.updated.{dex}.{pool_address}, created or updated at
start) on BUS_SERVERS. Quote services consume it ('tidepool quote-service'). Scanner HTTP (/health,
/stats, /config, POST /config/pools) on HEALTH_PORT (8081), metrics on METRICS_PORT (9091); POST
/config/pools takes a JWT bearer token when auth is on (TIDEPOOL_AUTH). /health fails (503, with a
reason) when disconnected, stalled (HEALTH_MAX_ENTRY_AGE) or when pool reads keep failing.
SIGTERM, Ctrl-C or the parent process exiting publishes what is in hand, drains the bus and exits 0.

${settingsHelp(scannerServiceSchema)}
`;

export const scannerCommand: Command = {
  name: 'scanner',
  summary: 'run the pool-state scanner, publishing to NATS JetStream (split deployment)',
  help: HELP,
  settings: scannerServiceSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, scannerServiceSchema, io);
    checkScannerConfig(loaded.values);
    const logger = createLogger({ name: 'scanner', level: loaded.values['metrics.logLevel'] });
    const pools = monitoredPools(loaded.values);
    // With REDIS_URL the host writes the system:health:scanner heartbeat there.
    const heartbeat = await openSplitKeySpace(io.env);
    let app: ScannerApp;
    try {
      app = await createScannerApp(loaded, { logger, pools, ...(heartbeat === undefined ? {} : { heartbeat }) });
    } catch (err) {
      // A half-built app has closed its host (and with it the heartbeat's store); closing twice is
      // harmless, and covers a refusal before the host took the store.
      await heartbeat?.store.close();
      throw err;
    }
    let endpoints;
    try {
      endpoints = await app.start();
      // With DATABASE_URL the scanner_metrics rows; closed before the rest of the host.
      const state = await startSplitServiceState({ service: 'scanner', env: io.env, logger, scanner: { metrics: app.service.metrics, scannerId: 'scanner' }, heartbeat: false });
      if (state !== undefined) app.host.onClose('scanner metrics', () => state.close());
    } catch (err) {
      await app.close().catch(() => undefined);
      throw err;
    }
    logger.info({ endpoints, pools: pools.length, config: redactedValues(scannerServiceSchema, loaded) }, 'scanner started');
    io.stderr.write(
      [
        `tidepool scanner is running (${pools.length} pools monitored, publishing to ${loaded.values['bus.streamName']} on ${loaded.values['bus.servers'].join(',')}):`,
        `  scanner           ${endpoints.scanner}/health   (also /stats, /config, POST /config/pools)`,
        `  scanner metrics   ${endpoints.scannerMetrics}`,
        '',
      ].join('\n'),
    );
    return app.host.untilShutdown();
  },
};
