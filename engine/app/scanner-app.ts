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
import { BusConnection } from '../bus/index.js';
import { PoolUpdatePublisher } from '../bus/index.js';
import { poolUpdatesStreamSpec } from '../bus/index.js';
import { ensureStream } from '../bus/index.js';
import type { Logger } from '../obs/index.js';
import { scannerSchema } from '../scanner/index.js';
import { createAccountReads, createPoolLoader, createScannerService, createStateSource, type ScannerService } from './scanner-service.js';

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
}

export function createScannerApp(loaded: LoadedConfig<typeof scannerServiceSchema>, options: ScannerAppOptions): ScannerApp {
  const config = loaded.values;
  const log = options.logger;
  const bus = BusConnection.open({ servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: 'tidepool-scanner', logger: log.child({ component: 'bus' }) });
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
  const reads = createAccountReads(config['rpc.endpoints'], config['performance.rpcReadThread'], options.rpcWorkerFilename);
  // scanner.stateSource geyser: pool state from the account stream, read through its reader.
  const stateSource = createStateSource(config, options.pools, reads.fetcher, log.child({ component: 'scanner' }));
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

  let closed: Promise<void> | undefined;
  return {
    service,
    bus,
    publisher,
    async start() {
      const { port, metricsPort } = await service.start();
      return { scanner: `http://127.0.0.1:${port}`, scannerMetrics: `http://127.0.0.1:${metricsPort}/metrics` };
    },
    close() {
      closed ??= (async () => {
        await service.close();
        await bus.close();
        await stateSource.close();
        await reads.close();
      })();
      return closed;
    },
  };
}
