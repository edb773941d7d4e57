import { existsSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * Issue 11, item 6: /health reflects recent outcomes, with the reason in the body, under the
 * simulator's faults (engine/sim/faults.ts): a stalled block-entry stream, failing RPC reads.
 */
const built = existsSync(PARSE_WORKER);
let e: EngineUnderSim | undefined;
afterEach(async () => {
  e?.sim.faults.clear();
  await e?.close();
  e = undefined;
});

interface ScannerHealthBody {
  status: string;
  reason: string;
  reads: { ok: number; failed: number; errorRate: number | null };
}

async function health<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as T };
}

function swapEveryPool(engine: EngineUnderSim): void {
  const chain = engine.sim.chain;
  for (const [i, p] of chain.pools().entries()) {
    const info = chain.poolInfo(p.address)!;
    chain.sendTransaction(swapTransaction(chain, trader(chain, i % 4), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
  }
  chain.advanceSlot(1);
}

describe.skipIf(!built)('scanner /health', () => {
  it('says stalled (503) when the stream is connected but no entry comes for health.maxEntryAge', async () => {
    e = await startEngineUnderSim({ engine: { 'health-max-entry-age': '500ms' } });
    const engine = e;
    await eventually(() => (engine.engine.scanner.connected ? true : undefined), 10_000, 'connected');
    engine.sim.chain.advanceSlot(1);
    await eventually(async () => ((await health<ScannerHealthBody>(engine.endpoints.scanner)).status === 200 ? true : undefined), 10_000, 'ok');
    engine.sim.faults.stream.stall = true;
    engine.sim.chain.advanceSlot(1);
    const stalled = await eventually(async () => {
      const h = await health<ScannerHealthBody>(engine.endpoints.scanner);
      return h.status === 503 ? h : undefined;
    }, 10_000, 'stalled');
    expect(stalled.body.status).toBe('stalled');
    expect(stalled.body.reason).toMatch(/no block entry for \d+ ms \(limit 500 ms\)/);
    expect(engine.engine.scanner.connected).toBe(true);
    // Entries again: healthy again.
    engine.sim.faults.stream.stall = false;
    engine.sim.chain.advanceSlot(1);
    await eventually(async () => ((await health<ScannerHealthBody>(engine.endpoints.scanner)).status === 200 ? true : undefined), 10_000, 'ok again');
  });

  it('says reads_failing (503) when pool reads fail over the window', async () => {
    e = await startEngineUnderSim({ engine: { 'health-min-samples': '3', 'health-max-error-rate': '0.5', 'health-max-entry-age': '1h' } });
    const engine = e;
    await eventually(() => (engine.engine.scanner.connected ? true : undefined), 10_000, 'connected');
    engine.sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    swapEveryPool(engine);
    const failing = await eventually(async () => {
      const h = await health<ScannerHealthBody>(engine.endpoints.scanner);
      return h.status === 503 ? h : undefined;
    }, 10_000, 'reads failing');
    expect(failing.body.status).toBe('reads_failing');
    expect(failing.body.reason).toMatch(/of \d+ pool reads failed in the last \d+ s/);
    expect(failing.body.reads.failed).toBeGreaterThanOrEqual(3);
  });
});

interface QuoteHealthBody {
  status: string;
  reason: string;
  recent: { ok: number; failed: number; errorRate: number | null };
}

describe.skipIf(!built)('quote service /health', () => {
  it('says unavailable (503) with the reason when its answers are 503 over the window, not degraded', async () => {
    e = await startEngineUnderSim({ engine: { 'cache-staleness-threshold': '200ms', 'refresh-seconds': '3600', 'health-min-samples': '5', 'health-max-error-rate': '0.5' } });
    const engine = e;
    const url = `${engine.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000`;
    expect((await fetch(url)).status).toBe(200);
    // The cache goes stale (nothing moves on the manual chain) and every RPC read fails.
    await eventually(async () => {
      const h = await health<{ cache: { fresh_pools: number } }>(engine.endpoints.quote);
      return h.body.cache.fresh_pools === 0 ? true : undefined;
    }, 10_000, 'stale cache');
    engine.sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    for (let i = 0; i < 6; i++) expect((await fetch(url)).status).toBe(503);
    const h = await health<QuoteHealthBody>(engine.endpoints.quote);
    expect(h.status).toBe(503);
    expect(h.body.status).toBe('unavailable');
    expect(h.body.reason).toMatch(/^6 of 7 quotes failed in the last \d+ s/);
    expect(h.body.recent).toMatchObject({ ok: 1, failed: 6 });
  });
});
