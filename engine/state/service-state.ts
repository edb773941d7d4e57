import type { Logger } from '../obs/index.js';
import type { ScannerMetrics } from '../obs/index.js';
import { ScannerMetricsMaintenance, ScannerMetricsStore } from './db/scanner-metrics.js';
import type { SqlClient } from './db/sql-client.js';
import { HealthHeartbeat } from './kv/health-heartbeat.js';
import type { HeartbeatStatus, KeySpace } from './kv/key-space.js';
import type { DependencyStatus } from './kv/kv-store.js';
import { ScannerMetricsRecorder } from './scanner-metrics-recorder.js';

/**
 * What a running service keeps in the platform's state: its `system:health:{service}` heartbeat
 * and, for a scanner with a database, its scanner_metrics rows (plus the partition and view
 * maintenance on plain PostgreSQL). `dependencyStatus()` is what readiness needs from this side.
 */

export interface ServiceStateOptions {
  /** One heartbeat per name (one process may run several services). */
  services: readonly string[];
  keys: KeySpace;
  db?: SqlClient;
  scanner?: { metrics: ScannerMetrics; scannerId: string; intervalMs?: number };
  /** Heartbeat interval. Default 5 s. */
  heartbeatMs?: number;
  status?: () => { status: HeartbeatStatus; detail?: Record<string, unknown> };
  logger?: Logger;
}

export interface ServiceState {
  readonly heartbeats: readonly HealthHeartbeat[];
  readonly recorder: ScannerMetricsRecorder | undefined;
  readonly maintenance: ScannerMetricsMaintenance | undefined;
  /** Each state dependency (database, key-value store): reachable or not, with its round trip. */
  dependencyStatus(): Promise<DependencyStatus[]>;
  close(): Promise<void>;
}

export async function startServiceState(options: ServiceStateOptions): Promise<ServiceState> {
  const heartbeats = options.services.map(
    (service) =>
      new HealthHeartbeat(options.keys, {
        service,
        ...(options.heartbeatMs === undefined ? {} : { intervalMs: options.heartbeatMs }),
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      }),
  );
  await Promise.all(heartbeats.map((h) => h.start()));
  let recorder: ScannerMetricsRecorder | undefined;
  let maintenance: ScannerMetricsMaintenance | undefined;
  if (options.db !== undefined && options.scanner !== undefined) {
    const store = new ScannerMetricsStore(options.db);
    maintenance = new ScannerMetricsMaintenance(options.db, store, options.logger === undefined ? {} : { logger: options.logger });
    maintenance.start();
    recorder = new ScannerMetricsRecorder(store, options.scanner.metrics, {
      scannerId: options.scanner.scannerId,
      ...(options.scanner.intervalMs === undefined ? {} : { intervalMs: options.scanner.intervalMs }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    await recorder.start();
  }
  const db = options.db;
  return {
    heartbeats,
    recorder,
    maintenance,
    async dependencyStatus() {
      const out: DependencyStatus[] = [await options.keys.store.status()];
      if (db !== undefined) {
        const started = performance.now();
        try {
          await db.ping();
          out.push({ name: 'postgres', target: db.target, ok: true, latencyMs: performance.now() - started });
        } catch (err) {
          out.push({ name: 'postgres', target: db.target, ok: false, error: (err as Error).message });
        }
      }
      return out;
    },
    async close() {
      await recorder?.close();
      await maintenance?.close();
      await Promise.all(heartbeats.map((h) => h.close()));
    },
  };
}
