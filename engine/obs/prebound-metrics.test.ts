import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { LATENCY_SECONDS_BUCKETS } from './buckets.js';
import { PreboundCounter, PreboundHistogram } from './prebound-metrics.js';

describe('prebound metrics', () => {
  it('scrape as prom-client Counter and Histogram do for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const c1 = new PreboundCounter('t_calls_total', 'calls', ['method', 'transport'] as const, [ours]);
    const h1 = new PreboundHistogram('t_duration_seconds', 'duration', ['endpoint', 'method'] as const, LATENCY_SECONDS_BUCKETS, [ours]);
    const c2 = new Counter({ name: 't_calls_total', help: 'calls', labelNames: ['method', 'transport'] as const, registers: [theirs] });
    const h2 = new Histogram({ name: 't_duration_seconds', help: 'duration', labelNames: ['endpoint', 'method'] as const, buckets: [...LATENCY_SECONDS_BUCKETS], registers: [theirs] });
    const observations: [string, string, number][] = [
      ['127.0.0.1:1', 'getSlot', 0.0003],
      ['127.0.0.1:1', 'getSlot', 0.002],
      ['127.0.0.1:1', 'getSlot', 100],
      ['a"b\\c', 'batch', 0.005],
      ['127.0.0.1:2', 'getAccountInfo', 0],
    ];
    for (const [endpoint, method, seconds] of observations) {
      c1.labels(method, 'http').inc();
      c2.labels(method, 'http').inc();
      h1.labels(endpoint, method).observe(seconds);
      h2.labels(endpoint, method).observe(seconds);
    }
    c1.labels('getSlot', 'ws').inc(3);
    c2.labels('getSlot', 'ws').inc(3);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.resetMetrics();
    theirs.resetMetrics();
    c1.labels('getSlot', 'ws').inc();
    c2.labels('getSlot', 'ws').inc();
    expect((await ours.metrics()).match(/^t_calls_total\{method="getSlot",transport="ws"\} \d+$/m)?.[0]).toBe('t_calls_total{method="getSlot",transport="ws"} 1');
    expect(() => h2.labels('x', 'y').observe(Number.NaN)).toThrow(TypeError);
    expect(() => h1.labels('x', 'y').observe(Number.NaN)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'value', value: 'NaN' } }));
    expect(() => h1.labels('x')).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'values', value: 1 } }));
  });
});
