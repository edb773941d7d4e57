/**
 * `tidepool signal-source`: a signal model over the market events, its signals on the bus.
 *
 *   start: the platform streams; the durable consumer `signal_source_<id>` on
 *          market.events.*.pool_update (stream MARKET_EVENTS; a new one starts at the stream's end);
 *          then the history of the last `signals.warmWindow` up to where that consumer stands is
 *          replayed through the model without publishing (SignalSource.warm), so a restarted
 *          source is trusted again as soon as its rebuilt model is, not one warm-up later
 *   run:   each event once, in stream order, through the model; its signals published on
 *          signals.<source> (stream SIGNALS, message id = signal id); dead-letter after 5 failures
 *   host:  assembled by the ServiceHost (service-host.ts): the bus (credentials and TLS as every
 *          service's, 5 s start wait), the `system:health:signal-source` heartbeat in REDIS_URL,
 *          the close stack
 *   HTTP:  GET /health, GET /ready (bus up, consumer running), GET /metrics on signals.port (8087)
 */
import { DeliverPolicy, type NatsConnection } from 'nats';
import type { Registry } from 'prom-client';

import { DeadLetterConsumer, PlatformStream, createDeadLetterMetrics, durableNameOf, ensureConsumer, ensurePlatformBus, platformConsumerSpec, streamSizeSchema } from '../bus/index.js';
import { busAuthOf, busAuthSchema, duration, heapProfileSchema, httpLimitsOf, httpServerSchema, int, num, setting, str, type LoadedConfig } from '../config/index.js';
import { decodeMarketEvent } from '../messages/index.js';
import type { Logger } from '../obs/index.js';
import { scannerSchema } from '../scanner/index.js';
import { SignalPublisher, SignalSource, SignalSourceMetrics, TrendModel, loadSignalModel, type SignalModel } from '../signals/index.js';
import { abortable } from '../rpc/index.js';
import { openKeySpace, redisSchema } from '../state/index.js';
import { ServiceHost } from './service-host.js';

export const signalSourceSchema = {
  'bus.servers': scannerSchema['bus.servers'],
  ...busAuthSchema,
  ...streamSizeSchema,
  ...redisSchema,
  ...httpServerSchema,
  ...heapProfileSchema,
  'metrics.logLevel': scannerSchema['metrics.logLevel'],
  'signals.model': setting({ description: 'ES module of your own signal model (engine/signals/README.md); empty: the built-in trend model', parse: str(), default: '', env: 'SIGNAL_MODEL', flag: 'model' }),
  'signals.horizon': setting({ description: 'how far ahead the built-in model predicts (and its signals\' horizon)', parse: duration({ min: 1_000 }), default: 60_000, env: 'SIGNAL_HORIZON', flag: 'horizon' }),
  'signals.minConfidence': setting({ description: 'least probability the built-in model needs to speak', parse: num({ min: 0.5, max: 1 }), default: 0.55, env: 'SIGNAL_MIN_CONFIDENCE', flag: 'min-confidence' }),
  'signals.warmWindow': setting({ description: 'market-event history replayed through the model at start, without publishing', parse: duration(), default: 2 * 3_600_000, env: 'SIGNAL_WARM_WINDOW', flag: 'warm-window' }),
  'signals.id': setting({ description: 'source id: the durable consumer signal_source_<id>', parse: str({ nonEmpty: true }), default: 'trend', env: 'SIGNAL_SOURCE_ID', flag: 'source-id' }),
  'signals.host': setting({ description: 'bind address of the probes and /metrics', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'SIGNAL_SOURCE_HOST', flag: 'host' }),
  'signals.port': setting({ description: 'HTTP port: /health, /ready, /metrics', parse: int({ min: 0, max: 65_535 }), default: 8087, env: 'SIGNAL_SOURCE_PORT', flag: 'port' }),
  'signals.subjectPrefix': setting({ description: 'prefix in front of every stream name and subject (tests; empty in deployments)', parse: str(), default: '', env: 'SIGNAL_SOURCE_SUBJECT_PREFIX', flag: 'subject-prefix' }),
};
export type SignalSourceConfig = { [K in keyof typeof signalSourceSchema]: ReturnType<(typeof signalSourceSchema)[K]['parse']> };

export interface SignalSourceAppOptions {
  logger: Logger;
  /** Wall clock of the warm window; default Date.now. */
  now?: () => number;
  retryDelayMs?: number;
}

export interface SignalSourceApp {
  /** The bus, the ops port (probes, metrics), the `system:health:signal-source` heartbeat and the close stack. */
  readonly host: ServiceHost;
  readonly model: SignalModel;
  readonly source: SignalSource;
  readonly registry: Registry;
  /** Events observed without publishing at start. */
  readonly warmed: number;
  start(): Promise<{ http: string }>;
  close(): Promise<void>;
}

export async function createSignalSourceApp(loaded: LoadedConfig<typeof signalSourceSchema>, options: SignalSourceAppOptions): Promise<SignalSourceApp> {
  const config = loaded.values as SignalSourceConfig;
  const log = options.logger;
  const now = options.now ?? Date.now;
  const prefix = config['signals.subjectPrefix'];
  const modelOptions = { horizonMs: config['signals.horizon'], minConfidence: config['signals.minConfidence'] };
  const model = config['signals.model'] === '' ? new TrendModel(modelOptions) : await loadSignalModel(config['signals.model'], modelOptions);
  let consumerRunning = false;
  let warmedCount = 0;
  return ServiceHost.assemble(
    {
      service: 'signal-source',
      logger: log,
      heapProfile: config['debug.heapProfile'],
      bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: `tidepool-signal-source-${config['signals.id']}` },
      http: { host: config['signals.host'], port: config['signals.port'], portSetting: 'signals.port (SIGNAL_SOURCE_PORT, --port)', limits: httpLimitsOf(config) },
      health: () => ({ source: model.source, warmed: warmedCount }),
      ready: async () => ({ ok: consumerRunning }),
    },
    async (host, signal) => {
      // Every start wait ends at a shutdown (host.signal): the build then closes what it opened.
      const keys = await host.open('key space', openKeySpace({ url: config['redis.url'], password: config['redis.password'], prefix: config['redis.keyPrefix'] }), (k) => k.store.close());
      host.heartbeatTo(keys);
      const registry = host.registry;
      const nc: NatsConnection = (await host.openBus()).connection!;
      const jsm = await host.wait(ensurePlatformBus(nc, { prefix, maxBytesScale: config['bus.streamMaxBytesScale'] }));
      host.publishMetrics({ prefix });
      const stream = `${prefix}${PlatformStream.MarketEvents}`;
      const filter = `${prefix}market.events.*.pool_update`;
      const consumerName = durableNameOf('signal_source', config['signals.id']);
      const info = await host.wait(ensureConsumer(jsm, { ...platformConsumerSpec(stream, consumerName, filter), deliverPolicy: 'new' }));

      const source = new SignalSource({ model, publisher: new SignalPublisher(nc.jetstream(), prefix), metrics: new SignalSourceMetrics(registry, model), logger: log.child({ component: 'signal-source' }) });
      // Where the consumer stands: a new one (nothing delivered yet) at the stream's end when it was
      // made; one that has delivered, at its ack floor (what is past it will be delivered again).
      const until = info.delivered.consumer_seq === 0 ? info.delivered.stream_seq : info.ack_floor.stream_seq;
      const warmed = await warm(nc, stream, filter, until, now() - config['signals.warmWindow'], source, log, signal);
      warmedCount = warmed;
      const dlqMetrics = createDeadLetterMetrics(registry);

      const app: SignalSourceApp = {
        host,
        model,
        source,
        registry,
        warmed,
        async start() {
          await host.open(
            'market events consumer',
            DeadLetterConsumer.start({
              nc,
              stream,
              consumer: consumerName,
              metrics: dlqMetrics,
              subjectRoot: `${prefix}dlq`,
              ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
              logger: log.child({ component: 'consumer' }),
              handler: async (msg) => {
                await source.handle(decodeMarketEvent(msg.data), msg.seq);
              },
            }),
            async (consumer) => {
              consumerRunning = false;
              await consumer.stop();
            },
          );
          consumerRunning = true;
          const { http } = await host.start();
          return { http: http! };
        },
        close: () => host.close(),
      };
      return app;
    },
  );
}

/**
 * The pool updates of `stream` since `sinceMs`, up to stream sequence `until` (where the durable
 * consumer stands: it takes the rest), through the model without publishing. Returns how many.
 * `signal` ends it: it rejects with the signal's reason.
 */
async function warm(nc: NatsConnection, stream: string, filter: string, until: number, sinceMs: number, source: SignalSource, log: Logger, signal: AbortSignal): Promise<number> {
  if (until === 0) return 0;
  const consumer = await abortable(nc.jetstream().consumers.get(stream, { filterSubjects: filter, deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(Math.max(0, sinceMs)).toISOString() }), signal);
  if ((await abortable(consumer.info(), signal)).num_pending === 0) return 0;
  const messages = await abortable(consumer.consume({ max_messages: 512 }), signal);
  const stop = (): void => void messages.stop();
  signal.addEventListener('abort', stop, { once: true });
  let warmed = 0;
  // The stream's last message says pending 0; should it never come, stop when nothing arrives.
  let idle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    idle = setTimeout(() => messages.stop(), 2000);
  };
  arm();
  try {
    for await (const msg of messages) {
      if (msg.seq > until) break;
      try {
        source.warm(decodeMarketEvent(msg.data), msg.seq);
        warmed++;
      } catch (err) {
        log.warn({ seq: msg.seq, err: (err as Error).message }, 'market event skipped while warming the model');
      }
      if (msg.seq === until || msg.info.pending === 0) break;
      arm();
    }
  } finally {
    if (idle !== undefined) clearTimeout(idle);
    signal.removeEventListener('abort', stop);
    messages.stop();
  }
  signal.throwIfAborted();
  log.info({ warmed, until }, 'signal model warmed on the stream history');
  return warmed;
}
