/**
 * `tidepool scanner` (split deployment, issue 5): the scanner service of `createScannerService` with
 * the bus publisher as its sink. At every bus (re)connect the POOL_UPDATES stream is set up
 * (idempotent). Events that cannot be published (bus down, too many in flight, no ack after the
 * retries) are counted in `bus_publish_errors_total` by the scanner and dropped: the quote services
 * fall back to RPC for what they miss (spec 02, "message bus down").
 *
 * Settings are the scanner's (spec 02), with one default changed: `events.includeRawData` is on,
 * because the quote service quotes from the decoded pool account and the event only carries it in
 * `state.rawData` (see engine/quote/pool-context-reader.ts for the accounts beside it).
 */
import { authSchema } from '../auth/index.js';
import { busAuthOf, redactedValues, setting, type LoadedConfig } from '../config/index.js';
import { bool } from '../config/index.js';
import type { BusConnection } from '../bus/index.js';
import { PoolUpdatePublisher } from '../bus/index.js';
import { poolUpdatesStreamSpec } from '../bus/index.js';
import { ensureStream } from '../bus/index.js';
import type { Logger } from '../obs/index.js';
import { scannerSchema } from '../scanner/index.js';
import { HeartbeatStatus, type KeySpace } from '../state/index.js';
import { createAccountReads, createPoolLoader, createScannerService, createStateSource, type ScannerService } from './scanner-service.js';
import { ServiceHost } from './service-host.js';

export const scannerServiceSchema = {
  ...scannerSchema,
  /** JWT bearer auth of POST /config/pools (engine/auth); `auto` is off on the loopback-bound port. */
  ...authSchema,
  'events.includeRawData': setting({
    description: "put the base64 pool account data in each event's state.rawData (the quote service decodes it; off: the cache cannot quote)",
    parse: bool(),
    default: true,
    env: 'EVENTS_RAW_DATA',
    flag: 'events-raw-data',
  }),
};

export interface ScannerAppEndpoints {
  scanner: string;
  scannerMetrics: string;
}

export interface ScannerApp {
  /** The bus, the heartbeat, the close stack, SIGTERM. */
  readonly host: ServiceHost;
  readonly service: ScannerService;
  readonly bus: BusConnection;
  readonly publisher: PoolUpdatePublisher;
  start(): Promise<ScannerAppEndpoints>;
  /** Stops the stream, publishes what the scanner holds, drains the bus, closes the ports. Idempotent. */
  close(): Promise<void>;
}

export interface ScannerAppOptions {
  logger: Logger;
  pools: readonly string[];
  parseWorkerFilename?: string;
  rpcWorkerFilename?: string;
  /** Subject root other than `pool.state.updated` (tests). */
  subjectRoot?: string;
  /** Where the `system:health:scanner` heartbeat goes (the host closes its store); none: no heartbeat. */
  heartbeat?: KeySpace;
}

/**
 * Builds the scanner on its host (nothing listens until `start`). A build that fails half way has
 * closed what it had opened (in reverse) before the promise rejects.
 */
export async function createScannerApp(loaded: LoadedConfig<typeof scannerServiceSchema>, options: ScannerAppOptions): Promise<ScannerApp> {
  const config = loaded.values;
  return ServiceHost.assemble(
    {
      service: 'scanner',
      logger: options.logger,
      // No start wait: the scanner starts with the bus down, counts what it cannot publish meanwhile
      // and says so in /health (bus_unavailable).
      bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: 'tidepool-scanner', startWaitMs: 0 },
      // Its heartbeat says ok, as before the host: /health tells the bus's state.
      heartbeatStatus: () => ({ status: HeartbeatStatus.Ok }),
    },
    async (host) => assembleScannerApp(loaded, options, host),
  );
}

function assembleScannerApp(loaded: LoadedConfig<typeof scannerServiceSchema>, options: ScannerAppOptions, host: ServiceHost): ScannerApp {
  const config = loaded.values;
  const log = options.logger;
  const keys = options.heartbeat;
  if (keys !== undefined) {
    host.onClose('key space', () => keys.store.close());
    host.heartbeatTo(keys);
  }
  const reads = createAccountReads(config['rpc.endpoints'], config['performance.rpcReadThread'], options.rpcWorkerFilename);
  host.onClose('account reads', () => reads.close());
  // scanner.stateSource geyser: pool state from the account stream, read through its reader.
  const stateSource = createStateSource(config, options.pools, reads.fetcher, log.child({ component: 'scanner' }));
  host.onClose('state source', () => stateSource.close());
  const bus = host.openBusInBackground();
  const streamSpec = poolUpdatesStreamSpec({
    streamName: config['bus.streamName'],
    maxAgeMs: config['bus.maxAge'],
    ...(options.subjectRoot === undefined ? {} : { subjectRoot: options.subjectRoot }),
  });
  bus.onConnect(async (nc) => {
    await ensureStream(await nc.jetstreamManager(), streamSpec);
  });
  const publisher = new PoolUpdatePublisher({
    bus,
    streamName: streamSpec.name,
    ...(options.subjectRoot === undefined ? {} : { subjectRoot: options.subjectRoot }),
  });
  const loader = createPoolLoader(config, stateSource.reader, undefined, { keepAccounts: stateSource.geyser !== undefined });
  const service = createScannerService({
    config,
    sink: publisher,
    loader,
    fetcher: reads.fetcher,
    pools: options.pools,
    metricsPort: config['metrics.prometheusPort'],
    configView: () => redactedValues(scannerServiceSchema, loaded),
    busStatus: () => bus.status,
    auth: config,
    logger: log.child({ component: 'scanner' }),
    ...(stateSource.geyser === undefined ? {} : { geyser: stateSource.geyser }),
    ...(options.parseWorkerFilename === undefined ? {} : { parseWorkerFilename: options.parseWorkerFilename }),
  });
  // Closed first: the stream stops and what the scanner holds is published before the bus drains.
  host.onClose('scanner', () => service.close());

  return {
    host,
    service,
    bus,
    publisher,
    async start() {
      const { port, metricsPort } = await service.start((port, bind) => host.listen(port, bind));
      await host.start();
      return { scanner: `http://127.0.0.1:${port}`, scannerMetrics: `http://127.0.0.1:${metricsPort}/metrics` };
    },
    close: () => host.close(),
  };
}
