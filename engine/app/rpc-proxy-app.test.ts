/**
 * The RPC proxy app on its service host: a full start serves the proxy's probes and beats
 * `system:health:rpc-proxy` (ok, degraded, down by the endpoints in rotation), `stopped` at close,
 * and frees the port; a start whose port is taken, or a build that fails half way, closes what it
 * had opened and names the setting.
 */
import { connect } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { deadPort } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError, type TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { defaultRpcProxyConfig, type RpcProxyConfig } from '../rpc-proxy/index.js';
import { call, post, startSim } from '../rpc-proxy/testing.js';
import type { RpcNode, Simulator } from '../sim/index.js';
import { startOrClose } from '../cli/service-command.js';
import { RPC_PROXY_PORT_SETTING, createRpcProxyApp } from './rpc-proxy-app.js';
import { heartbeatKeys, takenPort } from './testing/host-probes.js';

const logger = createLogger({ name: 'rpc-proxy-app-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

let sim: Simulator;
let node: RpcNode;
beforeAll(async () => {
  sim = await startSim(43);
  node = await sim.rpcNodes.add();
});
afterAll(async () => {
  await sim.close();
});

/** Whether something accepts a TCP connection on the loopback port. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function configOf(overrides: Partial<RpcProxyConfig> = {}): RpcProxyConfig {
  return defaultRpcProxyConfig({
    host: '127.0.0.1',
    endpoints: [node.rpc],
    ws_endpoints: [node.pubsub],
    port: 0,
    health_check_interval: 60_000,
    request_timeout: 2_000,
    shutdown_timeout: 2_000,
    ...overrides,
  });
}

describe('the rpc proxy app on its service host', () => {
  it('serves /rpc and its probes, beats ok while it runs, says stopped at close and frees the port', async () => {
    const keys = await heartbeatKeys(cleanup);
    const app = await createRpcProxyApp(configOf(), { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const port = await app.start();
    const url = `http://127.0.0.1:${port}`;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    expect((await fetch(`${url}/rpc/metrics`)).status).toBe(200);
    expect((await post(url, call('getSlot'))).json.result).toBe(Number(sim.chain.slot('finalized')));
    expect((await keys.reader.getHealth('rpc-proxy'))?.status).toBe('ok');
    await app.close();
    expect((await keys.reader.getHealth('rpc-proxy'))?.status).toBe('stopped');
    // Nothing takes connections there (the proxy closed the connections first: TIME-WAIT keeps a bind probe out).
    expect(await accepting(port)).toBe(false);
    expect((await keys.app.store.status()).ok).toBe(false);
  });

  it('beats degraded with some endpoints out of rotation, down with none', async () => {
    const dead = `http://127.0.0.1:${await deadPort()}`;
    const someKeys = await heartbeatKeys(cleanup);
    const some = await createRpcProxyApp(configOf({ endpoints: [node.rpc, dead], ws_endpoints: [] }), { logger, heartbeat: someKeys.app, defaultMetrics: false });
    cleanup.push(() => some.close());
    await some.start();
    expect((await someKeys.reader.getHealth('rpc-proxy'))?.status).toBe('degraded');

    const noneKeys = await heartbeatKeys(cleanup);
    const none = await createRpcProxyApp(configOf({ endpoints: [dead], ws_endpoints: [] }), { logger, heartbeat: noneKeys.app, defaultMetrics: false });
    cleanup.push(() => none.close());
    const port = await none.start();
    expect((await noneKeys.reader.getHealth('rpc-proxy'))?.status).toBe('down');
    expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(503);
  });

  it('a start whose port is taken closes what it opened and names the port setting', async () => {
    const keys = await heartbeatKeys(cleanup);
    const port = await takenPort(cleanup);
    const app = await createRpcProxyApp(configOf({ port }), { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain(RPC_PROXY_PORT_SETTING);
    expect((failed as TpError).message).toContain('port (RPC_PROXY_PORT, --port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${port}`);
    expect((failed as TpError).message).not.toContain('\n');
    // What it had opened is closed: the proxy (drained, its health checks stopped) and the
    // heartbeat's store; the heartbeat never started.
    expect(app.proxy.healthReport().draining).toBe(true);
    expect((await keys.app.store.status()).ok).toBe(false);
    expect(await keys.reader.getHealth('rpc-proxy')).toBeNull();
  });

  it('a build that fails half way has closed what it opened before it rejects', async () => {
    const keys = await heartbeatKeys(cleanup);
    // Bound beyond loopback with no key: the proxy refuses to be made, after the host took the heartbeat's store.
    const failed = await createRpcProxyApp(configOf({ host: '0.0.0.0', 'auth.mode': 'auto', 'auth.apiKeys': [] }), { logger, heartbeat: keys.app, defaultMetrics: false }).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.ConfigInvalid);
    expect((await keys.app.store.status()).ok).toBe(false);
  });
});
