/**
 * The aggregator's health (aggregator.proto AggregatorHealthResponse), from its upstreams' health:
 * both healthy → SERVING, one → DEGRADED (quotes are local-only or external-only), none →
 * NOT_SERVING. Shared by the gRPC Health call and GET /health.
 *
 * An upstream is healthy when it streams fresh quotes AND (issue 11, item 6) its quotes over the
 * last `health.window` are not errors at `health.maxErrorRate` or more (engine/obs OutcomeWindow
 * over its quotesReceived/errors counters): an upstream answering only errors is not serving.
 * `reasons` (GET /health only) says why an upstream counts as unhealthy.
 */
import { DEFAULT_HEALTH_THRESHOLDS, type HealthThresholdValues } from '../config/index.js';
import { OutcomeWindow, judgeOutcomes } from '../obs/index.js';
import type { AggregatorCore } from './aggregator-core.js';
import { ServingStatusName, UpstreamStateName, type WireUpstreamStatus } from './wire-types.js';

export interface AggregatorHealth {
  status: ServingStatusName;
  local: WireUpstreamStatus;
  external: WireUpstreamStatus;
  activeStreams: number;
  confidenceScoringEnabled: boolean;
  version: string;
  startedAtUnixMs: string;
  checkedAtUnixMs: string;
  /** Why each unhealthy upstream is (absent when healthy). */
  reasons: { local?: string; external?: string };
}

interface UpstreamWindows {
  thresholds: HealthThresholdValues;
  local: OutcomeWindow;
  external: OutcomeWindow;
}

const windowsOf = new WeakMap<AggregatorCore, UpstreamWindows>();

/** Sets the `health.*` thresholds the upstreams of `core` are judged by (default DEFAULT_HEALTH_THRESHOLDS). */
export function configureAggregatorHealth(core: AggregatorCore, thresholds: HealthThresholdValues): void {
  windowsOf.set(core, { thresholds, local: new OutcomeWindow(thresholds.windowMs), external: new OutcomeWindow(thresholds.windowMs) });
}

function windows(core: AggregatorCore): UpstreamWindows {
  let w = windowsOf.get(core);
  if (w === undefined) {
    configureAggregatorHealth(core, DEFAULT_HEALTH_THRESHOLDS);
    w = windowsOf.get(core)!;
  }
  return w;
}

/** Why `status` makes its upstream unhealthy, or undefined. */
function upstreamProblem(name: 'local' | 'external', status: WireUpstreamStatus, window: OutcomeWindow, thresholds: HealthThresholdValues): string | undefined {
  const errors = Number(status.errors);
  const recent = window.observe({ ok: Math.max(0, Number(status.quotesReceived) - errors), failed: errors });
  const failing = judgeOutcomes(recent, thresholds, `${name} upstream quotes`);
  if (failing !== undefined) return status.lastError === '' ? failing : `${failing}; last error: ${status.lastError}`;
  if (!status.healthy) {
    const why = status.state === UpstreamStateName.Streaming ? 'streaming, but its last quote is older than the staleness window' : `in state ${status.state}`;
    return `${name} upstream is ${why}${status.lastError === '' ? '' : ` (last error: ${status.lastError})`}`;
  }
  return undefined;
}

export function servingStatus(localHealthy: boolean, externalHealthy: boolean): ServingStatusName {
  if (localHealthy && externalHealthy) return ServingStatusName.Serving;
  if (localHealthy || externalHealthy) return ServingStatusName.Degraded;
  return ServingStatusName.NotServing;
}

export function aggregatorHealth(core: AggregatorCore, version: string): AggregatorHealth {
  const now = Date.now();
  const w = windows(core);
  const local = core.upstreams.local.status(now);
  const external = core.upstreams.external.status(now);
  const reasons: AggregatorHealth['reasons'] = {};
  const localProblem = upstreamProblem('local', local, w.local, w.thresholds);
  const externalProblem = upstreamProblem('external', external, w.external, w.thresholds);
  if (localProblem !== undefined) {
    reasons.local = localProblem;
    local.healthy = false;
  }
  if (externalProblem !== undefined) {
    reasons.external = externalProblem;
    external.healthy = false;
  }
  return {
    status: servingStatus(local.healthy, external.healthy),
    reasons,
    local,
    external,
    activeStreams: core.activeStreams,
    confidenceScoringEnabled: core.scoringEnabled,
    version,
    startedAtUnixMs: String(core.startedAt),
    checkedAtUnixMs: String(now),
  };
}
