import type { Logger } from '../../obs/index.js';
import { HeartbeatStatus, type HealthValue, type KeySpace } from './key-space.js';

/**
 * A service's heartbeat: `system:health:{service}` = {status, lastHeartbeat, detail} written at
 * start, every `intervalMs`, and as `stopped` on close. The key is persistent (spec 03): a reader
 * tells a dead service from a live one by `lastHeartbeat`, not by the key vanishing.
 * `status()` is asked at each beat (e.g. `degraded` while a dependency is down).
 */

export interface HealthHeartbeatOptions {
  service: string;
  /** Default 5 s. */
  intervalMs?: number;
  status?: () => { status: HeartbeatStatus; detail?: Record<string, unknown> };
  logger?: Logger;
}

export class HealthHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  readonly intervalMs: number;
  /** Beats written. */
  beats = 0;
  /** Beats that failed to write (the store was down). */
  failures = 0;

  constructor(
    private readonly keys: KeySpace,
    private readonly options: HealthHeartbeatOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 5000;
  }

  /** Writes the first beat, then one per interval. */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
    await this.beat();
  }

  /** One beat now; never throws. */
  async beat(): Promise<void> {
    if (this.beating !== undefined) return this.beating;
    const s = this.options.status?.() ?? { status: HeartbeatStatus.Ok };
    this.beating = this.write({ status: s.status, lastHeartbeat: Date.now(), ...(s.detail === undefined ? {} : { detail: s.detail }) });
    try {
      await this.beating;
    } finally {
      this.beating = undefined;
    }
  }

  private async write(value: HealthValue): Promise<void> {
    try {
      await this.keys.setHealth(this.options.service, value);
      this.beats++;
    } catch (err) {
      this.failures++;
      if (this.failures === 1 || this.failures % 60 === 0) {
        this.options.logger?.warn({ err, service: this.options.service, failures: this.failures }, 'heartbeat write failed');
      }
    }
  }

  /** Stops beating and writes `stopped`. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.write({ status: HeartbeatStatus.Stopped, lastHeartbeat: Date.now() });
  }
}
