/**
 * The external quote service on its service host: a start that fails half way (its metrics port
 * taken) closes what it had opened (the gRPC port it bound, the heartbeat's store) and names the
 * setting that moves the port; a full start beats `system:health:external-quotes` and says
 * `stopped` at close.
 */

import { afterEach, describe, expect, it } from 'vitest';

import { deadPort } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError, type TpError } from '../errors.js';
import { defaultExternalConfig } from '../external/external-config.js';
import { createLogger } from '../obs/logger.js';
import { startOrClose } from '../cli/service-command.js';
import { heartbeatKeys, listening, takenPort } from './testing/host-probes.js';
import { createExternalQuotesApp } from './external-quotes-app.js';

const logger = createLogger({ name: 'external-quotes-app-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});




describe('the external quote service on its service host', () => {
  it('a start whose metrics port is taken closes what it opened and names metrics.port', async () => {
    const keys = await heartbeatKeys(cleanup);
    const metricsPort = await takenPort(cleanup);
    const grpcPort = await deadPort();
    const app = await createExternalQuotesApp(defaultExternalConfig({ grpcPort, 'metrics.port': metricsPort }), { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('metrics.port (EXTERNAL_QUOTES_METRICS_PORT, --metrics-port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${metricsPort}`);
    expect((failed as TpError).message).not.toContain('\n');
    // The gRPC port it had bound is closed; the heartbeat never started.
    expect(await listening(grpcPort)).toBe(false);
    expect(await keys.reader.getHealth('external-quotes')).toBeNull();
  });

  it('a start whose gRPC port is taken names grpcPort', async () => {
    const grpcPort = await takenPort(cleanup);
    const app = await createExternalQuotesApp(defaultExternalConfig({ grpcPort, 'metrics.port': 0 }), { logger, defaultMetrics: false });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('grpcPort (EXTERNAL_QUOTES_GRPC_PORT, --grpc-port)');
  });

  it('beats system:health:external-quotes while it runs and says stopped at close', async () => {
    const keys = await heartbeatKeys(cleanup);
    const app = await createExternalQuotesApp(defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0 }), { logger, heartbeat: keys.app, defaultMetrics: false });
    cleanup.push(() => app.close());
    const endpoints = await app.start();
    expect(endpoints.grpcPort).toBeGreaterThan(0);
    expect((await keys.reader.getHealth('external-quotes'))?.status).toBe('ok');
    await app.close();
    expect((await keys.reader.getHealth('external-quotes'))?.status).toBe('stopped');
  });
});
