/**
 * Whether the event loop is falling behind (issue 11 item 1): the signal the quote streams and the
 * aggregator's streams shed their interval pushes on, so that requested work never starves
 * GET /quote or /health.
 *
 * Two measures over a sliding window of `windowMs` (sampled by an unref'd timer):
 * - event-loop delay (node:perf_hooks `monitorEventLoopDelay`, 10 ms resolution): the p99 of how
 *   late the loop ran its timers; above `maxDelayMs` a request arriving now waits that long;
 * - event-loop utilization (`performance.eventLoopUtilization`): the share of the window the loop
 *   was busy; above `maxUtilization` there is no idle time left for a burst of requests.
 * `overloaded` is true while either is above its bound in the last complete window. One monitor
 * per process is shared by reference count (`acquireLoadMonitor` / `release`), as the loop is.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

export const DEFAULT_SHED_DELAY_MS = 20;
export const DEFAULT_SHED_UTILIZATION = 0.85;
export const DEFAULT_LOAD_WINDOW_MS = 250;

export interface LoadThresholds {
  /** Event-loop delay p99 (ms) above which interval pushes are shed; default 20. */
  maxDelayMs?: number;
  /** Event-loop utilization (0..1) above which interval pushes are shed; default 0.85. */
  maxUtilization?: number;
}

/** What a stream asks before doing optional work. */
export interface LoadSignal {
  readonly overloaded: boolean;
}

export class LoadMonitor implements LoadSignal {
  /** True while the last window was over a bound. */
  overloaded = false;
  /** The last window's figures. */
  delayP99Ms = 0;
  utilization = 0;
  private readonly maxDelayMs: number;
  private readonly maxUtilization: number;
  private readonly histogram: IntervalHistogram;
  private elu: EventLoopUtilization;
  private readonly timer: NodeJS.Timeout;

  constructor(thresholds: LoadThresholds = {}, windowMs = DEFAULT_LOAD_WINDOW_MS) {
    this.maxDelayMs = thresholds.maxDelayMs ?? DEFAULT_SHED_DELAY_MS;
    this.maxUtilization = thresholds.maxUtilization ?? DEFAULT_SHED_UTILIZATION;
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.elu = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.sample(), windowMs);
    this.timer.unref();
  }

  /** Reads and resets the window. */
  sample(): void {
    const now = performance.eventLoopUtilization();
    this.utilization = performance.eventLoopUtilization(now, this.elu).utilization;
    this.elu = now;
    // The histogram counts in ns, and its delay includes the 10 ms resolution itself.
    this.delayP99Ms = this.histogram.count === 0 ? 0 : Math.max(0, this.histogram.percentile(99) / 1e6 - 10);
    this.histogram.reset();
    this.overloaded = this.delayP99Ms > this.maxDelayMs || this.utilization > this.maxUtilization;
  }

  close(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

let shared: LoadMonitor | undefined;
let references = 0;

/** The process's load monitor (created by the first caller, with its thresholds). Pair with `releaseLoadMonitor`. */
export function acquireLoadMonitor(thresholds: LoadThresholds = {}): LoadMonitor {
  shared ??= new LoadMonitor(thresholds);
  references++;
  return shared;
}

export function releaseLoadMonitor(): void {
  references = Math.max(0, references - 1);
  if (references === 0 && shared !== undefined) {
    shared.close();
    shared = undefined;
  }
}
