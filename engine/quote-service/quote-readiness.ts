/**
 * Readiness of the quote service (GET /ready), apart from liveness (GET /health): ready once its
 * inputs are live. Not ready, with the reason, while:
 * - the cache is enabled and holds no fresh pool yet (not loaded: the bus consumer or scanner has not
 *   filled it), unless the RPC fallback can answer (it knows pools and has a loader);
 * - the cache is disabled and there is no RPC fallback;
 * - the bus is enabled and not connected (`bus.status` other than connected / disabled / in-process).
 */
import type { QuoteHealth } from '../quote/index.js';

const LIVE_BUS: ReadonlySet<string> = new Set(['connected', 'disabled', 'in-process']);

/** Why a quote service whose health is `h` is not ready; undefined when ready. */
export function quoteNotReady(h: QuoteHealth): string | undefined {
  const reasons: string[] = [];
  if (!LIVE_BUS.has(h.bus.status)) reasons.push(`pool update bus is ${h.bus.status}`);
  const rpcServes = h.rpc.fallback === 'available' && h.rpc.known_pools > 0;
  if (h.cache.enabled) {
    if (h.cache.fresh_pools === 0 && !rpcServes) reasons.push('pool cache not loaded: no fresh pool yet');
  } else if (h.rpc.fallback !== 'available') {
    reasons.push('the cache is disabled and no RPC fallback is configured');
  }
  return reasons.length === 0 ? undefined : reasons.join('; ');
}
