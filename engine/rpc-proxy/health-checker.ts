import type { EndpointSet } from './endpoint-set.js';
import { member, objectMembers } from './json-scan.js';
import type { RpcProxyMetrics } from './rpc-proxy-metrics.js';
import { EndpointState, type UpstreamEndpoint, type UpstreamResult } from './upstream-endpoint.js';

/**
 * The active health checks: every `intervalMs`, each endpoint gets `getHealth` and `getSlot`
 * (processed) at once, each with the request timeout, on the endpoint's own probe connections (so
 * that a busy traffic queue does not make a healthy endpoint look down). An endpoint is
 * - down when either fails (network error, timeout, an HTTP status other than 200, a JSON-RPC
 *   error such as a node's -32005 "Node is behind", a getHealth other than "ok");
 * - lagging when it answers but its slot is more than `maxSlotLag` behind the best slot of the
 *   round (the highest slot among the endpoints whose getHealth said "ok", so that a node
 *   reporting a wild slot cannot put every other endpoint out);
 * - up otherwise, which also puts back an endpoint that requests had taken out.
 * Rounds do not overlap: the next starts `intervalMs` after the previous one started, or when it
 * ends if it took longer.
 */

const GET_HEALTH = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getHealth"}');
const GET_SLOT = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"processed"}]}');

export interface HealthCheckerOptions {
  intervalMs: number;
  timeoutMs: number;
  maxSlotLag: number;
  metrics: RpcProxyMetrics;
}

/** What one endpoint answered in a round. */
type Probe = { ok: true; slot: bigint; latencyMs: number } | { ok: false; reason: string; slot?: bigint };

/** The `result` of a JSON-RPC answer as raw text, or why there is none. */
function resultText(method: string, r: UpstreamResult): { text: string } | { reason: string } {
  if (!r.ok) return { reason: `${method}: ${r.kind === 'timeout' ? `timeout, ${r.message}` : r.message}` };
  if (r.status !== 200) return { reason: `${method}: HTTP ${r.status}` };
  const members = objectMembers(r.body, 0, r.body.length);
  const result = members === null ? undefined : member(members, 'result');
  if (members === null || result === undefined) {
    const error = members === null ? undefined : member(members, 'error');
    if (error === undefined) return { reason: `${method}: not a JSON-RPC answer` };
    try {
      const e = JSON.parse(r.body.subarray(error.start, error.end).toString()) as { code?: unknown; message?: unknown };
      return { reason: `${method}: ${String(e.message)} (${String(e.code)})` };
    } catch {
      return { reason: `${method}: malformed error` };
    }
  }
  return { text: r.body.subarray(result.start, result.end).toString() };
}

export class HealthChecker {
  /** The best slot of the last round (null before one). */
  bestSlot: bigint | null = null;
  rounds = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly set: EndpointSet,
    private readonly options: HealthCheckerOptions,
  ) {}

  /** Runs a first round now (resolves when it is done), then one every interval. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.round();
  }

  /** Stops the rounds; resolves when the one running, if any, is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round now (or the running one). */
  round(): Promise<void> {
    this.running ??= this.checkAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async checkAll(): Promise<void> {
    const started = Date.now();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const probes = await Promise.all(this.set.list.map((e) => this.probe(e)));
    let best: bigint | null = null;
    for (const p of probes) if (p.ok && (best === null || p.slot > best)) best = p.slot;
    this.bestSlot = best;
    const now = Date.now();
    this.set.list.forEach((e, i) => {
      const p = probes[i]!;
      e.lastCheckUnixMs = now;
      if (!p.ok) {
        if (p.slot !== undefined) e.slot = p.slot;
        e.slotLag = best !== null && e.slot !== null && best > e.slot ? Number(best - e.slot) : null;
        this.options.metrics.healthChecks.labels(e.name, EndpointState.Down).inc();
        this.set.setState(e, EndpointState.Down, p.reason);
        return;
      }
      e.slot = p.slot;
      e.latencyMs = p.latencyMs;
      const lag = best === null || p.slot >= best ? 0 : Number(best - p.slot);
      e.slotLag = lag;
      if (lag > this.options.maxSlotLag) {
        this.options.metrics.healthChecks.labels(e.name, EndpointState.Lagging).inc();
        this.set.setState(e, EndpointState.Lagging, `${lag} slots behind the best endpoint (more than ${this.options.maxSlotLag})`);
        return;
      }
      this.options.metrics.healthChecks.labels(e.name, EndpointState.Up).inc();
      e.consecutiveFailures = 0;
      this.set.setState(e, EndpointState.Up, null);
    });
    this.rounds++;
    if (!this.stopped) {
      const wait = Math.max(0, this.options.intervalMs - (Date.now() - started));
      this.timer = setTimeout(() => void this.round(), wait);
      this.timer.unref();
    }
  }

  private async probe(e: UpstreamEndpoint): Promise<Probe> {
    const [health, slot] = await Promise.all([e.probe(GET_HEALTH, this.options.timeoutMs), e.probe(GET_SLOT, this.options.timeoutMs)]);
    const s = resultText('getSlot', slot);
    let slotValue: bigint | undefined;
    if ('text' in s) {
      if (!/^\d{1,20}$/.test(s.text)) return { ok: false, reason: `getSlot: not a slot: ${s.text.slice(0, 40)}` };
      slotValue = BigInt(s.text);
    }
    const h = resultText('getHealth', health);
    if ('reason' in h) return slotValue === undefined ? { ok: false, reason: h.reason } : { ok: false, reason: h.reason, slot: slotValue };
    if (h.text !== '"ok"') return { ok: false, reason: `getHealth: ${h.text.slice(0, 80)}` };
    if (slotValue === undefined) return { ok: false, reason: (s as { reason: string }).reason };
    return { ok: true, slot: slotValue, latencyMs: slot.ms };
  }
}
