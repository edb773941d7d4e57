/**
 * A platform service started with no bus reachable (issue 25: one service host) gives up after
 * the host's start wait with TP_ERR_BUS_UNAVAILABLE naming the setting, on one line, without a
 * stack; with LOG_LEVEL=debug the stack follows. A port in use names its setting the same way.
 */
import { createServer, type Server } from 'node:net';
import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BUS_START_WAIT_MS } from '../../app/index.js';
import { DEAD_LETTER_STREAM, PLATFORM_STREAMS } from '../../bus/index.js';
import { LOCAL_NATS_URL, connectLocal, deadPort, deleteStreams, uniqueName } from '../../bus/testing/local-nats.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: new PassThrough(), stderr: err, stdin: Readable.from([]), env };
  const code = await runCli(argv, io);
  return { code, stderr };
}

const prefix = `${uniqueName('SSFAIL')}_`;
let blocker: Server;
let busyPort: number;
beforeAll(async () => {
  blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  busyPort = (blocker.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => blocker.close(() => resolve()));
  // The streams the source laid down before it found its port taken.
  const nc = await connectLocal();
  await deleteStreams(nc, [...PLATFORM_STREAMS.map((s) => `${prefix}${s.name}`), `${prefix}${DEAD_LETTER_STREAM}`]);
  await nc.close();
});

describe('tidepool signal-source start failures', () => {
  it('no bus: exits 1 after the start wait with TP_ERR_BUS_UNAVAILABLE naming BUS_SERVERS, one line', async () => {
    const port = await deadPort();
    const started = Date.now();
    const { code, stderr } = await cli(['signal-source', '--bus-servers', `nats://127.0.0.1:${port}`, '--port', '0', '--log-level', 'silent']);
    expect(code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(BUS_START_WAIT_MS - 100);
    expect(stderr).toMatch(/^tidepool signal-source: .*BUS_SERVERS.* \[TP_ERR_BUS_UNAVAILABLE\]\n$/);
    expect(stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
  }, 20_000);

  it('its port in use: exits 1 with TP_ERR_IO naming SIGNAL_SOURCE_PORT; LOG_LEVEL=debug adds the stack', async () => {
    const argv = ['signal-source', '--bus-servers', LOCAL_NATS_URL, '--port', String(busyPort), '--log-level', 'silent', '--subject-prefix', prefix, '--stream-max-bytes-scale', '0.001'];
    const { code, stderr } = await cli(argv);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^tidepool signal-source: .*127\.0\.0\.1:\d+.*signals\.port \(SIGNAL_SOURCE_PORT, --port\) \[TP_ERR_IO\]\n$/);
    const debug = await cli(argv, { LOG_LEVEL: 'debug' });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\[TP_ERR_IO\]\n.*TpError/);
    expect(debug.stderr).toMatch(/\n\s+at /);
  }, 20_000);
});
