-- tidepool:no-transaction
-- scanner_metrics where TimescaleDB is installed: a hypertable on `time` and the hourly continuous
-- aggregate of spec 03, with the same names and columns as 002_scanner_metrics.sql (plain
-- PostgreSQL). A continuous aggregate cannot be created inside a transaction, so this file runs
-- statement by statement.

CREATE EXTENSION IF NOT EXISTS timescaledb;

CREATE TABLE scanner_metrics (
    time             timestamptz NOT NULL,
    scanner_id       varchar(50) NOT NULL,
    events_processed integer,
    latency_p50      real,
    latency_p99      real,
    error_count      integer
);
SELECT create_hypertable('scanner_metrics', 'time', chunk_time_interval => INTERVAL '1 day');
CREATE INDEX idx_scanner_metrics_scanner_time ON scanner_metrics (scanner_id, time DESC);

-- Chunks are created by TimescaleDB on insert; this no-op keeps the maintenance job's call valid.
CREATE FUNCTION scanner_metrics_create_partitions(first_day date, days integer) RETURNS integer
LANGUAGE sql AS $$ SELECT 0 $$;

CREATE MATERIALIZED VIEW scanner_metrics_hourly
WITH (timescaledb.continuous) AS
SELECT time_bucket(INTERVAL '1 hour', time) AS bucket,
       scanner_id,
       sum(events_processed)::bigint     AS total_events,
       avg(latency_p50)                  AS avg_latency_p50,
       avg(latency_p99)                  AS avg_latency_p99,
       sum(error_count)::bigint          AS total_errors
FROM scanner_metrics
GROUP BY 1, 2
WITH NO DATA;

SELECT add_continuous_aggregate_policy('scanner_metrics_hourly',
    start_offset => INTERVAL '3 days',
    end_offset => INTERVAL '1 minute',
    schedule_interval => INTERVAL '5 minutes');
