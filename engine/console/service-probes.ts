/**
 * Health and readiness of the services the console watches: each service's `GET /health` (and
 * `GET /ready` where the service has one), polled with a short timeout. A refused connection, a
 * timeout or a 5xx is `down`; a 200 whose body says `degraded` is `degraded`; any other 2xx is `up`.
 */

/** A service to watch: its name and the URLs of its probes. */
export interface ServiceProbe {
  name: string;
  /** GET → 2xx while the service is alive. */
  health: string;
  /** GET → 2xx while the service takes traffic; absent when the service has no readiness probe. */
  ready?: string;
  /** Its Prometheus text (shown as a link in the console). */
  metrics?: string;
}

export type ProbeState = 'up' | 'degraded' | 'down';

export interface ProbeResult {
  state: ProbeState;
  /** HTTP status, 0 when there was no answer. */
  status: number;
  /** The body's `status` field when JSON, or why there was no answer. */
  detail: string;
  latencyMs: number;
}

export interface ServiceStatus {
  name: string;
  health: ProbeResult;
  ready: ProbeResult | null;
  metrics: string | null;
  /** Unix ms of this check. */
  checkedAt: number;
}

export const PROBE_TIMEOUT_MS = 1_000;

/** GETs `url` once and classifies the answer. Never throws. */
export async function probe(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const started = performance.now();
  const latency = (): number => Math.round((performance.now() - started) * 10) / 10;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let detail = '';
    try {
      const body = JSON.parse(text) as unknown;
      if (body !== null && typeof body === 'object' && 'status' in body) detail = String((body as { status: unknown }).status);
    } catch {
      detail = text.slice(0, 60).trim();
    }
    const state: ProbeState = res.status >= 200 && res.status < 300 ? (/degraded/i.test(detail) ? 'degraded' : 'up') : 'down';
    return { state, status: res.status, detail, latencyMs: latency() };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (err as Error).message);
    return { state: 'down', status: 0, detail: why, latencyMs: latency() };
  }
}

/** Probes every service at once. */
export async function checkServices(services: readonly ServiceProbe[], timeoutMs = PROBE_TIMEOUT_MS): Promise<ServiceStatus[]> {
  return Promise.all(
    services.map(async (s) => {
      const [health, ready] = await Promise.all([probe(s.health, timeoutMs), s.ready === undefined ? null : probe(s.ready, timeoutMs)]);
      return { name: s.name, health, ready, metrics: s.metrics ?? null, checkedAt: Date.now() };
    }),
  );
}
