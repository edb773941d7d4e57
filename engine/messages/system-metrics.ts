/**
 * SystemMetrics, version 1 (schemas/system-metrics.schema.json): a service's own metrics at one
 * moment, on `system.metrics.<service>` (stream SYSTEM_METRICS), written by the service host
 * (engine/app/system-metrics-publisher.ts) while the service runs.
 *
 *   systemMetricsOf(registry, ...)   → SystemMetrics from a prom-client registry
 *   encodeSystemMetrics(message)     → JSON bytes, after the schema check
 *   decodeSystemMetrics(bytes)       → SystemMetrics, or TP_ERR_MESSAGE_INVALID naming the field
 */
import type { Registry } from 'prom-client';

import { assertSchema, parseMessageJson } from './message-schema.js';

export const SYSTEM_METRICS_SCHEMA = 'system-metrics.schema.json';
export const SYSTEM_METRICS_VERSION = 1;
export const SYSTEM_METRICS_SUBJECT_ROOT = 'system.metrics';

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  /** A number; 'NaN', '+Inf' or '-Inf' as text (JSON has no such numbers). */
  value: number | string;
}

export interface SystemMetrics {
  version: typeof SYSTEM_METRICS_VERSION;
  service: string;
  instance: string;
  timestamp: number;
  samples: MetricSample[];
}

/** `system.metrics.<service>`, with an optional test prefix. */
export function systemMetricsSubject(service: string, prefix = ''): string {
  return `${prefix}${SYSTEM_METRICS_SUBJECT_ROOT}.${service}`;
}

/**
 * The samples of `registry` now, as GET /metrics would serve them, less histogram and summary
 * buckets and quantiles (their `_count` and `_sum` stay).
 */
export async function systemMetricsOf(registry: Registry, service: string, instance: string, timestamp: number): Promise<SystemMetrics> {
  const samples: MetricSample[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    const kind = String(metric.type);
    for (const v of metric.values as { value: number; labels: Record<string, string | number>; metricName?: string }[]) {
      const name = v.metricName ?? metric.name;
      if ((kind === 'histogram' && name.endsWith('_bucket')) || (kind === 'summary' && name === metric.name)) continue;
      const labels: Record<string, string> = {};
      for (const [k, l] of Object.entries(v.labels)) labels[k] = String(l);
      samples.push({ name, labels, value: Number.isFinite(v.value) ? v.value : Number.isNaN(v.value) ? 'NaN' : v.value > 0 ? '+Inf' : '-Inf' });
    }
  }
  return { version: SYSTEM_METRICS_VERSION, service, instance, timestamp, samples };
}

/** Throws TP_ERR_MESSAGE_INVALID unless `value` is a SystemMetrics v1. */
export function validateSystemMetrics(value: unknown): asserts value is SystemMetrics {
  assertSchema(SYSTEM_METRICS_SCHEMA, 'SystemMetrics', value);
}

export function encodeSystemMetrics(message: SystemMetrics): Uint8Array {
  validateSystemMetrics(message);
  return Buffer.from(JSON.stringify(message), 'utf8');
}

export function decodeSystemMetrics(bytes: Uint8Array | string): SystemMetrics {
  const value = parseMessageJson('SystemMetrics', bytes);
  validateSystemMetrics(value);
  return value;
}
