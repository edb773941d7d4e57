-- scanner_metrics on plain PostgreSQL (and the embedded one): the time-series table of spec 03,
-- partitioned by day on `time`, with the hourly aggregate as a materialized view.
--
-- Where TimescaleDB is installed, 002_scanner_metrics.timescaledb.sql is applied instead (a
-- hypertable and a continuous aggregate with the same names and columns).
--
-- Partitions: one per UTC day, named scanner_metrics_pYYYYMMDD, created ahead of time by
-- scanner_metrics_create_partitions(); this migration creates yesterday to 7 days ahead, and the
-- platform's maintenance job keeps creating them ahead (engine/state/db/scanner-metrics.ts).
-- There is no default partition: a row for a day without a partition is refused (SQLSTATE 23514),
-- and the writer then creates that day's partition and writes it again.
-- The view is refreshed on a schedule by the same job (REFRESH ... CONCURRENTLY, which needs the
-- unique index).

CREATE TABLE scanner_metrics (
    time             timestamptz NOT NULL,
    scanner_id       varchar(50) NOT NULL,
    events_processed integer,
    latency_p50      real,
    latency_p99      real,
    error_count      integer
) PARTITION BY RANGE (time);
CREATE INDEX idx_scanner_metrics_scanner_time ON scanner_metrics (scanner_id, time DESC);

-- Creates the daily partitions of `days` UTC days from `first_day`; returns how many it created.
CREATE FUNCTION scanner_metrics_create_partitions(first_day date, days integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    day date;
    created integer := 0;
    part text;
BEGIN
    FOR i IN 0 .. days - 1 LOOP
        day := first_day + i;
        part := 'scanner_metrics_p' || to_char(day, 'YYYYMMDD');
        IF to_regclass(part) IS NULL THEN
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF scanner_metrics FOR VALUES FROM (%L) TO (%L)',
                part,
                (day::timestamp AT TIME ZONE 'UTC'),
                ((day + 1)::timestamp AT TIME ZONE 'UTC'));
            created := created + 1;
        END IF;
    END LOOP;
    RETURN created;
END
$$;

SELECT scanner_metrics_create_partitions((now() AT TIME ZONE 'UTC')::date - 1, 9);

CREATE MATERIALIZED VIEW scanner_metrics_hourly AS
SELECT date_trunc('hour', time, 'UTC')   AS bucket,
       scanner_id,
       sum(events_processed)::bigint     AS total_events,
       avg(latency_p50)                  AS avg_latency_p50,
       avg(latency_p99)                  AS avg_latency_p99,
       sum(error_count)::bigint          AS total_errors
FROM scanner_metrics
GROUP BY 1, 2
WITH DATA;
CREATE UNIQUE INDEX idx_scanner_metrics_hourly_key ON scanner_metrics_hourly (scanner_id, bucket);
