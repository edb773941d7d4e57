/** The message bus (NATS JetStream): what the rest of the engine may use. */
export { BusConnection, BusStatus, connectBus, disabledBusStatus, type BusConnectionOptions, type ConnectListener } from './connection.js';
export { busAuthError, natsConnectOptions, redactServer } from './bus-auth.js';
export {
  ensureStream,
  ensureConsumer,
  streamConfigOf,
  consumerConfigOf,
  Retention,
  Storage,
  NS_PER_MS,
  NS_PER_SECOND,
  DEFAULT_ACK_WAIT_NS,
  DEFAULT_DUPLICATE_WINDOW_NS,
  DEFAULT_MAX_MSG_SIZE,
  type StreamSpec,
  type ConsumerSpec,
} from './stream-setup.js';
export {
  POOL_UPDATES_STREAM,
  POOL_UPDATES_SUBJECT_ROOT,
  POOL_UPDATES_MAX_AGE_MS,
  POOL_UPDATES_MAX_ACK_PENDING,
  DEFAULT_CONSUMER_NAME,
  poolUpdatesFilter,
  poolUpdateSubject,
  poolUpdatesStreamSpec,
  poolUpdatesConsumerSpec,
  type PoolUpdatesStreamOptions,
  type PoolUpdatesConsumerOptions,
} from './pool-updates.js';
export { JetStreamPipeline, type JetStreamPipelineOptions, type PipelineBus, type PublishAck } from './jetstream-pipeline.js';
export { PoolUpdatePublisher, DEFAULT_MAX_IN_FLIGHT, DEFAULT_PUBLISH_RETRIES, DEFAULT_PUBLISH_TIMEOUT_MS, type PoolUpdatePublisherOptions, type PoolUpdatePublisherStats, type PublisherBus } from './pool-update-publisher.js';
export { PoolUpdateConsumer, type PoolUpdateConsumerOptions, type PoolUpdateConsumerStats, type PoolUpdateSink } from './pool-update-consumer.js';
export {
  PlatformStream,
  PLATFORM_STREAMS,
  CLUSTER_REPLICAS,
  platformStreamSpecs,
  detectReplicas,
  ensurePlatformStreams,
  platformConsumerSpec,
  scaledMaxBytes,
  streamSizeSchema,
  STREAM_MAX_BYTES_SCALE_SETTING,
  type PlatformStreamOptions,
} from './platform-streams.js';
export {
  DeadLetterConsumer,
  DEAD_LETTER_STREAM,
  DEAD_LETTER_SUBJECT_ROOT,
  DeadLetterHeader,
  deadLetterSubject,
  deadLetterStreamSpec,
  ensureDeadLetterStream,
  createDeadLetterMetrics,
  type DeadLetterMetrics,
  type DeferDelivery,
  type MessageHandler,
} from './dead-letter.js';
export { durableNameOf, ensurePlatformBus } from './platform-bus.js';
export {
  SWAP_ROUTES_STREAM,
  SWAP_ROUTES_SUBJECT_ROOT,
  SWAP_ROUTES_MAX_AGE_MS,
  SWAP_ROUTES_MAX_BYTES,
  swapRoutesFilter,
  swapRoutesStreamSpec,
  ensureSwapRoutesStream,
  type SwapRoutesStreamOptions,
} from './swap-route-stream.js';
