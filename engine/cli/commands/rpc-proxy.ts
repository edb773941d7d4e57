import { createRpcProxyApp, type RpcProxyApp } from '../../app/index.js';
import { createLogger } from '../../obs/index.js';
import { loadRpcProxyConfig, rpcProxySchema } from '../../rpc-proxy/index.js';
import { openSplitKeySpace, type KeySpace } from '../../state/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool rpc-proxy [options]

The RPC proxy of spec 03: one Solana JSON-RPC front for every service, in front of several RPC
endpoints (-endpoints, RPC_PROXY_ENDPOINTS; default the simulator's http://127.0.0.1:8899).
  POST /rpc          JSON-RPC calls and batches, over keep-alive connection pools, round robin over
                     the endpoints in rotation. Reads are retried on another endpoint after a
                     network error, timeout, 5xx or 429 (-retry-count); sendTransaction and every
                     other write (any method not on the read list) is delivered to one endpoint,
                     once, and never sent again.
  WS   /rpc/ws       subscriptions, held on an endpoint in rotation and subscribed again on another
                     when it fails; clients keep their subscription ids.
  GET  /rpc/health   each endpoint's state (up, down, lagging), slot, lag, latency, errors
  GET  /rpc/metrics  Prometheus metrics
  GET  /health, /ready   liveness, readiness (an endpoint in rotation)
Endpoints are checked with getHealth and getSlot every -health-check-interval (30 s): one that
fails, times out, or lags the best slot by more than -max-slot-lag slots leaves rotation until a
check passes. Endpoint URLs may carry API keys: logs, metrics and /rpc/health name endpoints by
host:port only. SIGTERM or Ctrl-C: stops taking calls, answers those in flight (up to
-shutdown-timeout), closes WebSockets (1001), exits 0.

Example: tidepool rpc-proxy -endpoints https://rpc-a.example/KEY,https://rpc-b.example/?api-key=KEY2
  curl -s localhost:8083/rpc -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'

${settingsHelp(rpcProxySchema)}
`;

export const rpcProxyCommand: Command = {
  name: 'rpc-proxy',
  summary: 'run the RPC proxy: one Solana JSON-RPC / PubSub front over several endpoints (:8083)',
  help: HELP,
  settings: rpcProxySchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, rpcProxySchema, io, { load: loadRpcProxyConfig });
    const config = loaded.values;
    const logger = createLogger({ name: 'rpc-proxy', level: config['log.level'] });
    // With REDIS_URL the host writes the system:health:rpc-proxy heartbeat there: ok, degraded
    // (some endpoints out of rotation) or down (none in rotation).
    let heartbeat: KeySpace | undefined;
    let app: RpcProxyApp | undefined;
    let started: { running: RpcProxyApp; port: number };
    try {
      heartbeat = await openSplitKeySpace(io.env);
      const running = await createRpcProxyApp(config, { logger, defaultMetrics: true, ...(heartbeat === undefined ? {} : { heartbeat }) });
      app = running;
      started = { running, port: await running.start() };
    } catch (err) {
      // Once the app is built its host owns the heartbeat's store.
      await (app === undefined ? heartbeat?.store.close() : app.close())?.catch(() => undefined);
      throw err;
    }
    const { running, port } = started;
    const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    const endpoints = running.proxy.healthReport().endpoints;
    logger.info(
      { port, settings: { ...config, endpoints: endpoints.map((e) => e.name), ws_endpoints: config.ws_endpoints.length } },
      'rpc proxy running',
    );
    io.stderr.write(
      [
        'tidepool rpc-proxy is running:',
        `  JSON-RPC          ${base}/rpc`,
        `  PubSub            ${base.replace('http', 'ws')}/rpc/ws`,
        `  health, metrics   ${base}/rpc/health   ${base}/rpc/metrics`,
        `  probes            ${base}/health   ${base}/ready`,
        ...endpoints.map((e) => `  endpoint          ${e.name.padEnd(28)} ${e.state}${e.reason === null ? '' : ` (${e.reason})`}`),
        '',
      ].join('\n'),
    );
    return running.host.untilShutdown();
  },
};
