import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_STREAM_MAX_BYTES_SCALE, uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { decodeTradeSignal, encodeMarketEvent, marketEventSubject, type MarketEvent, type TradeSignal } from '../messages/index.js';
import { ensurePlatformStreams } from '../bus/index.js';
import { createSignalSourceApp, signalSourceSchema, type SignalSourceApp } from './signal-source-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * `tidepool signal-source` with a user's model (an ES module on disk): history is replayed through
 * the model at start without publishing, then each new event is observed once and its signals are
 * published on signals.<source>.
 */
const logger = createLogger({ name: 'signal-source-test', level: process.env.TEST_LOG ?? 'silent' });
const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const fx = new PlatformFixture();
let nc: NatsConnection;
let prefix: string;
let dir: string;
let app: SignalSourceApp | undefined;

// A model that speaks from the sixth event it has seen on: a warm-up it must get from history.
const MODEL = `
export default function createSignalModel(options) {
  let seen = 0;
  return {
    source: 'counter',
    observe(event) {
      seen++;
      if (seen <= 5) return [];
      return [{ version: 1, id: event.id + ':signal', source: 'counter', token: event.tokenA, direction: 'buy', confidence: 0.9, horizonMs: options.horizonMs, createdAt: event.timestamp }];
    },
    stats() { return { samples: seen }; },
  };
}
`;

beforeAll(async () => {
  ({ nc, prefix } = await fx.bus('SS'));
  dir = mkdtempSync(join(tmpdir(), 'tp-signal-model-'));
  fx.onClose('the model directory', () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'model.mjs'), MODEL);
  await ensurePlatformStreams(await nc.jetstreamManager(), { nc, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
  fx.onClose('the signal source', () => app?.close());
});

afterAll(() => fx.close());

function event(i: number): MarketEvent {
  return { version: 1, id: uniqueName(`ev${i}`), type: 'pool_update', protocol: 'dexa_amm', poolAddress: POOL, tokenA: SOL, tokenB: USDC, timestamp: Date.now(), slot: String(100 + i), data: { price: 150 + i } };
}

async function publishEvent(i: number): Promise<MarketEvent> {
  const e = event(i);
  await nc.jetstream().publish(marketEventSubject('dexa_amm', 'pool_update', prefix), encodeMarketEvent(e));
  return e;
}

describe('tidepool signal-source', () => {
  it('warms the model on history without publishing, then publishes what each new event leads to, once', async () => {
    for (let i = 1; i <= 5; i++) await publishEvent(i);
    const signals: TradeSignal[] = [];
    const sub = nc.subscribe(`${prefix}signals.>`);
    void (async () => {
      for await (const m of sub) signals.push(decodeTradeSignal(m.data));
    })();

    const loaded = loadConfig(signalSourceSchema, {
      env: {},
      flags: { model: join(dir, 'model.mjs'), port: '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE), 'source-id': 'counter', 'warm-window': '1h' },
    });
    app = await createSignalSourceApp(loaded, { logger, retryDelayMs: 20 });
    expect(app.warmed).toBe(5);
    const { http } = await app.start();

    const sixth = await publishEvent(6);
    const seventh = await publishEvent(7);
    await eventually(() => (signals.length === 2 ? true : undefined), 20_000, 'two signals');
    expect(signals.map((s) => s.id)).toEqual([`${sixth.id}:signal`, `${seventh.id}:signal`]);
    expect(signals[0]).toMatchObject({ source: 'counter', token: SOL, direction: 'buy', horizonMs: 60_000 });

    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toMatch(/signal_source_signals_total\{[^}]*direction="buy"[^}]*\} 2/);
    expect(metrics).toMatch(/signal_source_model_samples\{source="counter"\} 7/);
    expect((await fetch(`${http}/ready`)).status).toBe(200);
    sub.unsubscribe();
  });

  it('refuses a model file that does not build a model, naming the setting', async () => {
    writeFileSync(join(dir, 'broken.mjs'), 'export const nothing = 1;\n');
    const loaded = loadConfig(signalSourceSchema, { env: {}, flags: { model: join(dir, 'broken.mjs'), port: '0', 'subject-prefix': prefix } });
    await expect(createSignalSourceApp(loaded, { logger })).rejects.toMatchObject({ code: 'TP_ERR_CONFIG_INVALID', context: { setting: 'signals.model' } });
  });
});
