import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { NatsConnection } from 'nats';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensurePlatformStreams, PLATFORM_STREAMS } from '../bus/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError } from '../errors.js';
import { decodeTradeSignal, type MarketEvent, type TradeSignal } from '../messages/index.js';
import { loadSignalModel, type SignalModel } from './signal-model.js';
import { SignalPublisher, type SignalSink } from './signal-publisher.js';
import { SignalSourceMetrics } from './signal-source-metrics.js';
import { SignalSource } from './signal-source.js';

/** The signal source: each event observed once, signals stored once, a failed publish retried; users' models loaded. */

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

function event(i: number): MarketEvent {
  return { version: 1, id: `${POOL}:${i}:sig:pool_update`, type: 'pool_update', protocol: 'dexa_amm', poolAddress: POOL, tokenA: SOL, tokenB: USDC, timestamp: 1_800_000_000_000 + i, slot: String(i), data: { price: 150 } };
}

/** A model that signals on every event whose index is even, and counts what it saw. */
class EvenModel implements SignalModel {
  readonly source = 'even';
  seen: string[] = [];
  observe(e: MarketEvent): TradeSignal[] {
    this.seen.push(e.id);
    const i = Number(e.slot);
    return i % 2 === 0 ? [{ version: 1, id: `even-${i}`, source: 'even', token: SOL, direction: 'buy', confidence: 0.9, horizonMs: 1_000, createdAt: e.timestamp }] : [];
  }
  stats(): Record<string, number> {
    return { samples: this.seen.length, hitRate: 0.5 };
  }
}

describe('signal source', () => {
  let nc: NatsConnection;
  const prefix = `${uniqueName('SIG')}_`;

  beforeAll(async () => {
    nc = await connectLocal();
    await ensurePlatformStreams(await nc.jetstreamManager(), { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
  });
  afterAll(async () => {
    await deleteStreams(nc, PLATFORM_STREAMS.map((s) => `${prefix}${s.name}`));
    await nc.close();
  });

  it('publishes each signal once on signals.<source> and reads every event once, redeliveries included', async () => {
    const model = new EvenModel();
    const registry = new Registry();
    const source = new SignalSource({ model, publisher: new SignalPublisher(nc.jetstream(), prefix), metrics: new SignalSourceMetrics(registry, model) });
    source.warm(event(0), 1); // history: observed, not published
    expect(await source.handle(event(1), 2)).toEqual([]);
    const [s2] = await source.handle(event(2), 3);
    expect(await source.handle(event(2), 3)).toEqual([]); // redelivered after success: nothing again
    expect(model.seen).toEqual([event(0).id, event(1).id, event(2).id]);
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(`${prefix}SIGNALS`);
    expect(info.state.messages).toBe(1);
    const stored = await jsm.streams.getMessage(`${prefix}SIGNALS`, { seq: info.state.last_seq });
    expect(stored.subject).toBe(`${prefix}signals.even`);
    expect(decodeTradeSignal(stored.data)).toEqual(s2);
    const text = await registry.metrics();
    expect(text).toMatch(/signal_source_signals_total\{source="even",direction="buy"\} 1/);
    expect(text).toMatch(/signal_source_events_total\{source="even",outcome="ok"\} 2/);
    expect(text).toMatch(/signal_source_model_samples\{source="even"\} 3/);
  });

  it('keeps a signal the bus refused and publishes it when the event comes back, without observing it twice', async () => {
    const model = new EvenModel();
    let down = true;
    const published: TradeSignal[] = [];
    const sink: SignalSink = {
      publish: (s) => {
        if (down) return Promise.reject(Object.assign(new Error('bus down')));
        published.push(s);
        return Promise.resolve();
      },
    };
    const source = new SignalSource({ model, publisher: sink });
    await expect(source.handle(event(4), 10)).rejects.toThrow(/bus down/);
    down = false;
    expect((await source.handle(event(4), 10)).map((s) => s.id)).toEqual(['even-4']);
    expect(model.seen).toEqual([event(4).id]);
    expect(published.map((s) => s.id)).toEqual(['even-4']);
  });

  it('loads a user model from an ES module and names the setting when the module is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-model-'));
    const good = join(dir, 'good.mjs');
    writeFileSync(good, `export function createSignalModel(options) {
  return { source: 'mine', observe: (e) => (e.data.price > options.above ? [{ version: 1, id: 'mine-' + e.id, source: 'mine', token: e.tokenA, direction: 'sell', confidence: 0.7, horizonMs: 60000, createdAt: e.timestamp }] : []) };
}\n`);
    const model = await loadSignalModel(good, { above: 100 });
    expect(model.source).toBe('mine');
    expect(model.observe(event(1)).map((s) => s.direction)).toEqual(['sell']);
    const bad = join(dir, 'bad.mjs');
    writeFileSync(bad, 'export const x = 1;\n');
    const noSource = join(dir, 'nosource.mjs');
    writeFileSync(noSource, "export default () => ({ source: 'has space', observe: () => [] });\n");
    for (const [path, why] of [[bad, /exports neither/], [noSource, /did not build a model/], [join(dir, 'missing.mjs'), /cannot load/]] as const) {
      const err = await loadSignalModel(path, {}).catch((e: unknown) => e);
      expect(isTpError(err) && err.code === ErrorCode.ConfigInvalid).toBe(true);
      expect((err as Error).message).toMatch(why);
      expect((err as { context: { setting: string } }).context.setting).toBe('signals.model');
    }
  });
});
