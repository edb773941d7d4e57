/**
 * Histogram bucket boundaries, named once so the scanner, the quote service, the alert rules and the
 * dashboards agree on them.
 */

/**
 * Scanner latencies in milliseconds (`shredstream_latency_ms`, `processing_latency_ms`,
 * `end_to_end_latency_ms`; spec 02 names them in ms). Roughly 1-2.5-5 per decade from 0.1 ms to 1 s:
 * sub-millisecond resolution for the in-process hops, 100 ms exactly on a boundary because the
 * "P95 end-to-end latency above 100 ms" alert compares against it, and 1 s as the last finite bucket
 * (anything slower is an outage, counted in +Inf).
 */
export const LATENCY_MS_BUCKETS: readonly number[] = Object.freeze([
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000,
]);

/**
 * Quote-service latencies in seconds (Prometheus base unit). 100 µs to 5 s: cache hits are meant to
 * stay below 1 ms (p99 goal) and the spec's 5 to 10 ms target lands between boundaries; RPC fallback
 * (100 to 200 ms expected) gets 0.1 / 0.2 / 0.5 boundaries; slow or timed-out RPC lands in 1 to 5 s.
 */
export const LATENCY_SECONDS_BUCKETS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5,
]);
