/**
 * engine/state/db: the platform's PostgreSQL state. One SqlClient interface over a real server
 * (`pg`) and the embedded PostgreSQL (PGlite), versioned migrations from schemas/sql/, and the
 * scanner_metrics time series.
 */
export {
  normalizeParams,
  parseUtcTimestamp,
  redactUrl,
  type SqlBackendKind,
  type SqlClient,
  type SqlParam,
  type SqlQueryable,
} from './sql-client.js';
export { PgClient, isConnectionError, type PgClientOptions } from './pg-client.js';
export { PgliteClient, type PgliteClientOptions } from './pglite-client.js';
export { PgliteProcessClient, DEFAULT_PGLITE_CHILD } from './pglite-process.js';
export { openDatabase, openMigratedDatabase, type OpenDatabaseOptions } from './open-database.js';
export {
  MIGRATION_LOCK_KEY,
  MIGRATIONS_TABLE,
  migrateUp,
  migrationStatus,
  migrationsDir,
  readMigrationFiles,
  timescaleAvailable,
  type MigrateOptions,
  type MigrateResult,
  type MigrationFile,
  type MigrationStatus,
  type MigrationVariant,
} from './migrations.js';
export { splitSqlStatements } from './sql-script.js';
export {
  ScannerMetricsMaintenance,
  ScannerMetricsStore,
  utcDay,
  type ScannerMetricsHour,
  type ScannerMetricsLayout,
  type ScannerMetricsMaintenanceOptions,
  type ScannerMetricsRow,
} from './scanner-metrics.js';
