/**
 * Stream sizes (issue 26 item 8): a JetStream server reserves every stream's max bytes when the
 * stream is created, so spec 03's sizes stay the default for deployments, `bus.streamMaxBytesScale`
 * sizes them for a small server (and for the sets tests and benchmarks lay down), and a server that
 * cannot reserve them gets TP_ERR_BUS_SETUP naming that setting, not the client library's error.
 * The servers here are private ones with a small JetStream store, so the refusal does not depend on
 * the size of this machine's disk.
 */
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, TpError } from '../errors.js';
import { loadConfig } from '../config/index.js';
import { deadLetterStreamSpec, ensureDeadLetterStream } from './dead-letter.js';
import { ensurePlatformStreams, platformStreamSpecs, scaledMaxBytes, STREAM_MAX_BYTES_SCALE_SETTING, streamSizeSchema } from './platform-streams.js';
import { ensureSwapRoutesStream, swapRoutesStreamSpec } from './swap-route-stream.js';
import { NATS_SERVER_MISSING, NatsServer } from './testing/cluster.js';
import { TEST_STREAM_MAX_BYTES_SCALE, uniqueName } from './testing/local-nats.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

describe('bus.streamMaxBytesScale', () => {
  it('defaults to spec 03 sizes and scales every byte-limited stream, never below the 1 MiB max message', () => {
    expect(loadConfig(streamSizeSchema, { env: {} }).values['bus.streamMaxBytesScale']).toBe(1);
    expect(loadConfig(streamSizeSchema, { env: { BUS_STREAM_MAX_BYTES_SCALE: '0.01' } }).values['bus.streamMaxBytesScale']).toBe(0.01);
    expect(loadConfig(streamSizeSchema, { env: {}, flags: { 'stream-max-bytes-scale': '0.5' } }).values['bus.streamMaxBytesScale']).toBe(0.5);
    expect(() => loadConfig(streamSizeSchema, { env: { BUS_STREAM_MAX_BYTES_SCALE: '0' } })).toThrow(/bus\.streamMaxBytesScale/);
    expect(platformStreamSpecs({ replicas: 1 }).map((s) => s.maxBytes)).toEqual([10 * GiB, 5 * GiB, 20 * GiB, 1 * GiB, 1 * GiB]);
    expect(platformStreamSpecs({ replicas: 1, maxBytesScale: 0.5 }).map((s) => s.maxBytes)).toEqual([5 * GiB, 2.5 * GiB, 10 * GiB, 0.5 * GiB, 0.5 * GiB]);
    expect(platformStreamSpecs({ replicas: 1, maxBytesScale: 0.0001 }).map((s) => s.maxBytes)).toEqual([Math.floor(GiB / 1000), MiB, Math.floor(GiB / 500), MiB, MiB]);
    expect(deadLetterStreamSpec({ replicas: 1 }).maxBytes).toBe(GiB);
    expect(deadLetterStreamSpec({ replicas: 1, maxBytesScale: 0.25 }).maxBytes).toBe(GiB / 4);
    expect(swapRoutesStreamSpec().maxBytes).toBe(5 * GiB);
    expect(swapRoutesStreamSpec({ maxBytesScale: 0.001 }).maxBytes).toBe(Math.floor(5 * GiB * 0.001));
    expect(scaledMaxBytes(GiB, 0.00001)).toBe(MiB);
    expect(() => scaledMaxBytes(GiB, 0)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'scale', value: 0 } }));
    expect(STREAM_MAX_BYTES_SCALE_SETTING.env).toBe('BUS_STREAM_MAX_BYTES_SCALE');
  });
});

describe.skipIf(NATS_SERVER_MISSING !== undefined)(`a server that cannot reserve the streams${NATS_SERVER_MISSING === undefined ? '' : ` (skipped: ${NATS_SERVER_MISSING})`}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    // 4 GiB of file store: MARKET_EVENTS alone asks 10 GiB at spec 03's size.
    server = await NatsServer.start({ maxFileStore: 4 * GiB });
    nc = await connect({ servers: server.url });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    await nc?.close();
    await server?.close();
  });

  it('refuses spec 03 sizes with TP_ERR_BUS_SETUP naming the stream, the bytes and BUS_STREAM_MAX_BYTES_SCALE', async () => {
    const prefix = `${uniqueName('SZ')}_`;
    const err = await ensurePlatformStreams(jsm, { replicas: 1, prefix }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TpError);
    const tp = err as TpError;
    expect(tp.code).toBe(ErrorCode.BusSetup);
    expect(tp.message).toContain(`stream ${prefix}MARKET_EVENTS`);
    expect(tp.message).toContain('10 GiB');
    expect(tp.message).toContain('insufficient storage resources');
    expect(tp.message).toContain('lower BUS_STREAM_MAX_BYTES_SCALE (--stream-max-bytes-scale, now 1)');
    expect(tp.message).not.toMatch(/NatsError/);
    expect(tp.context).toMatchObject({ stream: `${prefix}MARKET_EVENTS`, maxBytes: 10 * GiB, setting: expect.stringContaining('BUS_STREAM_MAX_BYTES_SCALE') });
    await expect(ensureSwapRoutesStream(jsm, { replicas: 1, prefix, maxBytesScale: 1 })).rejects.toThrow(/MARKET_SWAP_ROUTES.*BUS_STREAM_MAX_BYTES_SCALE/s);
  });

  it('creates every stream at the scaled size, and names the scale in force when even that does not fit', async () => {
    const prefix = `${uniqueName('SZ')}_`;
    const infos = await ensurePlatformStreams(jsm, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await ensureDeadLetterStream(nc, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const routes = await ensureSwapRoutesStream(jsm, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    expect(infos.map((i) => i.config.max_bytes)).toEqual([10, 5, 20, 1, 1].map((g) => Math.floor(g * GiB * TEST_STREAM_MAX_BYTES_SCALE)));
    expect((await jsm.streams.info(`${prefix}DEAD_LETTERS`)).config.max_bytes).toBe(Math.floor(GiB * TEST_STREAM_MAX_BYTES_SCALE));
    expect(routes.config.max_bytes).toBe(Math.floor(5 * GiB * TEST_STREAM_MAX_BYTES_SCALE));
    await expect(ensurePlatformStreams(jsm, { replicas: 1, prefix: `${uniqueName('SZ')}_`, maxBytesScale: 0.5 })).rejects.toThrow(/now 0\.5\)/);
    for (const i of infos) await jsm.streams.delete(i.config.name);
    await jsm.streams.delete(`${prefix}DEAD_LETTERS`);
    await jsm.streams.delete(routes.config.name);
  });
});
