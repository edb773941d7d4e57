/**
 * The aggregator app on its service host: a start that fails half way (its HTTP port taken) closes
 * what it had opened (the gRPC port it bound, the bus, the heartbeat's store) and names the setting
 * that moves the port; a full start beats `system:health:aggregator` and says `stopped` at close.
 */

import { afterEach, describe, expect, it } from 'vitest';

import { defaultAggregatorConfig } from '../aggregator/aggregator-config.js';
import { BusStatus } from '../bus/index.js';
import { LOCAL_NATS_URL, deadPort } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError, type TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { createAggregatorApp, type AggregatorApp } from './aggregator-app.js';
import { startOrClose } from '../cli/service-command.js';
import { heartbeatKeys, listening, takenPort } from './testing/host-probes.js';

const logger = createLogger({ name: 'aggregator-app-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});



describe('the aggregator app on its service host', () => {
  it('a start whose HTTP port is taken closes what it opened and names httpPort', async () => {
    const keys = await heartbeatKeys(cleanup);
    const httpPort = await takenPort(cleanup);
    const grpcPort = await deadPort();
    const config = defaultAggregatorConfig({ host: '127.0.0.1', grpcPort, httpPort, busUrl: LOCAL_NATS_URL, busEnabled: true, shutdownTimeout: 2_000 });
    const app: AggregatorApp = await createAggregatorApp(config, { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('httpPort (AGGREGATOR_HTTP_PORT, --http-port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${httpPort}`);
    expect((failed as TpError).message).not.toContain('\n');
    // What it had opened is closed: the gRPC port it bound, the bus; the heartbeat never started.
    expect(await listening(grpcPort)).toBe(false);
    expect(app.host.bus?.status).toBe(BusStatus.Disconnected);
    expect(await keys.reader.getHealth('aggregator')).toBeNull();
  });

  it('a start whose gRPC port is taken names grpcPort', async () => {
    const grpcPort = await takenPort(cleanup);
    const app = await createAggregatorApp(defaultAggregatorConfig({ host: '127.0.0.1', grpcPort, httpPort: 0, busEnabled: false }), { logger, defaultMetrics: false });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('grpcPort (AGGREGATOR_GRPC_PORT, --grpc-port)');
  });

  it('beats system:health:aggregator while it runs, ok without the bus, and says stopped at close', async () => {
    const keys = await heartbeatKeys(cleanup);
    const config = defaultAggregatorConfig({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, busUrl: `nats://127.0.0.1:${await deadPort()}`, busEnabled: true, shutdownTimeout: 500 });
    const app = await createAggregatorApp(config, { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const ports = await app.start();
    expect(ports.grpcPort).toBeGreaterThan(0);
    expect(app.host.bus?.connected).toBe(false);
    expect((await keys.reader.getHealth('aggregator'))?.status).toBe('ok');
    await app.close();
    expect((await keys.reader.getHealth('aggregator'))?.status).toBe('stopped');
  });
});
