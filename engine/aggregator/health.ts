/**
 * The aggregator's health (aggregator.proto AggregatorHealthResponse), from its upstreams' health:
 * both healthy → SERVING, one → DEGRADED (quotes are local-only or external-only), none →
 * NOT_SERVING. Shared by the gRPC Health call and GET /health.
 */
import type { AggregatorCore } from './aggregator-core.js';
import { ServingStatusName, type WireUpstreamStatus } from './wire-types.js';

export interface AggregatorHealth {
  status: ServingStatusName;
  local: WireUpstreamStatus;
  external: WireUpstreamStatus;
  activeStreams: number;
  confidenceScoringEnabled: boolean;
  version: string;
  startedAtUnixMs: string;
  checkedAtUnixMs: string;
}

export function servingStatus(localHealthy: boolean, externalHealthy: boolean): ServingStatusName {
  if (localHealthy && externalHealthy) return ServingStatusName.Serving;
  if (localHealthy || externalHealthy) return ServingStatusName.Degraded;
  return ServingStatusName.NotServing;
}

export function aggregatorHealth(core: AggregatorCore, version: string): AggregatorHealth {
  const now = Date.now();
  const local = core.upstreams.local.status(now);
  const external = core.upstreams.external.status(now);
  return {
    status: servingStatus(local.healthy, external.healthy),
    local,
    external,
    activeStreams: core.activeStreams,
    confidenceScoringEnabled: core.scoringEnabled,
    version,
    startedAtUnixMs: String(core.startedAt),
    checkedAtUnixMs: String(now),
  };
}
