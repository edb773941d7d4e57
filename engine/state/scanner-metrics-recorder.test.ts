import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createScannerMetrics } from '../obs/index.js';
import { migrateUp } from './db/migrations.js';
import { PgClient } from './db/pg-client.js';
import { ScannerMetricsMaintenance, ScannerMetricsStore } from './db/scanner-metrics.js';
import { TEST_BACKENDS, type TestDatabase } from './db/testing.js';
import { ScannerMetricsRecorder, quantileBetween } from './scanner-metrics-recorder.js';

describe('quantileBetween', () => {
  it('interpolates within the bucket that holds the rank, over the interval’s observations only', () => {
    const before = [
      { le: 1, count: 10 },
      { le: 10, count: 10 },
      { le: Infinity, count: 10 },
    ];
    const after = [
      { le: 1, count: 10 },
      { le: 10, count: 110 },
      { le: Infinity, count: 110 },
    ];
    expect(quantileBetween(before, after, 0.5)).toBeCloseTo(1 + 9 * 0.5);
    expect(quantileBetween(before, after, 0.99)).toBeCloseTo(1 + 9 * 0.99);
    expect(quantileBetween(after, after, 0.5)).toBeNull();
    expect(quantileBetween([], [{ le: 5, count: 0 }, { le: Infinity, count: 4 }], 0.5)).toBe(5);
  });
});

describe.each(TEST_BACKENDS)('scanner_metrics on $name', ({ create }) => {
  let t: TestDatabase;
  let store: ScannerMetricsStore;
  beforeAll(async () => {
    t = await create();
    await migrateUp(t.db);
    store = new ScannerMetricsStore(t.db);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('the scanner writes a row per interval from its metrics; the hourly view aggregates them', async () => {
    expect(await store.layout()).toBe('partitioned');
    const metrics = createScannerMetrics();
    const recorder = new ScannerMetricsRecorder(store, metrics, { scannerId: 'scanner-a', intervalMs: 60_000 });
    await recorder.start();
    metrics.eventsPublished.inc(120);
    metrics.parsingErrors.inc(2);
    metrics.busPublishErrors.inc(1);
    for (let i = 0; i < 100; i++) metrics.endToEndLatencyMs.observe(3);
    const hour = new Date(Date.UTC(2026, 10, 1, 10, 0, 0));
    await recorder.tick(new Date(hour.getTime() + 10_000));
    metrics.eventsPublished.inc(30);
    await recorder.tick(new Date(hour.getTime() + 20_000));
    await recorder.close();

    const rows = await store.rows('scanner-a', hour);
    expect(rows.map((r) => [r.eventsProcessed, r.errorCount])).toEqual([
      [120, 3],
      [30, 0],
      [0, 0],
    ]);
    expect(rows[0]!.latencyP50).toBeGreaterThan(2);
    expect(rows[0]!.latencyP50).toBeLessThanOrEqual(5);
    expect(rows[0]!.latencyP99).toBeLessThanOrEqual(5);
    expect(rows[1]!.latencyP50).toBeNull();

    // A day with no partition yet (far ahead): the partition is made and the row kept.
    await store.insert({ time: new Date('2031-06-01T00:30:00Z'), scannerId: 'scanner-a', eventsProcessed: 7, latencyP50: 1, latencyP99: 2, errorCount: 1 });
    const partitions = await t.db.query<{ n: string }>("SELECT relname AS n FROM pg_class WHERE relname = 'scanner_metrics_p20310601'");
    expect(partitions).toHaveLength(1);

    const maintenance = new ScannerMetricsMaintenance(t.db, store, { intervalMs: 60_000 });
    expect(await maintenance.runOnce()).toBe(true);
    const hourly = await store.hourly('scanner-a');
    const tenOClock = hourly.find((h) => h.bucket.getTime() === hour.getTime())!;
    expect(tenOClock.totalEvents).toBe(150n);
    expect(tenOClock.totalErrors).toBe(3n);
    expect(tenOClock.avgLatencyP50).toBeCloseTo(rows[0]!.latencyP50!, 3);
    expect(hourly.find((h) => h.bucket.toISOString() === '2031-06-01T00:00:00.000Z')?.totalEvents).toBe(7n);
    await maintenance.close();
  });
});

describe('scanner_metrics while the database is down', () => {
  it('keeps the rows it could not write, bounded, and never throws', async () => {
    const down = new PgClient({ url: 'postgres://postgres@127.0.0.1:1/x', connectTimeoutMs: 1000 });
    const recorder = new ScannerMetricsRecorder(new ScannerMetricsStore(down), createScannerMetrics(), { scannerId: 's', maxBacklog: 2 });
    await recorder.start();
    for (let i = 0; i < 3; i++) await recorder.tick();
    expect(recorder.written).toBe(0);
    expect(recorder.dropped).toBe(1);
    await down.close();
  });
});
