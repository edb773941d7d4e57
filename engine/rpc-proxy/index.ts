/**
 * engine/rpc-proxy: `tidepool rpc-proxy`, one Solana JSON-RPC front (HTTP and PubSub
 * WebSocket) for every service, over several RPC providers: pooled keep-alive connections, round
 * robin over the healthy endpoints, health checks, reads retried elsewhere, writes never sent
 * twice, subscriptions that survive their upstream. README.md documents the API and settings.
 */
export { createRpcProxy, type EndpointHealth, type RpcProxy, type RpcProxyHealth, type RpcProxyOptions } from './rpc-proxy.js';
export {
  rpcProxySchema,
  loadRpcProxyConfig,
  defaultRpcProxyConfig,
  pubsubUrlOf,
  DEFAULT_RPC_PROXY_PORT,
  type RpcProxyConfig,
} from './rpc-proxy-config.js';
export { RpcProxyPath } from './rpc-proxy-server.js';
export { JsonRpcErrorCode } from './proxy-errors.js';
export { READ_METHODS, isReadMethod } from './rpc-methods.js';
export { RPC_PROXY_METRIC_NAMES } from './rpc-proxy-metrics.js';
export { EndpointState } from './upstream-endpoint.js';
export { UpstreamPubsub, connectionLost, type CallAnswer, type PubsubPeer, type UpstreamPubsubEvents } from './upstream-pubsub.js';
export type { Notification } from './pubsub-message.js';
export { MAX_SUBSCRIPTIONS_PER_CLIENT } from './subscription-hub.js';
