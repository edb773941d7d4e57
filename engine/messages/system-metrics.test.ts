import { Counter, Gauge, Registry, Summary } from 'prom-client';
import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { decodeSystemMetrics, encodeSystemMetrics, systemMetricsOf, systemMetricsSubject } from './system-metrics.js';

describe('SystemMetrics', () => {
  it('reads a registry as /metrics serves it, less buckets and quantiles, and round-trips', async () => {
    const registry = new Registry();
    new Counter({ name: 'x_total', help: 'x', labelNames: ['kind'], registers: [registry] }).inc({ kind: 'a' }, 3);
    new Gauge({ name: 'y_ratio', help: 'y', registers: [registry] }).set(Number.POSITIVE_INFINITY);
    new Summary({ name: 'z_seconds', help: 'z', percentiles: [0.5], registers: [registry] }).observe(2);
    const message = await systemMetricsOf(registry, 'planner', 'box:1', 1_700_000_000_000);
    expect(message.samples).toEqual([
      { name: 'x_total', labels: { kind: 'a' }, value: 3 },
      { name: 'y_ratio', labels: {}, value: '+Inf' },
      { name: 'z_seconds_sum', labels: {}, value: 2 },
      { name: 'z_seconds_count', labels: {}, value: 1 },
    ]);
    expect(decodeSystemMetrics(encodeSystemMetrics(message))).toEqual(message);
    expect(systemMetricsSubject('planner', 'T_')).toBe('T_system.metrics.planner');
  });

  it('refuses a message that is not one, naming the field', () => {
    const bad = { version: 1, service: 'planner', instance: 'box:1', timestamp: 1, samples: [{ name: 'x', labels: {}, value: 'lots' }] };
    let err: unknown;
    try {
      decodeSystemMetrics(JSON.stringify(bad));
    } catch (e) {
      err = e;
    }
    expect(isTpError(err) && err.code === ErrorCode.MessageInvalid).toBe(true);
    expect((err as Error).message).toContain('/samples/0/value');
  });
});
