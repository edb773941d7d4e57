/**
 * The quote service on its service host: a start that fails half way (its gRPC port taken, after
 * the HTTP and metrics ports were bound) closes what it had opened (those ports, the bus, the
 * heartbeat's store) and names the setting that moves the port; a full start with the bus down
 * still starts (no start wait), beats `system:health:quote-service` and says `stopped` at close.
 */

import { afterEach, describe, expect, it } from 'vitest';

import { BusStatus } from '../bus/index.js';
import { LOCAL_NATS_URL, deadPort } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError, type TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { defaultQuoteConfig } from '../quote-service/quote-config.js';
import { startOrClose } from '../cli/service-command.js';
import { heartbeatKeys, listening, takenPort, watchClose } from './testing/host-probes.js';
import { createQuoteApp } from './quote-app.js';

const logger = createLogger({ name: 'quote-app-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});




describe('the quote service on its service host', () => {
  it('a start whose gRPC port is taken closes what it opened and names grpc.port', async () => {
    const keys = await heartbeatKeys(cleanup);
    const grpcPort = await takenPort(cleanup);
    const [port, metricsPort] = [await deadPort(), await deadPort()];
    const config = defaultQuoteConfig({ host: '127.0.0.1', port, 'metrics.port': metricsPort, 'grpc.port': grpcPort, 'bus.enabled': true, 'bus.servers': [LOCAL_NATS_URL], 'rpc.endpoints': [] });
    const app = await createQuoteApp(config, { logger, heartbeat: keys.app });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('grpc.port (GRPC_PORT, --grpc-port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${grpcPort}`);
    expect((failed as TpError).message).not.toContain('\n');
    // The quote and metrics ports it had bound are closed, the bus too; the heartbeat never started.
    expect(await listening(port)).toBe(false);
    expect(await listening(metricsPort)).toBe(false);
    expect(app.host.bus?.status).toBe(BusStatus.Disconnected);
    expect(await keys.reader.getHealth('quote-service')).toBeNull();
  });

  it('a start whose quote port is taken names port (PORT)', async () => {
    const port = await takenPort(cleanup);
    const app = await createQuoteApp(defaultQuoteConfig({ host: '127.0.0.1', port, 'metrics.port': 0, 'grpc.port': 0, 'bus.enabled': false, 'rpc.endpoints': [] }), { logger });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('port (PORT, --port)');
  });

  it('starts with the bus down, beats system:health:quote-service and says stopped at close', async () => {
    const keys = await heartbeatKeys(cleanup);
    const config = defaultQuoteConfig({ host: '127.0.0.1', port: 0, 'metrics.port': 0, 'grpc.port': 0, 'bus.enabled': true, 'bus.servers': [`nats://127.0.0.1:${await deadPort()}`], 'rpc.endpoints': [] });
    const app = await createQuoteApp(config, { logger, heartbeat: keys.app });
    cleanup.push(() => app.close());
    const endpoints = await app.start();
    expect(endpoints.localQuotes).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(app.host.bus?.connected).toBe(false);
    expect((await keys.reader.getHealth('quote-service'))?.status).toBe('ok');
    await app.close();
    expect((await keys.reader.getHealth('quote-service'))?.status).toBe('stopped');
  });

  it('a build that fails half way has closed what it opened before it rejects', async () => {
    const keys = await heartbeatKeys(cleanup);
    const store = watchClose(keys.app);
    // Monitored pools without rpc.endpoints: refused after the host took the heartbeat's store.
    const config = { ...defaultQuoteConfig({ host: '127.0.0.1', port: 0, 'metrics.port': 0, 'grpc.port': 0, 'bus.enabled': false, 'rpc.endpoints': [] }), 'pools.monitored': ['58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2'] };
    const failed = await createQuoteApp(config, { logger, heartbeat: keys.app }).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.ConfigInvalid);
    expect(store.closed()).toBe(true);
  });
});
