/**
 * The split scanner on its service host: a start that fails half way (its metrics port taken, after
 * the health port was bound) closes what it had opened (that port, the bus, the heartbeat's store)
 * and names the setting that moves the port.
 */

import { afterEach, describe, expect, it } from 'vitest';

import { BusStatus } from '../bus/index.js';
import { LOCAL_NATS_URL, connectLocal, deadPort, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/index.js';
import { ErrorCode, isTpError, type TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { startOrClose } from '../cli/service-command.js';
import { heartbeatKeys, listening, takenPort, watchClose } from './testing/host-probes.js';
import { createScannerApp, scannerServiceSchema } from './scanner-app.js';
import { PARSE_WORKER, RPC_WORKER } from './testing.js';

const logger = createLogger({ name: 'scanner-app-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});


describe('the split scanner on its service host', () => {
  it('a start whose metrics port is taken closes what it opened and names metrics.prometheusPort', async () => {
    const { app: heartbeat, reader } = await heartbeatKeys(cleanup);
    const metricsPort = await takenPort(cleanup);
    const healthPort = await deadPort();
    const streamName = uniqueName('SCANNER_HALF');
    cleanup.push(async () => {
      const nc = await connectLocal();
      await deleteStreams(nc, [streamName]);
      await nc.close();
    });
    const loaded = loadConfig(scannerServiceSchema, {
      env: {},
      flags: {
        'rpc-endpoints': `http://127.0.0.1:${await deadPort()}`,
        'health-port': String(healthPort),
        'metrics-port': String(metricsPort),
        'parse-workers': '1',
        'bus-servers': LOCAL_NATS_URL,
        'bus-stream-name': streamName,
      },
    });
    const app = await createScannerApp(loaded, { logger, pools: [], heartbeat, parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
    cleanup.push(() => app.close());
    const failed = await startOrClose(app).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('metrics.prometheusPort (METRICS_PORT, --metrics-port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${metricsPort}`);
    expect((failed as TpError).message).not.toContain('\n');
    // The health port it had bound is closed, the bus too; the heartbeat never started.
    expect(await listening(healthPort)).toBe(false);
    expect(app.host.bus?.status).toBe(BusStatus.Disconnected);
    expect(await reader.getHealth('scanner')).toBeNull();
  });

  it('a build that fails half way has closed what it opened before it rejects', async () => {
    const { app: heartbeat } = await heartbeatKeys(cleanup);
    const store = watchClose(heartbeat);
    // auth on without a key to check tokens with: the scanner service refuses to be made, after
    // the host took the heartbeat's store and opened the account reads and the bus.
    const loaded = loadConfig(scannerServiceSchema, {
      env: {},
      flags: { 'rpc-endpoints': `http://127.0.0.1:${await deadPort()}`, 'health-port': '0', 'metrics-port': '0', 'parse-workers': '1', 'bus-servers': LOCAL_NATS_URL, auth: 'on' },
    });
    const failed = await createScannerApp(loaded, { logger, pools: [], heartbeat, parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER }).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.ConfigInvalid);
    expect(store.closed()).toBe(true);
  });
});
