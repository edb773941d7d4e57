/**
 * `tidepool rpc-proxy` as a process runs it (spec 03): the RPC proxy (engine/rpc-proxy: endpoints,
 * health checks, call router, subscription hub, the uWS server of /rpc, /rpc/ws, /rpc/health,
 * /rpc/metrics, /health, /ready on `port`, 8083) assembled by the ServiceHost (service-host.ts): the
 * close stack, SIGTERM (`host.untilShutdown`) and the `system:health:rpc-proxy` heartbeat when given
 * a key space (REDIS_URL): `ok` with every endpoint in rotation, `degraded` with some, `down` with
 * none. The proxy's port stays its own (its /health and /ready speak of the endpoints, its metrics
 * are its own registry); a port in use is TP_ERR_IO naming `port`. No bus:
 * the proxy publishes nothing. Its close is the proxy's graceful drain: it stops taking calls,
 * answers those in flight within `shutdown_timeout`, closes the WebSockets (1001).
 */
import { ErrorCode, isTpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { createRpcProxy, type RpcProxy, type RpcProxyConfig, type RpcProxyHealth } from '../rpc-proxy/index.js';
import { HeartbeatStatus, type KeySpace } from '../state/index.js';
import { ServiceHost, portBindError } from './service-host.js';

/** The setting that moves the proxy's port, as a person writes it. */
export const RPC_PROXY_PORT_SETTING = 'port (RPC_PROXY_PORT, --port)';

/** The heartbeat's status for the proxy's own: endpoints all, some, or none in rotation. */
const HEARTBEAT_STATUS: Record<RpcProxyHealth['status'], HeartbeatStatus> = {
  ok: HeartbeatStatus.Ok,
  degraded: HeartbeatStatus.Degraded,
  unavailable: HeartbeatStatus.Down,
};

export interface RpcProxyApp {
  /** The heartbeat, the close stack, SIGTERM. */
  readonly host: ServiceHost;
  readonly proxy: RpcProxy;
  /** Runs the first health check round, binds the proxy's port, then starts the heartbeat. Resolves with the bound port. */
  start(): Promise<number>;
  /** Stops the heartbeat (`stopped`), drains the proxy within `shutdown_timeout`, closes the heartbeat's store. Idempotent. */
  close(): Promise<void>;
}

export interface RpcProxyAppOptions {
  logger: Logger;
  /** Also export Node's process metrics (the service does; tests do not). Default true. */
  defaultMetrics?: boolean;
  /** Where the `system:health:rpc-proxy` heartbeat goes (the host closes its store); none: no heartbeat. */
  heartbeat?: KeySpace;
}

export async function createRpcProxyApp(config: RpcProxyConfig, options: RpcProxyAppOptions): Promise<RpcProxyApp> {
  // Read at every beat; the proxy is made below, before the heartbeat starts.
  let proxy: RpcProxy | undefined;
  const heartbeatStatus = (): { status: HeartbeatStatus } => ({ status: proxy === undefined ? HeartbeatStatus.Down : HEARTBEAT_STATUS[proxy.healthReport().status] });
  return ServiceHost.assemble({ service: 'rpc-proxy', logger: options.logger, heartbeatStatus }, async (host) => {
    const keys = options.heartbeat;
    if (keys !== undefined) {
      host.onClose('key space', () => keys.store.close());
      host.heartbeatTo(keys);
    }
    const made = createRpcProxy(config, { logger: options.logger, defaultMetrics: options.defaultMetrics ?? true });
    proxy = made;
    host.onClose('rpc proxy', () => made.close());
    return {
      host,
      proxy: made,
      async start() {
        let port: number;
        try {
          // The first health round waits for the endpoints: a close (or a shutdown) ends the wait.
          port = await host.wait(made.start());
        } catch (err) {
          // uWS says only that the bind failed; the message names the address and the setting.
          if (isTpError(err) && err.code === ErrorCode.Io) throw portBindError({ what: 'rpc proxy', host: config.host, port: config.port, setting: RPC_PROXY_PORT_SETTING }, new Error('in use or not available', { cause: err }));
          throw err;
        }
        await host.start();
        return port;
      },
      close: () => host.close(),
    };
  });
}
