import { existsSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * The engine's failure paths of spec 02, each with its own engine and settings: a full processing
 * queue, stale cache entries, a failing or slow RPC behind the fallback.
 */

const built = existsSync(PARSE_WORKER);
let e: EngineUnderSim | undefined;

afterEach(async () => {
  await e?.close();
  e = undefined;
});

interface QuoteBody {
  outputAmount: string;
  pool: string;
  slot: string;
  source: string;
  stateAgeMs: number;
}

async function quote(engine: EngineUnderSim): Promise<{ status: number; body: QuoteBody & { error?: { code: string; message: string } } }> {
  const res = await fetch(`${engine.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000`);
  return { status: res.status, body: (await res.json()) as QuoteBody & { error?: { code: string; message: string } } };
}

describe.skipIf(!built)('engine with the RPC reads on their own thread (RPC_READ_THREAD)', () => {
  it('fills the cache at start and publishes the state read after a swap', async () => {
    e = await startEngineUnderSim({ engine: { 'rpc-read-thread': 'true' } });
    const engine = e;
    const first = await quote(engine);
    expect(first.status).toBe(200);
    expect(first.body.source).toBe('cache');
    await eventually(() => (engine.engine.scanner.connected ? true : undefined), 10_000, 'connected');
    const chain = engine.sim.chain;
    const info = chain.poolInfo(first.body.pool)!;
    const signature = chain.sendTransaction(swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === USDC_MINT, exactIn: true, amount: 5_000_000_000n, threshold: 0n }));
    chain.advanceSlot(1);
    const event = await eventually(() => engine.events.find((x) => x.transaction.signature === signature), 10_000, 'event of the swap');
    const after = await eventually(async () => {
      const q = await quote(engine);
      return q.body.slot === event.state.slot ? q : undefined;
    }, 10_000, 'quote on the new state');
    expect(BigInt(after.body.outputAmount)).toBeGreaterThan(BigInt(first.body.outputAmount));
  });
});

describe.skipIf(!built)('engine failure paths', () => {
  it('drops and counts transactions past queueSizeLimit instead of buffering them', async () => {
    e = await startEngineUnderSim({ engine: { 'queue-size-limit': '1', 'max-concurrent-processing': '1', 'batch-size': '1' } });
    const engine = e;
    await eventually(() => (engine.engine.scanner.connected ? true : undefined), 10_000, 'connected');
    // Slow reads keep the one batch in flight while the slot's matches arrive.
    engine.sim.faults.setRpcFault('getMultipleAccounts', { latencyMs: 300 });
    const chain = engine.sim.chain;
    const pools = chain.pools().slice(0, 6);
    for (const [i, p] of pools.entries()) {
      const info = chain.poolInfo(p.address)!;
      chain.sendTransaction(swapTransaction(chain, trader(chain, i % 4), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
    }
    chain.advanceSlot(1);
    await eventually(() => (engine.engine.scanner.stats().droppedTransactions > 0 ? true : undefined), 10_000, 'drops');
    const stats = engine.engine.scanner.stats();
    expect(stats.matches).toBeGreaterThanOrEqual(6);
    // Every match was either taken (one in flight, one waiting at most) or dropped and counted.
    expect(stats.droppedTransactions).toBe(stats.queue.dropped);
    expect(stats.queue.accepted + stats.queue.dropped).toBeGreaterThanOrEqual(stats.matches);
    expect(stats.queue.queued).toBeLessThanOrEqual(1);
    const text = await (await fetch(engine.endpoints.scannerMetrics)).text();
    expect(text).toMatch(/^dropped_transactions_total [1-9]/m);
    engine.sim.faults.clear();
  });

  it('does not serve stale entries: the quote falls back to RPC, and equals the cache quote of the same state', async () => {
    e = await startEngineUnderSim({ engine: { 'cache-staleness-threshold': '300ms', 'refresh-seconds': '3600' } });
    const engine = e;
    const cached = await quote(engine);
    expect(cached.status).toBe(200);
    expect(cached.body.source).toBe('cache');
    await new Promise((r) => setTimeout(r, 400));
    const fallback = await quote(engine);
    expect(fallback.status).toBe(200);
    expect(fallback.body.source).toBe('rpc');
    // Nothing moved on chain: same pool, same state, same integer math.
    expect(fallback.body.pool).toBe(cached.body.pool);
    expect(fallback.body.outputAmount).toBe(cached.body.outputAmount);
    expect(fallback.body.slot).toBe(cached.body.slot);
    const health = (await (await fetch(`${engine.endpoints.quote}/health`)).json()) as { cache: { stale_pools: number } };
    expect(health.cache.stale_pools).toBeGreaterThan(0);
  });

  it('returns the RPC error to the caller when the fallback fails (503), and 504 past the fallback deadline', async () => {
    e = await startEngineUnderSim({ engine: { 'cache-staleness-threshold': '200ms', 'refresh-seconds': '3600', 'rpc-fallback-deadline': '150ms' } });
    const engine = e;
    expect((await quote(engine)).body.source).toBe('cache');
    await new Promise((r) => setTimeout(r, 300));
    engine.sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    const failed = await quote(engine);
    expect(failed.status).toBe(503);
    expect(failed.body.error?.code).toBe('TP_ERR_RPC_FALLBACK_FAILED');
    engine.sim.faults.clear();
    engine.sim.faults.setRpcFault('getMultipleAccounts', { latencyMs: 1_000 });
    // The fallback's global bound backs off after the failed read (one probe per pause, engine/quote
    // fallback-limiter.ts): until the pause ends the answer is a 503 saying so; then the probe runs
    // into the slow RPC and the deadline.
    let slow = await quote(engine);
    for (const until = Date.now() + 10_000; slow.status === 503 && /backing off/.test(slow.body.error?.message ?? ''); ) {
      if (Date.now() > until) throw new Error('the RPC fallback never stopped backing off');
      await new Promise((r) => setTimeout(r, 50));
      slow = await quote(engine);
    }
    expect(slow.status).toBe(504);
    expect(slow.body.error?.code).toBe('TP_ERR_DEADLINE');
    engine.sim.faults.clear();
    const text = await (await fetch(engine.endpoints.quoteMetrics)).text();
    expect(text).toMatch(/^quote_service_rpc_fallback_errors_total [1-9]/m);
  });
});
