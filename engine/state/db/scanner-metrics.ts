import type { Logger } from '../../obs/index.js';
import type { SqlClient, SqlQueryable } from './sql-client.js';

/**
 * The `scanner_metrics` time series (spec 03): one row per scanner per interval, and its hourly
 * aggregate `scanner_metrics_hourly` (total_events, avg_latency_p50, avg_latency_p99,
 * total_errors per scanner and hour).
 *
 * On plain PostgreSQL the table is partitioned by UTC day and the aggregate is a materialized
 * view (schemas/sql/002_scanner_metrics.sql); ScannerMetricsMaintenance creates the partitions
 * ahead and refreshes the view on a schedule. With TimescaleDB both are the extension's job.
 */

export interface ScannerMetricsRow {
  time: Date;
  scannerId: string;
  eventsProcessed: number;
  /** Milliseconds; null when nothing was measured in the interval. */
  latencyP50: number | null;
  latencyP99: number | null;
  errorCount: number;
}

export interface ScannerMetricsHour {
  bucket: Date;
  scannerId: string;
  totalEvents: bigint;
  avgLatencyP50: number | null;
  avgLatencyP99: number | null;
  totalErrors: bigint;
}

/** SQLSTATE of "no partition of relation … found for row". */
const NO_PARTITION = '23514';
/** pg_try_advisory_lock key of the maintenance job ("tp-smm"). */
export const MAINTENANCE_LOCK_KEY = 0x7470_2d73_6d6dn;

export type ScannerMetricsLayout = 'partitioned' | 'timescaledb';

export class ScannerMetricsStore {
  private layoutCache: ScannerMetricsLayout | undefined;

  constructor(private readonly db: SqlClient) {}

  /** How this database holds the series (from the migration applied). */
  async layout(conn: SqlQueryable = this.db): Promise<ScannerMetricsLayout> {
    if (this.layoutCache !== undefined) return this.layoutCache;
    const rows = await conn.query<{ variant: string }>('SELECT variant FROM tidepool_migrations WHERE version = 2');
    this.layoutCache = rows[0]?.variant === 'timescaledb' ? 'timescaledb' : 'partitioned';
    return this.layoutCache;
  }

  /** Writes one row; creates its day's partition when it is missing, then writes it again. */
  async insert(row: ScannerMetricsRow): Promise<void> {
    const sql =
      'INSERT INTO scanner_metrics (time, scanner_id, events_processed, latency_p50, latency_p99, error_count) VALUES ($1, $2, $3, $4, $5, $6)';
    const params = [row.time, row.scannerId, row.eventsProcessed, row.latencyP50, row.latencyP99, row.errorCount];
    try {
      await this.db.query(sql, params);
    } catch (err) {
      if ((err as { code?: unknown }).code !== NO_PARTITION) throw err;
      await this.createPartitions(utcDay(row.time), 1);
      await this.db.query(sql, params);
    }
  }

  /** Creates the daily partitions of `days` days from `firstDay` (YYYY-MM-DD); returns how many were new. */
  async createPartitions(firstDay: string, days: number): Promise<number> {
    const rows = await this.db.query<{ n: number }>('SELECT scanner_metrics_create_partitions($1::date, $2) AS n', [firstDay, days]);
    return rows[0]?.n ?? 0;
  }

  /** Rebuilds the hourly view (plain PostgreSQL; TimescaleDB refreshes its own aggregate). */
  async refreshHourly(): Promise<void> {
    if ((await this.layout()) === 'timescaledb') return;
    await this.db.exec('REFRESH MATERIALIZED VIEW CONCURRENTLY scanner_metrics_hourly');
  }

  /** Rows of one scanner from `since`, oldest first. */
  async rows(scannerId: string, since: Date): Promise<ScannerMetricsRow[]> {
    const rows = await this.db.query<{
      time: Date;
      scanner_id: string;
      events_processed: number;
      latency_p50: number | null;
      latency_p99: number | null;
      error_count: number;
    }>('SELECT * FROM scanner_metrics WHERE scanner_id = $1 AND time >= $2 ORDER BY time', [scannerId, since]);
    return rows.map((r) => ({
      time: r.time,
      scannerId: r.scanner_id,
      eventsProcessed: r.events_processed,
      latencyP50: r.latency_p50,
      latencyP99: r.latency_p99,
      errorCount: r.error_count,
    }));
  }

  /** The hourly aggregate (as of its last refresh), newest hour first. */
  async hourly(scannerId?: string, limit = 168): Promise<ScannerMetricsHour[]> {
    const rows = await this.db.query<{
      bucket: Date;
      scanner_id: string;
      total_events: bigint | null;
      avg_latency_p50: number | null;
      avg_latency_p99: number | null;
      total_errors: bigint | null;
    }>(
      `SELECT bucket, scanner_id, total_events, avg_latency_p50, avg_latency_p99, total_errors FROM scanner_metrics_hourly
       WHERE $1::text IS NULL OR scanner_id = $1 ORDER BY bucket DESC, scanner_id LIMIT $2`,
      [scannerId ?? null, limit],
    );
    return rows.map((r) => ({
      bucket: r.bucket,
      scannerId: r.scanner_id,
      totalEvents: r.total_events ?? 0n,
      avgLatencyP50: r.avg_latency_p50,
      avgLatencyP99: r.avg_latency_p99,
      totalErrors: r.total_errors ?? 0n,
    }));
  }
}

/** `YYYY-MM-DD` of the UTC day of `t`. */
export function utcDay(t: Date): string {
  return t.toISOString().slice(0, 10);
}

export interface ScannerMetricsMaintenanceOptions {
  /** How often to refresh the view and create partitions. Default 5 min. */
  intervalMs?: number;
  /** Days of partitions kept ready ahead of today. Default 7. */
  daysAhead?: number;
  logger?: Logger;
}

/**
 * The schedule of the plain-PostgreSQL layout: every interval, under a try-lock (one instance of
 * several does the work), the partitions of today and `daysAhead` days are made sure of and the
 * hourly view is refreshed. Runs once at start.
 */
export class ScannerMetricsMaintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  readonly intervalMs: number;
  private readonly daysAhead: number;
  /** Completed runs (for tests and /stats). */
  runs = 0;

  constructor(
    private readonly db: SqlClient,
    private readonly store: ScannerMetricsStore,
    private readonly options: ScannerMetricsMaintenanceOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 300_000;
    this.daysAhead = options.daysAhead ?? 7;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
    void this.runOnce();
  }

  /** One pass; skipped when another instance holds the lock. Never throws (failures are logged). */
  async runOnce(): Promise<boolean> {
    if (this.running !== undefined) {
      await this.running;
      return false;
    }
    let did = false;
    this.running = (async () => {
      try {
        did = await this.db.withConnection(async (conn) => {
          const rows = await conn.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MAINTENANCE_LOCK_KEY]);
          if (rows[0]?.locked !== true) return false;
          try {
            await conn.query('SELECT scanner_metrics_create_partitions($1::date, $2)', [utcDay(new Date()), this.daysAhead + 1]);
            if ((await this.store.layout(conn)) === 'partitioned') await conn.exec('REFRESH MATERIALIZED VIEW CONCURRENTLY scanner_metrics_hourly');
            return true;
          } finally {
            await conn.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
          }
        });
        this.runs++;
      } catch (err) {
        this.options.logger?.warn({ err }, 'scanner_metrics maintenance failed');
      }
    })();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
    return did;
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
