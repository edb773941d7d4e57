import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache, U64_MAX } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CircuitBreaker, CircuitState } from '../common/index.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { FakeClock, manualSimulator, quoteHttpServer, storePool } from './testing.js';

/**
 * Issue 11 item 2 over real HTTP: refusals a request causes never open the circuit breaker; a
 * cache that cannot serve anybody (no fresh pool at all) still does.
 */
const sim = manualSimulator();
const clock = new FakeClock();
const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
const breaker = new CircuitBreaker({ now: clock.now });
let server: QuoteHttpServer;
let base: string;

beforeAll(async () => {
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  server = quoteHttpServer({ cache, rateLimiter: false, breaker, clock: () => 0 });
  base = `http://127.0.0.1:${await server.start(0)}`;
});

afterAll(async () => {
  await server.close();
  await sim.close();
});

async function get(path: string): Promise<{ status: number; body: { source?: string; error?: { code: string } } }> {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as { source?: string; error?: { code: string } } };
}

describe('circuit breaker: only the cache failing counts', () => {
  it('stays closed through many over-liquidity quotes, and other clients stay on the cache', async () => {
    // More output than any SOL/USDC pool holds: every fresh pool refuses the amount.
    const tooMuch = `/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${U64_MAX}&swapMode=ExactOut`;
    for (let i = 0; i < 25; i++) {
      const r = await get(tooMuch);
      expect(r.status).toBe(503);
      expect(r.body.error?.code).toBe(ErrorCode.NoValidQuotes);
    }
    // A request's own age limit that no pool meets is the request's too.
    clock.advance(1_000);
    for (let i = 0; i < 10; i++) expect((await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000&maxStateAgeMs=0`)).status).toBe(503);
    expect(breaker.state).toBe(CircuitState.Closed);
    const normal = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000`);
    expect(normal.status).toBe(200);
    expect(normal.body.source).toBe('cache');
  });

  it('opens when no pool of the cache is fresh (the feed stopped)', async () => {
    clock.advance(60_000);
    for (let i = 0; i < 5; i++) expect((await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000`)).body.error?.code).toBe(ErrorCode.NoValidQuotes);
    expect(breaker.state).toBe(CircuitState.Open);
  });
});
