/**
 * The simulator's Solana JSON-RPC servers (HTTP and PubSub WebSocket) over a ChainBackend, and an
 * in-memory ChainBackend for tests.
 */
export {
  DEFAULT_RPC_HTTP_PORT,
  JsonRpcHttpServer,
  MAX_REQUEST_BODY_BYTES,
  RPC_HTTP_METHODS,
  type JsonRpcHttpServerOptions,
} from './json-rpc-http.js';
export { DEFAULT_RPC_WS_PORT, JsonRpcWsServer, MAX_WS_MESSAGE_BYTES, type JsonRpcWsServerOptions } from './json-rpc-ws.js';
export { JsonRpcEndpoint, type JsonRpcEndpointOptions, type RpcMethodHandler, type RpcReply } from './json-rpc-endpoint.js';
export {
  DEFAULT_COMMITMENT,
  DEFAULT_NODE_INFO,
  DEFAULT_RPC_HOST,
  type BoundAddress,
  type RpcChainBackend,
  type RpcChainExtras,
  type RpcNodeInfo,
} from './rpc-backend.js';
export { MemoryBackend, type MemoryBackendOptions } from './memory-backend.js';
export { writeJson } from './json-text.js';
export { zstdRawFrame } from './zstd-raw-frame.js';
