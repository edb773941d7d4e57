/**
 * Writes a service's metrics to the bus (spec 03 stream `system.metrics`, "internal metrics"): every
 * interval, the samples of its registry as a SystemMetrics message on `system.metrics.<service>`
 * (engine/messages/system-metrics.ts), published to JetStream (stream SYSTEM_METRICS, kept 7 days).
 *
 * Best effort, as a scrape is: while the bus is down an interval's snapshot is skipped (the next one
 * carries the counters on, they are cumulative), a refused publish is logged once per outage, and
 * nothing here stops the service. The last snapshot goes out when the service closes, so a short
 * run leaves one too.
 */
import { hostname } from 'node:os';

import type { Registry } from 'prom-client';

import type { BusConnection } from '../bus/index.js';
import { encodeSystemMetrics, systemMetricsOf, systemMetricsSubject } from '../messages/index.js';
import type { Logger } from '../obs/index.js';

/** Time between two snapshots: a scrape interval's order, small beside the stream's 1 GiB. */
export const SYSTEM_METRICS_INTERVAL_MS = 15_000;

export interface SystemMetricsPublisherOptions {
  bus: BusConnection;
  registry: Registry;
  service: string;
  logger: Logger;
  /** Subject prefix of the deployment (tests, several deployments on one NATS). */
  prefix?: string;
  intervalMs?: number;
}

export class SystemMetricsPublisher {
  /** Snapshots published (acknowledged by the stream). */
  published = 0;
  private readonly o: SystemMetricsPublisherOptions;
  private readonly subject: string;
  private readonly instance = `${hostname()}:${process.pid}`;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private failing = false;

  constructor(options: SystemMetricsPublisherOptions) {
    this.o = options;
    this.subject = systemMetricsSubject(options.service, options.prefix ?? '');
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.publish(), this.o.intervalMs ?? SYSTEM_METRICS_INTERVAL_MS);
    this.timer.unref();
  }

  /** One snapshot now (skipped while the bus is down or one is still in flight). */
  publish(): Promise<void> {
    this.inFlight ??= this.publishOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Stops the interval and publishes the last snapshot. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
    await this.publish();
  }

  private async publishOnce(): Promise<void> {
    const js = this.o.bus.connected ? this.o.bus.jetstream() : undefined;
    if (js === undefined) return;
    try {
      const message = await systemMetricsOf(this.o.registry, this.o.service, this.instance, Date.now());
      await js.publish(this.subject, encodeSystemMetrics(message));
      this.published++;
      if (this.failing) this.o.logger.info({ subject: this.subject }, 'system metrics published again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.o.logger.warn({ err: (err as Error).message, subject: this.subject }, 'system metrics not published; the next interval tries again');
      this.failing = true;
    }
  }
}
