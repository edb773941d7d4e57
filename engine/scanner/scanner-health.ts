/**
 * The scanner's health (GET /health on :8081, issue 11, item 6): not only "is the stream
 * connected", but whether the scanner is doing its job. In order, the first that holds is the
 * status (503 for all but ok), with `reason` saying why:
 *   disconnected     the block-entry stream is not connected
 *   bus_unavailable  events go to a bus that is not connected (spec 02, network partition)
 *   stalled          connected, but no entry for `health.maxEntryAge` (since start when none yet)
 *   no_pools         nothing is monitored
 *   reads_failing    pool reads failed at `health.maxErrorRate` or more over `health.window`
 *                    (events published vs. pool loads that failed, engine/obs OutcomeWindow)
 *   ok
 * The body keeps the fields it had (connected, lastSlot, lastEntryAgeMs, monitoredPools,
 * connections, connectionErrors, bus) and adds `reason` and `reads` (the window's counts).
 */
import { DEFAULT_HEALTH_THRESHOLDS, type HealthThresholdValues } from '../config/index.js';
import { OutcomeWindow, judgeOutcomes, type WindowedOutcomes } from '../obs/index.js';
import type { Scanner } from './scanner.js';

export interface ScannerHealthSettings {
  thresholds: HealthThresholdValues;
  /** ms without an entry after which a connected stream counts as stalled. */
  maxEntryAgeMs: number;
}

export const DEFAULT_SCANNER_HEALTH: ScannerHealthSettings = { thresholds: DEFAULT_HEALTH_THRESHOLDS, maxEntryAgeMs: 30_000 };

export const ScannerHealthStatus = {
  Ok: 'ok',
  Disconnected: 'disconnected',
  BusUnavailable: 'bus_unavailable',
  Stalled: 'stalled',
  NoPools: 'no_pools',
  ReadsFailing: 'reads_failing',
} as const;
export type ScannerHealthStatus = (typeof ScannerHealthStatus)[keyof typeof ScannerHealthStatus];

export interface ScannerHealthReport {
  healthy: boolean;
  status: ScannerHealthStatus;
  reason: string;
  body: Record<string, unknown>;
}

export class ScannerHealth {
  private readonly reads: OutcomeWindow;
  private readonly startedAt = performance.now();
  readonly settings: ScannerHealthSettings;

  constructor(
    private readonly scanner: Scanner,
    settings: ScannerHealthSettings = DEFAULT_SCANNER_HEALTH,
    private readonly busStatus?: () => string,
  ) {
    this.settings = settings;
    this.reads = new OutcomeWindow(settings.thresholds.windowMs);
  }

  /** The scanner's health now; `body` is the /health JSON. */
  check(): ScannerHealthReport {
    const s = this.scanner.stats();
    const connected = s.stream.connected;
    const bus = this.busStatus?.();
    const failedLoads = s.loadFailures.missing + s.loadFailures.unknown_owner + s.loadFailures.decode + s.loadFailures.rpc;
    const reads: WindowedOutcomes = this.reads.observe({ ok: s.eventsPublished, failed: failedLoads });
    const entryAge = s.lastEntryAgeMs ?? performance.now() - this.startedAt;
    let status: ScannerHealthStatus = ScannerHealthStatus.Ok;
    let reason = 'streaming and reading pools';
    const readsFailing = judgeOutcomes(reads, this.settings.thresholds, 'pool reads');
    if (!connected) {
      status = ScannerHealthStatus.Disconnected;
      reason = 'the block-entry stream is not connected';
    } else if (bus !== undefined && bus !== 'connected') {
      status = ScannerHealthStatus.BusUnavailable;
      reason = `the message bus is ${bus}`;
    } else if (entryAge > this.settings.maxEntryAgeMs) {
      status = ScannerHealthStatus.Stalled;
      reason = `no block entry for ${Math.round(entryAge)} ms (limit ${this.settings.maxEntryAgeMs} ms)`;
    } else if (s.monitoredPools === 0) {
      status = ScannerHealthStatus.NoPools;
      reason = 'no pool is monitored';
    } else if (readsFailing !== undefined) {
      status = ScannerHealthStatus.ReadsFailing;
      reason = readsFailing;
    }
    return {
      healthy: status === ScannerHealthStatus.Ok,
      status,
      reason,
      body: {
        status,
        reason,
        connected,
        ...(bus === undefined ? {} : { bus }),
        lastSlot: s.lastSlot,
        lastEntryAgeMs: s.lastEntryAgeMs,
        maxEntryAgeMs: this.settings.maxEntryAgeMs,
        monitoredPools: s.monitoredPools,
        connections: s.stream.connections,
        connectionErrors: s.stream.connectionErrors,
        reads: { ...reads, loadFailures: s.loadFailures },
      },
    };
  }
}
