import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_MS_BUCKETS } from './buckets.js';
import { createMetricsRegistry, type MetricsRegistryOptions } from './registry.js';

/**
 * The scanner's metrics, under the exact names of spec 02 ("Metrics"). Callers hold this object and
 * use its fields; nothing looks a metric up by name. None of them has labels, so every field is the
 * series itself and `inc` / `observe` / `set` do no label hashing on the hot path.
 */
export interface ScannerMetrics {
  readonly registry: Registry;
  /** Block entries received from the block-entry stream. */
  readonly entriesReceived: Counter;
  /** Transactions parsed and checked against the monitored pools. */
  readonly transactionsProcessed: Counter;
  /** PoolStateUpdateEvents published to the bus. */
  readonly eventsPublished: Counter;
  /** Entries or transactions that could not be parsed. */
  readonly parsingErrors: Counter;
  /** Failed publishes to the bus (spec 02 renamed `nats_publish_errors_total` to this). */
  readonly busPublishErrors: Counter;
  /** Failures of the block-entry stream connection. */
  readonly connectionErrors: Counter;
  /** Transactions dropped because the processing queue was full (`queueSizeLimit`). */
  readonly droppedTransactions: Counter;
  /** Milliseconds from the stream to the scanner (entry timestamp to receipt). */
  readonly shredstreamLatencyMs: Histogram;
  /** Milliseconds from receipt by the scanner to publish. */
  readonly processingLatencyMs: Histogram;
  /** Milliseconds from the stream to publish. */
  readonly endToEndLatencyMs: Histogram;
  /** Transactions waiting for a worker. */
  readonly processingQueueSize: Gauge;
  /** 1 while the block-entry stream is connected, 0 otherwise. */
  readonly connected: Gauge;
}

/** Metric names of spec 02 for the scanner, by field of {@link ScannerMetrics}. */
export const SCANNER_METRIC_NAMES = {
  entriesReceived: 'blockstream_scanner_entries_received_total',
  transactionsProcessed: 'blockstream_scanner_transactions_processed_total',
  eventsPublished: 'blockstream_scanner_events_published_total',
  parsingErrors: 'parsing_errors_total',
  busPublishErrors: 'bus_publish_errors_total',
  connectionErrors: 'connection_errors_total',
  droppedTransactions: 'dropped_transactions_total',
  shredstreamLatencyMs: 'shredstream_latency_ms',
  processingLatencyMs: 'processing_latency_ms',
  endToEndLatencyMs: 'end_to_end_latency_ms',
  processingQueueSize: 'processing_queue_size',
  connected: 'blockstream_scanner_connected',
} as const satisfies Record<Exclude<keyof ScannerMetrics, 'registry'>, string>;

/** A fresh registry holding every scanner metric. */
export function createScannerMetrics(options: MetricsRegistryOptions = {}): ScannerMetrics {
  const registry = createMetricsRegistry(options);
  const n = SCANNER_METRIC_NAMES;
  const counter = (name: string, help: string): Counter =>
    new Counter({ name, help, registers: [registry] });
  const latency = (name: string, help: string): Histogram =>
    new Histogram({ name, help, buckets: [...LATENCY_MS_BUCKETS], registers: [registry] });
  const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers: [registry] });

  const metrics: ScannerMetrics = {
    registry,
    entriesReceived: counter(n.entriesReceived, 'Block entries received from the block-entry stream.'),
    transactionsProcessed: counter(n.transactionsProcessed, 'Transactions parsed and checked against the monitored pools.'),
    eventsPublished: counter(n.eventsPublished, 'Pool state update events published to the bus.'),
    parsingErrors: counter(n.parsingErrors, 'Entries or transactions that could not be parsed.'),
    busPublishErrors: counter(n.busPublishErrors, 'Failed publishes to the message bus.'),
    connectionErrors: counter(n.connectionErrors, 'Block-entry stream connection failures.'),
    droppedTransactions: counter(n.droppedTransactions, 'Transactions dropped because the processing queue was full.'),
    shredstreamLatencyMs: latency(n.shredstreamLatencyMs, 'Latency from the block-entry stream to the scanner, in milliseconds.'),
    processingLatencyMs: latency(n.processingLatencyMs, 'Latency from receipt by the scanner to publish, in milliseconds.'),
    endToEndLatencyMs: latency(n.endToEndLatencyMs, 'Latency from the block-entry stream to publish, in milliseconds.'),
    processingQueueSize: gauge(n.processingQueueSize, 'Transactions waiting for a worker.'),
    connected: gauge(n.connected, 'Whether the block-entry stream is connected (1) or not (0).'),
  };
  metrics.connected.set(0);
  return metrics;
}
