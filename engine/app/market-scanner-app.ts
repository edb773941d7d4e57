/**
 * `tidepool market-scanner` (spec 03, market scanner): MarketEvents and PriceUpdates on the
 * MARKET_EVENTS stream, from the pool-state scanner's own pipeline.
 *
 *   mode blockstream:  block stream ─▶ parse workers ─▶ account reads ─▶ decode ─▶ MarketDataSink
 *                      (createScannerService: the pool-state scanner with another sink; no second parser);
 *                      with scanner.stateSource geyser, the pool-state scanner's account stream instead
 *                      (scanner.geyserUrl). The other modes refuse scanner.stateSource geyser.
 *   mode rpc-polling:  every pollIntervalMs, getMultipleAccounts of the accounts (RpcPoolLoader) ─▶ the
 *                      pools whose account data changed ─▶ MarketDataSink
 *   mode websocket:    one PubSub WebSocket (market.wsUrl), accountSubscribe per account ─▶ each
 *                      accountNotification's pool account, its context accounts by RPC, the same
 *                      RpcPoolLoader decode ─▶ MarketDataSink (PubsubPoolSource: reconnects with
 *                      Backoff, subscribes again and reloads every pool by RPC after a drop)
 *
 * With market.eventState (default on) the loader keeps the accounts it read and reads the mints
 * (an epoch clock over the first RPC endpoint), and each pool_update carries them (`data.state`,
 * engine/market/event-state.ts) for deterministic replays (`tidepool backtest`).
 *
 * At start and every bus reconnect the four platform streams are created or updated with spec 03's
 * settings (ensurePlatformStreams), and the market-events stream (`natsStream`) with its duplicate
 * window set to `dedupWindowMs`. `price:` and `volume:` keys go to REDIS_URL (in process without it).
 *
 * Assembled by the ServiceHost (service-host.ts): one bus connection (no start wait: the scanner
 * runs with the bus down and publishes once it is back), the `system:health:market-scanner`
 * heartbeat in every mode, and, in the websocket and rpc-polling modes, /health, /ready (streams
 * set up, bus connected) and /metrics (market_*) on health.port; blockstream mode keeps the
 * pool-state scanner's health and metrics ports.
 */
import { busAuthOf, heapProfileSchema, httpLimitsOf, redactedValues, setting, type LoadedConfig } from '../config/index.js';
import { bool, duration, int, num, oneOf, str, uniqueList } from '../config/index.js';
import { type BusConnection, NS_PER_MS, PlatformStream, ensurePlatformStreams, ensureStream, platformStreamSpecs, streamSizeSchema } from '../bus/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { LoadedPool } from '../pools/index.js';
import { DEFAULT_ARRAYS_EACH_SIDE } from '../dex/index.js';
import { DEFAULT_SNAPSHOT_INTERVAL_MS, DEFAULT_THRESHOLDS, EventStateWriter, MarketDataSink, MarketPublisher, PubsubPoolSource, registerMarketMetrics } from '../market/index.js';
import { openKeySpace, redisSchema, type KeySpace } from '../state/index.js';
import { pubsubUrlOf } from '../rpc-proxy/index.js';
import { scannerSchema } from '../scanner/index.js';
import { epochSourceOf } from './quote-fallbacks.js';
import { createAccountReads, createPoolLoader, createScannerService, createStateSource, type ScannerService } from './scanner-service.js';
import { ServiceHost } from './service-host.js';

export const MarketScannerMode = { Blockstream: 'blockstream', Websocket: 'websocket', RpcPolling: 'rpc-polling' } as const;
export type MarketScannerMode = (typeof MarketScannerMode)[keyof typeof MarketScannerMode];

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export const marketScannerSchema = {
  ...scannerSchema,
  ...redisSchema,
  ...streamSizeSchema,
  ...heapProfileSchema,
  'market.mode': setting({ description: 'where pool changes come from: blockstream (the block-entry stream, as the pool-state scanner), websocket (accountSubscribe on market.wsUrl, context accounts by RPC), rpc-polling (getMultipleAccounts every pollInterval)', parse: oneOf(['blockstream', 'websocket', 'rpc-polling'] as const), default: 'blockstream' as MarketScannerMode, env: 'MARKET_MODE', flag: 'mode' }),
  'market.accounts': setting({ description: 'pool accounts watched; empty: pools.monitored, then pools.file', parse: uniqueList(str({ nonEmpty: true })), default: [] as string[], env: 'MARKET_ACCOUNTS', flag: 'accounts' }),
  'market.bufferSize': setting({ description: 'messages waiting for their bus acknowledgement beyond which new ones are dropped and counted', parse: int({ min: 1 }), default: 10_000, env: 'MARKET_BUFFER_SIZE', flag: 'buffer-size' }),
  'market.dedupWindowMs': setting({ description: 'duplicate window: a MarketEvent id seen again within it is dropped (locally and by the stream)', parse: duration({ min: 100 }), default: 120_000, env: 'MARKET_DEDUP_WINDOW_MS', flag: 'dedup-window-ms' }),
  'market.natsStream': setting({ description: 'the JetStream stream of market.events.> (spec 03 market.events)', parse: str({ nonEmpty: true }), default: PlatformStream.MarketEvents as string, env: 'MARKET_NATS_STREAM', flag: 'nats-stream' }),
  'market.largeSwapBps': setting({ description: 'a swap is large_swap when its input is at least this share of its side reserve, basis points', parse: num({ min: 0 }), default: DEFAULT_THRESHOLDS.largeSwapBps, env: 'MARKET_LARGE_SWAP_BPS', flag: 'large-swap-bps' }),
  'market.liquidityChangeBps': setting({ description: 'a deposit or withdrawal is liquidity_change when it moves a reserve (or CL active liquidity) by at least this, basis points', parse: num({ min: 0 }), default: DEFAULT_THRESHOLDS.liquidityChangeBps, env: 'MARKET_LIQUIDITY_CHANGE_BPS', flag: 'liquidity-change-bps' }),
  'market.pollInterval': setting({ description: 'rpc-polling: time between two reads of the accounts', parse: duration({ min: 50 }), default: 1_000, env: 'MARKET_POLL_INTERVAL', flag: 'poll-interval' }),
  'market.wsUrl': setting({ description: 'websocket mode: the Solana PubSub URL (ws:// or wss://); empty: the first rpc.endpoints URL with ws for http and its port + 1, as Solana serves it (8899 -> 8900)', parse: str(), default: '', env: 'MARKET_WS_URL', flag: 'ws-url' }),
  'market.eventState': setting({ description: 'each pool_update carries the accounts its state was read from (data.state), for deterministic replays (tidepool backtest); the pools\' mints are read too. After a pool\'s first event, about 2-4 KB per event (DLMM ~16 KB: its active bin array changes with every swap), and a full state (up to ~100 KB for a concentrated or DLMM pool) every market.stateSnapshotInterval', parse: bool(), default: true, env: 'MARKET_EVENT_STATE', flag: 'event-state' }),
  'market.stateSnapshotInterval': setting({ description: 'event state: a pool\'s pool_update carries all its accounts again when this long has passed since its last full state (deltas in between); a replay reads this far before its range', parse: duration({ min: 1_000 }), default: DEFAULT_SNAPSHOT_INTERVAL_MS, env: 'MARKET_STATE_SNAPSHOT_INTERVAL', flag: 'state-snapshot-interval' }),
  'market.subjectPrefix': setting({ description: 'prefix in front of every stream name and subject (tests; empty in deployments)', parse: str(), default: '', env: 'MARKET_SUBJECT_PREFIX', flag: 'subject-prefix' }),
};
export type MarketScannerConfig = { [K in keyof typeof marketScannerSchema]: ReturnType<(typeof marketScannerSchema)[K]['parse']> };

export interface MarketScannerApp {
  /** What every service shares: the bus, the ops port (websocket and rpc-polling modes), the heartbeat, the close stack. */
  readonly host: ServiceHost;
  readonly bus: BusConnection;
  readonly publisher: MarketPublisher;
  readonly sink: MarketDataSink;
  readonly service: ScannerService | undefined;
  /** The websocket mode's PubSub source (its stats: connects, subscriptions, notifications, malformed). */
  readonly pubsub: PubsubPoolSource | undefined;
  /** blockstream: the scanner's health and metrics ports; the other modes: the ops port (`http`). */
  start(): Promise<{ scanner?: string; scannerMetrics?: string; http?: string }>;
  close(): Promise<void>;
}

export interface MarketScannerAppOptions {
  logger: Logger;
  accounts: readonly string[];
  parseWorkerFilename?: string;
  rpcWorkerFilename?: string;
}

/** Throws TP_ERR_CONFIG_INVALID for a setting the market scanner cannot run with. */
export function checkMarketScannerConfig(config: MarketScannerConfig, accounts: readonly string[]): void {
  // The account stream replaces the pool-state scanner's RPC re-reads: the blockstream mode's pipeline.
  if (config['scanner.stateSource'] === 'geyser' && config['market.mode'] !== MarketScannerMode.Blockstream) {
    throw new TpError(ErrorCode.ConfigInvalid, `scanner.stateSource geyser needs market.mode blockstream (the pool-state scanner's pipeline); market.mode ${config['market.mode']} reads pools its own way`, { context: { setting: 'scanner.stateSource' } });
  }
  if (config['market.mode'] === MarketScannerMode.Websocket) {
    const ws = marketWsUrl(config);
    if (!/^wss?:\/\/[^/]/.test(ws)) throw new TpError(ErrorCode.ConfigInvalid, `market.wsUrl: ${ws} is not a ws:// or wss:// URL`, { context: { setting: 'market.wsUrl' } });
  }
  const bad = accounts.find((a) => !BASE58_ADDRESS.test(a));
  if (bad !== undefined) throw new TpError(ErrorCode.ConfigInvalid, `market.accounts: ${bad} is not a base58 address`, { context: { setting: 'market.accounts' } });
  if (accounts.length === 0) throw new TpError(ErrorCode.ConfigInvalid, 'no accounts to watch: set market.accounts, pools.monitored or pools.file', { context: { setting: 'market.accounts' } });
}

/** The PubSub URL of the websocket mode: market.wsUrl, else derived from the first RPC endpoint. */
export function marketWsUrl(config: MarketScannerConfig): string {
  const explicit = config['market.wsUrl'];
  if (explicit !== '') return explicit;
  const rpc = config['rpc.endpoints'][0];
  return rpc === undefined ? '' : pubsubUrlOf(rpc);
}

export async function createMarketScannerApp(loaded: LoadedConfig<typeof marketScannerSchema>, options: MarketScannerAppOptions): Promise<MarketScannerApp> {
  const config = loaded.values as MarketScannerConfig;
  const log = options.logger;
  checkMarketScannerConfig(config, options.accounts);
  const mode = config['market.mode'];
  const prefix = config['market.subjectPrefix'];
  let streamsReady = false;
  let pubsub: PubsubPoolSource | undefined;
  let publisher: MarketPublisher | undefined;
  return ServiceHost.assemble(
    {
      service: 'market-scanner',
      logger: log,
      heapProfile: config['debug.heapProfile'],
      // No start wait: the scanner starts with the bus down, drops and counts what it cannot publish
      // meanwhile, and says so in /health, /ready and its heartbeat until the bus is there.
      bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), startWaitMs: 0 },
      // blockstream mode: the pool-state scanner's own ports (health.port, metrics.prometheusPort) serve
      // its probes; the other modes get the host's ops port on health.port.
      ...(mode === MarketScannerMode.Blockstream
        ? {}
        : { http: { host: '127.0.0.1', port: config['health.port'], portSetting: 'health.port (HEALTH_PORT, --health-port)', limits: httpLimitsOf(config) } }),
      health: () => ({ mode, accounts: options.accounts.length, published: publisher?.stats, ...(pubsub === undefined ? {} : { pubsub: { ...pubsub.stats, subscribed: pubsub.subscribed } }) }),
      ready: async () => ({ ok: streamsReady, detail: { mode, streams: streamsReady } }),
    },
    async (host) => {
      // A shutdown during the start ends this wait (host.signal): the build then closes what it opened.
      const keys: KeySpace = await host.open('key space', openKeySpace({ url: config['redis.url'], password: config['redis.password'], prefix: config['redis.keyPrefix'] }), (k) => k.store.close());
      host.heartbeatTo(keys);
      const reads = createAccountReads(config['rpc.endpoints'], config['performance.rpcReadThread'], options.rpcWorkerFilename);
      host.onClose('account reads', () => reads.close());
      // Event state: the mints too (a replay must know a pool's Token-2022 transfer fees, as the planner does).
      const withState = config['market.eventState'];
      const epochs = withState ? epochSourceOf(config['rpc.endpoints']) : undefined;
      if (epochs !== undefined) host.onClose('epoch clock', () => epochs.close());
      const bus = await host.openBus();
      host.publishMetrics({ prefix });
      const maxBytesScale = config['bus.streamMaxBytesScale'];
      const marketStream = platformStreamSpecs({ replicas: 1, prefix, maxBytesScale }).find((s) => s.name === `${prefix}${PlatformStream.MarketEvents}`)!;
      bus.onConnect(async (nc) => {
        streamsReady = false;
        const jsm = await nc.jetstreamManager();
        const infos = await ensurePlatformStreams(jsm, { nc, prefix, maxBytesScale });
        const replicas = infos[0]?.config.num_replicas ?? 1;
        await ensureStream(jsm, { ...marketStream, name: config['market.natsStream'] === PlatformStream.MarketEvents ? marketStream.name : config['market.natsStream'], replicas, duplicateWindowNs: config['market.dedupWindowMs'] * NS_PER_MS });
        streamsReady = true;
        startPubsub();
      });
      const published = new MarketPublisher({ js: () => bus.jetstream(), keys, bufferSize: config['market.bufferSize'], dedupWindowMs: config['market.dedupWindowMs'], prefix });
      publisher = published;
      host.onClose('publisher', () => published.drain());
      const eventState = withState ? new EventStateWriter({ snapshotIntervalMs: config['market.stateSnapshotInterval'], arraysEachSide: DEFAULT_ARRAYS_EACH_SIDE }) : undefined;
      const sink = new MarketDataSink(published, { largeSwapBps: config['market.largeSwapBps'], liquidityChangeBps: config['market.liquidityChangeBps'] }, Date.now, eventState);
      const loaderOptions = { keepAccounts: withState };
      // scanner.stateSource geyser (blockstream mode only, checkMarketScannerConfig): the scanner's pool
      // state from the account stream, read through its reader, as the pool-state scanner does.
      const stateSource = createStateSource(config, options.accounts, reads.fetcher, log.child({ component: 'market-scanner' }));
      host.onClose('state source', () => stateSource.close());
      const loader = createPoolLoader(config, stateSource.reader, epochs?.epochs, { keepAccounts: withState || stateSource.geyser !== undefined });
      const service =
        mode === MarketScannerMode.Blockstream
          ? createScannerService({
              config,
              sink,
              loader,
              fetcher: reads.fetcher,
              pools: options.accounts,
              metricsPort: config['metrics.prometheusPort'],
              ...(stateSource.geyser === undefined ? {} : { geyser: stateSource.geyser }),
              configView: () => redactedValues(marketScannerSchema, loaded),
              busStatus: () => bus.status,
              logger: log.child({ component: 'market-scanner' }),
              ...(options.parseWorkerFilename === undefined ? {} : { parseWorkerFilename: options.parseWorkerFilename }),
            })
          : undefined;
      if (service !== undefined) host.onClose('scanner', () => service.close());

      // The accounts whose data changed since the last state handed to the sink (both modes that read).
      const lastData = new Map<string, string>();
      const observeIfChanged = (loaded: LoadedPool): Promise<void> => {
        const data = Buffer.from(loaded.data).toString('base64') + (loaded.reserves?.join(':') ?? '');
        if (lastData.get(loaded.address) === data) return Promise.resolve();
        lastData.set(loaded.address, data);
        return sink.observe(loaded);
      };
      pubsub =
        mode === MarketScannerMode.Websocket
          ? new PubsubPoolSource({
              wsUrl: marketWsUrl(config),
              accounts: options.accounts,
              fetcher: reads.fetcher,
              createLoader: (reader) => createPoolLoader(config, reader, epochs?.epochs, loaderOptions),
              onState: observeIfChanged,
              logger: log.child({ component: 'market-pubsub' }),
            })
          : undefined;
      const source = pubsub;
      if (source !== undefined) host.onClose('pubsub', () => source.close());
      registerMarketMetrics(host.registry, published, source);

      // websocket: subscribed once start() was called and the streams exist (the catch-up load that
      // follows the subscriptions would otherwise be published to no stream); a bus reconnect later
      // leaves the PubSub connection alone.
      let wanted = false;
      let pubsubStarted = false;
      function startPubsub(): void {
        if (source === undefined || !wanted || !streamsReady || pubsubStarted) return;
        pubsubStarted = true;
        source.start();
      }

      // rpc-polling: the accounts whose data changed since the last read.
      let pollTimer: NodeJS.Timeout | undefined;
      let polling: Promise<void> | undefined;
      const pollOnce = async (): Promise<void> => {
        // Nothing is read while the bus or the streams are not there: a change seen then would be lost.
        if (!streamsReady || bus.jetstream() === undefined) return;
        // The host's close aborts a poll under way.
        const results = await loader.load(options.accounts, { signal: host.signal });
        const work: Promise<void>[] = [];
        for (const r of results) {
          if (!r.ok) {
            log.warn({ pool: r.error.address, reason: r.error.reason, message: r.error.message }, 'market scanner could not read a pool');
            continue;
          }
          work.push(observeIfChanged(r.value));
        }
        await Promise.all(work);
      };
      const schedulePoll = (): void => {
        pollTimer = setTimeout(() => {
          polling = pollOnce()
            .catch((err: unknown) => log.error({ err }, 'market scanner poll failed'))
            .finally(() => {
              polling = undefined;
              if (pollTimer !== undefined) schedulePoll();
            });
        }, config['market.pollInterval']);
      };
      host.onClose('polling', async () => {
        if (pollTimer !== undefined) clearTimeout(pollTimer);
        pollTimer = undefined;
        await polling;
      });

      const app: MarketScannerApp = {
        host,
        bus,
        publisher: published,
        sink,
        service,
        pubsub: source,
        async start() {
          if (service !== undefined) {
            const { port, metricsPort } = await service.start();
            await host.start();
            return { scanner: `http://127.0.0.1:${port}`, scannerMetrics: `http://127.0.0.1:${metricsPort}/metrics` };
          }
          const { http } = await host.start();
          if (source !== undefined) {
            wanted = true;
            startPubsub();
          } else schedulePoll();
          return http === undefined ? {} : { http };
        },
        close: () => host.close(),
      };
      return app;
    },
  );
}
