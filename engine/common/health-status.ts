/**
 * The status every service's `GET /health` answers with, one vocabulary for all of them (the quote
 * service, the external quote service; docs/operations.md, Health):
 * - `ok`: the service does its job (HTTP 200);
 * - `degraded`: it answers, by a lesser path (the quote service's RPC fallback alone, the external
 *   service's half-open breaker or a provider's 429 pause) (200);
 * - `unavailable`: it cannot answer (503);
 * - `draining`: it is shutting down and takes no new work (503).
 * The aggregator's `serving` / `degraded` / `not_serving` are its proto's ServingStatus, and the
 * platform's heartbeat records `HeartbeatStatus` (engine/state/kv): separate vocabularies on
 * purpose, each fixed by what it is read with.
 */
export const HealthStatus = { Ok: 'ok', Degraded: 'degraded', Unavailable: 'unavailable', Draining: 'draining' } as const;
export type HealthStatus = (typeof HealthStatus)[keyof typeof HealthStatus];

/** The HTTP status of a health answer: 200 while the service answers, 503 otherwise. */
export function healthHttpStatus(status: HealthStatus): 200 | 503 {
  return status === HealthStatus.Ok || status === HealthStatus.Degraded ? 200 : 503;
}
