import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SwapMode, quoteSwap } from '../dex/index.js';
import { hasPromtool, runPromtool } from '../obs/promtool.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { poolLookupTables, swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * The one-process engine against the simulator, as `npm start` runs it: real gRPC stream, real
 * JSON-RPC, real HTTP, parse workers from dist/. The chain is manual, so every transaction the
 * scanner sees is one the test sent.
 */

const built = existsSync(PARSE_WORKER);
const schema = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../schemas/pool-state-update-event.schema.json'), 'utf8')) as object;
const validateEvent = new Ajv({ allErrors: true, strict: true }).compile(schema);
const ONE_SOL = 1_000_000_000n;

interface QuoteBody {
  outputAmount: string;
  pool: string;
  dex: string;
  slot: string;
  contextSlot: string;
  stateAgeMs: number;
  source: string;
}

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

function quoteUrl(e: EngineUnderSim, amount = ONE_SOL): string {
  return `${e.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}`;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/** Sends a swap of `amount` on `pool` (USDC in when `usdcIn`) and closes a slot around it. */
function swapOn(e: EngineUnderSim, pool: string, amount: bigint, usdcIn: boolean): string {
  const chain = e.sim.chain;
  const info = chain.poolInfo(pool)!;
  const aToB = usdcIn ? info.tokenA.mint === USDC_MINT : info.tokenA.mint === WSOL_MINT;
  const tx = swapTransaction(chain, trader(chain), info, { aToB, exactIn: true, amount, threshold: 0n });
  const signature = chain.sendTransaction(tx);
  chain.advanceSlot(1);
  return signature;
}

describe.skipIf(!built)('the one-process engine under the simulator', () => {
  let e: EngineUnderSim;

  beforeAll(async () => {
    e = await startEngineUnderSim();
    await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'stream connected');
  });

  afterAll(async () => {
    await e?.close();
  });

  it('serves a cache quote at start equal to the chain\'s own math, with its freshness', async () => {
    const { status, body } = await getJson<QuoteBody>(quoteUrl(e));
    expect(status).toBe(200);
    expect(body.source).toBe('cache');
    const view = e.sim.chain.pool(body.pool)!;
    const expected = quoteSwap(view.pool, { aToB: view.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount: ONE_SOL }, view.ctx);
    expect(expected.ok).toBe(true);
    if (expected.ok) expect(body.outputAmount).toBe(expected.amountOut.toString());
    expect(BigInt(body.slot)).toBeLessThanOrEqual(BigInt(body.contextSlot));
    expect(body.stateAgeMs).toBeGreaterThanOrEqual(0);
  });

  it('moves the served quote after a swap in the simulator, from the state the scanner read', async () => {
    const before = (await getJson<QuoteBody>(quoteUrl(e))).body;
    const eventsBefore = e.events.length;
    // USDC in on the best pool: SOL gets dearer there, so that pool stays the best for SOL → USDC.
    const signature = swapOn(e, before.pool, 5_000_000_000n, true);
    const event = await eventually(() => e.events.slice(eventsBefore).find((ev) => ev.transaction.signature === signature), 10_000, 'event of the swap');
    expect(event.pool.address).toBe(before.pool);
    const after = await eventually(async () => {
      const q = (await getJson<QuoteBody>(quoteUrl(e))).body;
      return q.slot === event.state.slot ? q : undefined;
    }, 10_000, 'quote on the new state');
    expect(after.source).toBe('cache');
    expect(after.pool).toBe(before.pool);
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
    const view = e.sim.chain.pool(after.pool)!;
    const expected = quoteSwap(view.pool, { aToB: view.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount: ONE_SOL }, view.ctx);
    if (!expected.ok) throw new Error(`the chain refuses the quote: ${expected.reason}`);
    expect(after.outputAmount).toBe(expected.amountOut.toString());
  });

  it('publishes one PoolStateUpdateEvent per transaction and pool, of the spec\'s JSON shape', async () => {
    const start = e.events.length;
    const pools = e.sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).slice(0, 3);
    const chain = e.sim.chain;
    const sent = pools.map((p) => {
      const info = chain.poolInfo(p.address)!;
      return { pool: p.address, signature: chain.sendTransaction(swapTransaction(chain, trader(chain, 1), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n })) };
    });
    chain.advanceSlot(1);
    for (const s of sent) {
      const ev = await eventually(() => e.events.slice(start).find((x) => x.transaction.signature === s.signature), 10_000, `event of ${s.pool}`);
      expect(ev.pool.address).toBe(s.pool);
    }
    for (const ev of e.events) {
      expect(validateEvent(JSON.parse(JSON.stringify(ev))), JSON.stringify(validateEvent.errors)).toBe(true);
      expect(ev.transaction.confirmed).toBe(false);
      expect(ev.source).toBe('blockstream');
    }
    // Reserves are the chain's own: AMM fields, vault balances otherwise.
    const last = e.events.at(-1)!;
    const view = chain.pool(last.pool.address)!;
    const info = chain.poolInfo(last.pool.address)!;
    const balance = (a: string): string => chain.getTokenBalance(a)!.amount.toString();
    if (view.dex === 'dexa_amm' && 'reserveA' in view.pool) expect(last.state.reserveA).toBe(view.pool.reserveA.toString());
    else expect([last.state.reserveA, last.state.reserveB]).toEqual([balance(info.vaultA), balance(info.vaultB)]);
  });

  it('sees swaps that reach the pool only through address lookup tables', async () => {
    const chain = e.sim.chain;
    const pools = chain.poolsForPair(WSOL_MINT, USDC_MINT).slice(0, 2);
    for (const view of pools) {
      const start = e.events.length;
      const info = chain.poolInfo(view.address)!;
      const tx = swapTransaction(chain, trader(chain, 2), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n, lookupTables: poolLookupTables(chain, view.address) });
      const signature = chain.sendTransaction(tx);
      chain.advanceSlot(1);
      const ev = await eventually(() => e.events.slice(start).find((x) => x.transaction.signature === signature), 10_000, 'event of the v0 swap');
      expect(ev.pool.address).toBe(view.address);
    }
    const stats = e.engine.scanner.stats();
    // The first table was fetched on the main thread, the second transaction matched in the worker.
    expect(stats.lookupMatches).toBeGreaterThanOrEqual(1);
    expect(stats.parse.lookupMatches + stats.lookupMatches).toBeGreaterThanOrEqual(2);
  });

  it('counts garbage from the stream as parsing errors and keeps going', async () => {
    const before = e.engine.scanner.stats().parseErrors;
    e.sim.faults.stream.garbageRate = 1;
    try {
      e.sim.chain.advanceSlot(1);
      await eventually(() => (e.engine.scanner.stats().parseErrors > before ? true : undefined), 10_000, 'parse errors counted');
    } finally {
      e.sim.faults.stream.garbageRate = 0;
    }
    expect(await metric(e.endpoints.scannerMetrics, 'parsing_errors_total')).toBeGreaterThan(before);
    const pool = e.sim.chain.poolsForPair(WSOL_MINT, USDC_MINT)[0]!.address;
    const start = e.events.length;
    const signature = swapOn(e, pool, 2_000_000n, true);
    await eventually(() => e.events.slice(start).find((x) => x.transaction.signature === signature), 10_000, 'event after the garbage');
  });

  it('reconnects after the stream drops and sees the next swaps', async () => {
    const s0 = e.engine.scanner.stats().stream;
    e.sim.faults.trigger('stream.disconnect');
    await eventually(() => (e.engine.scanner.stats().stream.connections > s0.connections ? true : undefined), 15_000, 'reconnection');
    expect(e.engine.scanner.stats().stream.connectionErrors).toBeGreaterThan(s0.connectionErrors);
    expect(await metric(e.endpoints.scannerMetrics, 'connection_errors_total')).toBeGreaterThan(0);
    await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'connected again');
    expect(await metric(e.endpoints.scannerMetrics, 'blockstream_scanner_connected')).toBe(1);
    const pool = e.sim.chain.poolsForPair(WSOL_MINT, USDC_MINT)[1]!.address;
    const start = e.events.length;
    const signature = swapOn(e, pool, 2_000_000n, true);
    await eventually(() => e.events.slice(start).find((x) => x.transaction.signature === signature), 10_000, 'event after reconnecting');
  });

  it('replaces the monitored pools through POST /config/pools without a restart', async () => {
    const chain = e.sim.chain;
    const all = e.engine.scanner.pools;
    const [watched, ignored] = chain.poolsForPair(WSOL_MINT, USDC_MINT).map((p) => p.address);
    const post = (body: string): Promise<Response> => fetch(`${e.endpoints.scanner}/config/pools`, { method: 'POST', body });

    const bad = await post(JSON.stringify({ pools: ['not-a-key'] }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('pools[0]');
    expect(e.engine.scanner.pools).toEqual(all);

    const ok = await post(JSON.stringify({ pools: [watched] }));
    expect(ok.status).toBe(200);
    const config = (await getJson<Record<string, unknown>>(`${e.endpoints.scanner}/config`)).body;
    expect(config['pools.monitored']).toEqual([watched]);
    try {
      const start = e.events.length;
      const sigIgnored = swapOn(e, ignored!, 2_000_000n, true);
      const sigWatched = swapOn(e, watched!, 2_000_000n, true);
      await eventually(() => e.events.slice(start).find((x) => x.transaction.signature === sigWatched), 10_000, 'event of the watched pool');
      expect(e.events.slice(start).some((x) => x.transaction.signature === sigIgnored)).toBe(false);
    } finally {
      await post(JSON.stringify({ pools: all }));
    }
  });

  it('answers /health and /stats on the scanner port', async () => {
    const health = await getJson<{ status: string; connected: boolean; monitoredPools: number }>(`${e.endpoints.scanner}/health`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', connected: true, monitoredPools: e.sim.chain.pools().length });
    const stats = (await getJson<{ eventsPublished: number; transactionsProcessed: number }>(`${e.endpoints.scanner}/stats`)).body;
    expect(stats.eventsPublished).toBe(e.events.length);
    expect(stats.transactionsProcessed).toBeGreaterThan(0);
    expect((await fetch(`${e.endpoints.scanner}/nope`)).status).toBe(404);
  });

  it.skipIf(!hasPromtool())('passes promtool check metrics on both metrics ports (the spec\'s _ms names are the only findings)', async () => {
    const specNames = ['shredstream_latency_ms', 'processing_latency_ms', 'end_to_end_latency_ms'];
    for (const url of [e.endpoints.quoteMetrics, e.endpoints.scannerMetrics]) {
      const text = await (await fetch(url)).text();
      const r = runPromtool(['check', 'metrics'], text);
      const findings = `${r.stdout}${r.stderr}`.trim().split('\n').filter((l) => l !== '');
      expect(r.status === 0 || r.status === 3, `${url}: ${findings.join('; ')}`).toBe(true);
      for (const f of findings) expect(specNames.some((n) => f === `${n} metric names should not contain abbreviated units`), f).toBe(true);
    }
    const scannerText = await (await fetch(e.endpoints.scannerMetrics)).text();
    for (const name of ['blockstream_scanner_events_published_total', 'end_to_end_latency_ms_bucket', 'processing_queue_size', 'dropped_transactions_total']) {
      expect(scannerText).toContain(name);
    }
    expect(await metric(e.endpoints.quoteMetrics, 'quote_service_pool_updates_received_total')).toBeGreaterThan(0);
  });
});
