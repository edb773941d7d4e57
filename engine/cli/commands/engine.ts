import { ServiceHost, engineSchema, loadEngineConfig } from '../../app/index.js';
import { createEngine, type EngineEndpoints } from '../../app/index.js';
import { redactedValues, refuseLoopbackDefaults } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { openSplitKeySpace, openSplitQuoteCache } from '../../state/index.js';
import { monitoredPools, type ScannerConfig } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool engine [options]

Runs the scanner and the quote service in one process (spec 02) against real endpoints: the
block-entry stream (ShredStream proxy gRPC) and Solana JSON-RPC. The scanner parses entries in
worker threads, reads the state of every monitored pool a transaction touches, and stores it in the
quote service's pool cache; quotes are served from the cache with an RPC fallback.
With REDIS_URL the shared quote cache is there, and so is the system:health:engine heartbeat.
SIGTERM, Ctrl-C or the parent process exiting drains and exits 0. For a local chain instead, run
'tidepool start'.

${settingsHelp(engineSchema)}
`;

/** The endpoint lines both engine commands print. */
export function endpointLines(e: EngineEndpoints): string[] {
  return [
    `  quotes            ${e.quote}/quote   (also /health, /debug/pprof/heap)`,
    `  quote metrics     ${e.quoteMetrics}`,
    `  local quotes      grpc://${e.localQuotes}   (tidepool.v1.QuoteService/StreamBatchQuotes)`,
    `  scanner           ${e.scanner}/health   (also /stats, /config, POST /config/pools)`,
    `  scanner metrics   ${e.scannerMetrics}`,
  ];
}

export const engineCommand: Command = {
  name: 'engine',
  summary: 'run the scanner and the quote service in one process against real endpoints',
  help: HELP,
  settings: engineSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, engineSchema, io, { load: loadEngineConfig });
    // A remote RPC with the external fallback left at the simulator's loopback URL is a mistake.
    refuseLoopbackDefaults(engineSchema, loaded, ['rpc.endpoints'], loaded.values['externalFallback.enabled'] ? ['externalFallback.quoteUrl'] : []);
    const logger = createLogger({ name: 'engine', level: loaded.values['log.level'] });
    const pools = monitoredPools(loaded.values as unknown as ScannerConfig);
    // One close stack (ServiceHost): the engine closes before the quote cache it writes to, and a
    // start that fails half way, or a SIGTERM during it, closes what was opened.
    const { host, endpoints } = await ServiceHost.assemble({ service: 'engine', logger }, async (host, signal) => {
      // quote: / price: keys: Redis when REDIS_URL is set, else in this process (written only).
      const quoteCache = await openSplitQuoteCache({ env: io.env, logger: logger.child({ component: 'quote-cache' }) });
      host.onClose('quote cache', () => quoteCache.close());
      // With REDIS_URL the host writes the system:health:engine heartbeat there.
      const heartbeat = await openSplitKeySpace(io.env);
      if (heartbeat !== undefined) {
        host.onClose('heartbeat key space', () => heartbeat.store.close());
        host.heartbeatTo(heartbeat);
      }
      const engine = createEngine(loaded, { logger, pools, sharedQuoteCache: quoteCache.cache });
      host.onClose('engine', () => engine.close());
      const endpoints = await engine.start(signal);
      await host.start();
      return { host, endpoints };
    });
    logger.info({ endpoints, pools: pools.length, config: redactedValues(engineSchema, loaded) }, 'engine started');
    io.stderr.write(['tidepool engine is running:', ...endpointLines(endpoints), ''].join('\n'));
    return host.untilShutdown();
  },
};
