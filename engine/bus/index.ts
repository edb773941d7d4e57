/** The message bus (NATS JetStream): what the rest of the engine may use. */
export { BusConnection, BusStatus, disabledBusStatus, type BusConnectionOptions, type ConnectListener } from './connection.js';
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
