/**
 * engine/console: the operators' web console (issue 18). A node:http server with a WebSocket that
 * pushes live state: services' health and readiness, pools, a quote box, latency charts, published
 * opportunities, trades, wallets by tier, paper trading. `tidepool console` runs it against the
 * services' URLs; `tidepool start` runs it beside its services.
 */
export { startConsole, quoteLatencySource, streamLatencySource, type ConsoleApp, type ConsoleAppOptions } from './console-app.js';
export { consoleSchema, startConsoleSchema, DEFAULT_CONSOLE_PORT } from './console-config.js';
export { ConsoleHub, type ConsoleMessage, type ConsoleState } from './console-hub.js';
export { WS_BEARER_PROTOCOL, staticDir, uplotDir } from './console-server.js';
export { cachePoolRows, RpcPoolRows, type PoolRow, type PoolRowSource } from './pool-rows.js';
export { checkServices, probe, type ServiceProbe, type ServiceStatus } from './service-probes.js';
export { histogramBuckets, bucketQuantile, bucketDelta, IntervalQuantiles, type LatencyPoint } from './latency-window.js';
export { readPlatformView, paperPnl, type PlatformView } from './platform-feed.js';
export { opportunityRow, OpportunityFeed, type OpportunityRow } from './opportunity-feed.js';
