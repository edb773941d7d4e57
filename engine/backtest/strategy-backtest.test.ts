import { PassThrough, Readable } from 'node:stream';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PLATFORM_STREAMS, ensurePlatformStreams } from '../bus/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, LOCAL_NATS_URL, uniqueName, waitFor } from '../bus/testing/local-nats.js';
import type { CliIo } from '../cli/command.js';
import { runCli } from '../cli/main.js';
import { DEFAULT_ARRAYS_EACH_SIDE, createDecoderRegistry } from '../dex/index.js';
import { createLogger } from '../obs/index.js';
import { EventStateWriter, MarketDataSink, MarketPublisher } from '../market/index.js';
import { Strategy } from '../messages/index.js';
import { priceOf } from '../planner/index.js';
import { RpcPoolLoader, type LoadedPool } from '../pools/index.js';
import { loadConfig } from '../config/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { PriceGapError, createSimulator, openPriceGap, simSchema, type SimPoolView, type Simulator } from '../sim/index.js';
import { TrendModel } from '../signals/index.js';
import { paperBacktestFill } from './backtest-fill.js';
import { reportJson, reportTable, type BacktestReport } from './backtest-report.js';
import { Backtest } from './backtest-runner.js';
import { backtestStrategy } from './backtest-strategy.js';
import { readMarketEventRange } from './market-event-range.js';

/**
 * Recorded event sequences on the real JetStream, published as the market scanner publishes them
 * (MarketDataSink with the event state), from a manual simulator whose prices the test moves:
 *
 * - [g0, g1]: every pool's state, then a price gap planted on one pool, then LASTING more events
 *   re-announcing the gapped pool's state (the gap lasts: nothing on the chain closes it);
 * - [t0, t1]: an AMM pool's price moved up and down in a triangle wave, one event a minute of the
 *   events' clock, for the grid, DCA and signal strategies.
 */

const logger = createLogger({ name: 'strategy-backtest-test', level: process.env.TEST_LOG ?? 'silent' });
const prefix = `${uniqueName('BTS')}_`;
const LASTING = 3;
const WAVE = [-1, -1, -1, -1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1];
const WAVE_EVENTS = 60;
const STEP_BPS = 20;
let sim: Simulator;
let rpc: RpcClient;
let nc: NatsConnection;
let loader: RpcPoolLoader;
let sink: MarketDataSink;
let writer: EventStateWriter;
let publisher: MarketPublisher;
let clock = 1_800_000_000_000;
let g0: number;
let g1: number;
let t0: number;
let t1: number;
let gapped: SimPoolView;
/** Ids of the gapped pool's events from the gap on (the gap's, then the ones re-announcing it). */
const gapEvents: string[] = [];
let wavePool: SimPoolView;
let p0 = 0;

function plain(): SimPoolView[] {
  return sim.chain.pools().filter((p) => p.transferFees === undefined);
}

async function load(address: string): Promise<LoadedPool> {
  const [r] = await loader.load([address]);
  if (!r!.ok) throw new Error(r!.error.message);
  return r!.value;
}

/**
 * Publishes the current state of `pool` as the scanner would, `stepMs` after the last event (the
 * events' clock: the arbitrage planner's pools go stale after 60 s of it, DCA counts minutes).
 */
let stepMs = 200;
async function announce(pool: string): Promise<bigint> {
  clock += stepMs;
  const loaded = await load(pool);
  await sink.observe(loaded, '');
  return loaded.slot;
}

/** Every event published so far was stored by the stream (observe resolves once its publishes settled). */
async function recorded(): Promise<void> {
  await publisher.drain();
  expect(publisher.stats.dropped + publisher.stats.publishErrors).toBe(0);
}

async function publish(pool: string): Promise<bigint> {
  return announce(pool);
}

function plantGap(bps: number): SimPoolView {
  const pools = plain();
  for (const p of pools) {
    for (const o of pools.filter((x) => x.address !== p.address)) {
      for (const direction of ['up', 'down'] as const) {
        try {
          openPriceGap(sim.chain, { pool: p.address, reference: o.address, gapBps: bps, direction });
        } catch (err) {
          if (err instanceof PriceGapError) continue;
          throw err;
        }
        sim.chain.advanceSlot();
        return p;
      }
    }
  }
  throw new Error(`no pool where a gap of ${bps} bps can be opened`);
}

beforeAll(async () => {
  // No transaction flow: the pools move only where the test moves them.
  const simConfig = loadConfig(simSchema, { env: {}, flags: { seed: '61', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' } }).values;
  sim = createSimulator(simConfig, { manual: true, logger });
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry(), keepAccounts: true });
  nc = await connectLocal();
  await ensurePlatformStreams(await nc.jetstreamManager(), { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
  publisher = new MarketPublisher({ js: () => nc.jetstream(), bufferSize: 1_000, dedupWindowMs: 60_000, prefix, now: () => clock });
  writer = new EventStateWriter({ arraysEachSide: DEFAULT_ARRAYS_EACH_SIDE, snapshotIntervalMs: 3_600_000 });
  sink = new MarketDataSink(publisher, undefined, () => clock, writer);

  // [g0, g1]: every pool, the gap, the gap lasting.
  g0 = Date.now();
  for (const p of sim.chain.pools()) await publish(p.address);
  gapped = plantGap(80);
  gapEvents.push(`${gapped.address}:${await publish(gapped.address)}:`);
  for (let i = 0; i < LASTING; i++) {
    sim.chain.advanceSlot();
    gapEvents.push(`${gapped.address}:${await publish(gapped.address)}:`);
  }
  await recorded();
  g1 = Date.now();
  await waitFor(() => Date.now() > g1 + 2, 1_000, 'the clock to move past g1');

  // [t0, t1]: full states of every pool again, then the wave on a whirlpool.
  t0 = Date.now();
  for (const p of sim.chain.pools()) writer.forget(p.address);
  for (const p of sim.chain.pools()) await publish(p.address);
  wavePool = plain().find((p) => p.dex === 'dexa_amm' && p.address !== gapped.address)!;
  p0 = priceOf(await load(wavePool.address), wavePool.pool.tokenA)!;
  stepMs = 60_000;
  for (let i = 0; i < WAVE_EVENTS; i++) {
    openPriceGap(sim.chain, { pool: wavePool.address, gapBps: STEP_BPS, direction: WAVE[i % WAVE.length]! > 0 ? 'up' : 'down' });
    sim.chain.advanceSlot();
    await publish(wavePool.address);
  }
  await recorded();
  t1 = Date.now();
}, 120_000);

afterAll(async () => {
  await deleteStreams(nc, PLATFORM_STREAMS.map((s) => `${prefix}${s.name}`));
  await nc?.close();
  await rpc?.close();
  await sim?.close();
});

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += String(c)));
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: out, stderr: err, stdin: Readable.from([]), env: {} };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** The trend model made to speak early on a short recording (the same settings the CLI test passes). */
const TREND_OPTIONS = { horizonMs: 240_000, warmupSamples: 5, hitWindow: 5, minHitRate: 0, minConfidence: 0.5 };

function gridParams(): Record<string, unknown> {
  return { pool: wavePool.address, token: wavePool.pool.tokenA, lowerPrice: p0 * 0.99, upperPrice: p0 * 1.01, levels: 5, amountPerLevel: '1000000', orderTtlMs: 120_000 };
}
function dcaParams(): Record<string, unknown> {
  return { pool: wavePool.address, token: wavePool.pool.tokenA, quoteCurrency: wavePool.pool.tokenB, intervalMinutes: 3, amountPerOrder: '1000000', maxPosition: '1000000000000', takeProfit: p0 * 1.006 };
}
function signalParams(): Record<string, unknown> {
  return { pool: wavePool.address, token: wavePool.pool.tokenA, quoteCurrency: wavePool.pool.tokenB, amountPerSignal: '1000000', maxPosition: '1000000000000', minConfidence: 0.5, cooldownMs: 0 };
}

async function run(type: Strategy, params: Record<string, unknown>, from: number, to: number, movePools = true): Promise<BacktestReport> {
  const strategy = await backtestStrategy(type, `bt-${type}`, params, { signalModel: new TrendModel(TREND_OPTIONS) });
  try {
    const bt = new Backtest({
      range: { from, to, warmupMs: 0 },
      strategies: strategy.strategies,
      fill: paperBacktestFill(),
      movePools,
      ...(strategy.signals === undefined ? {} : { signals: strategy.signals }),
    });
    return await bt.run(readMarketEventRange({ nc, from, to, prefix }));
  } finally {
    await strategy.close();
  }
}

interface PositionJson {
  token: string;
  quoteMint: string;
  trades: number;
  buys: number;
  sells: number;
  baseHeld: string;
  quoteSpent: string;
  quoteReceived: string;
  costBasis: string;
  lastPrice: number | null;
  realizedPnl: string;
  unrealizedPnl: string;
  totalPnl: string;
  feesPaid: string;
}

function positionsOf(report: BacktestReport): PositionJson[] {
  const json = report.toJson() as { strategies: { positions?: PositionJson[] }[] };
  return json.strategies[0]!.positions!;
}

/** The position recomputed from the report's trades: sums, and realized P&L by average cost. */
function checkPosition(report: BacktestReport, p: PositionJson): void {
  const trades = report.trades.filter((t) => t.side !== undefined);
  expect(p.trades).toBe(trades.length);
  expect(p.buys).toBe(trades.filter((t) => t.side === 'buy').length);
  expect(p.sells).toBe(trades.filter((t) => t.side === 'sell').length);
  let held = 0n;
  let spent = 0n;
  let received = 0n;
  for (const t of trades) {
    if (t.side === 'buy') {
      expect(t.inputMint).toBe(p.quoteMint);
      held += t.output;
      spent += t.input;
    } else {
      expect(t.inputMint).toBe(p.token);
      held -= t.input;
      received += t.output;
    }
  }
  expect(p.baseHeld).toBe(held.toString());
  expect(p.quoteSpent).toBe(spent.toString());
  expect(p.quoteReceived).toBe(received.toString());
  expect(BigInt(p.feesPaid)).toBe(trades.reduce((a, t) => a + t.fees, 0n));
  // Quote in minus quote out = realized + what is still held at cost.
  expect(received - spent).toBe(BigInt(p.realizedPnl) - BigInt(p.costBasis));
  // Unrealized at the last price the replay held for the pool (after the last event and the fills' moves).
  expect(p.lastPrice).not.toBeNull();
  expect(BigInt(p.unrealizedPnl)).toBe(BigInt(Math.round(Number(p.baseHeld) * p.lastPrice!)) - BigInt(p.costBasis));
  expect(BigInt(p.totalPnl)).toBe(BigInt(p.realizedPnl) + BigInt(p.unrealizedPnl));
}

describe('backtests of the order strategies over a recorded price wave', () => {
  it('grid: buys down the levels and sells up them, with a position and its P&L', async () => {
    const report = await run(Strategy.Grid, gridParams(), t0, t1);
    expect(report.events.skipped).toEqual({});
    const sides = report.trades.map((t) => t.side);
    expect(sides).toContain('buy');
    expect(sides).toContain('sell');
    const [p] = positionsOf(report);
    expect(p).toMatchObject({ token: wavePool.pool.tokenA, quoteMint: wavePool.pool.tokenB });
    checkPosition(report, p!);
    // Sells against bought levels closed part of the position: a realized P&L.
    expect(BigInt(p!.realizedPnl)).not.toBe(0n);
    expect(reportTable(report)).toMatch(/realized P&L/);
  });

  it('dca: buys every interval and takes profit, with a position and its P&L', async () => {
    const report = await run(Strategy.Dca, dcaParams(), t0, t1);
    const buys = report.trades.filter((t) => t.side === 'buy');
    const sells = report.trades.filter((t) => t.side === 'sell');
    // 60 events a minute apart, a buy every 3 minutes (none skipped: no max price, a large max position).
    expect(buys.length).toBeGreaterThanOrEqual(WAVE_EVENTS / 3 - 1);
    expect(sells.length).toBeGreaterThan(0); // the take profit at +0.6%
    for (const b of buys) expect(b.input).toBe(1_000_000n);
    const [p] = positionsOf(report);
    checkPosition(report, p!);
    expect(BigInt(p!.realizedPnl)).not.toBe(0n); // the take profit closed the position bought so far
  });

  it('signal: the trend model replayed over the same events drives buys and sells', async () => {
    const report = await run(Strategy.Signal, signalParams(), t0, t1);
    expect(report.trades.length).toBeGreaterThan(0);
    const [p] = positionsOf(report);
    checkPosition(report, p!);
    expect(report.trades.some((t) => t.side === 'buy')).toBe(true);
  });

  it('gives byte-identical JSON for the same range, run twice, for each strategy', async () => {
    for (const [type, params] of [[Strategy.Grid, gridParams()], [Strategy.Dca, dcaParams()], [Strategy.Signal, signalParams()]] as const) {
      const a = reportJson(await run(type, params, t0, t1));
      expect(a).toBe(reportJson(await run(type, params, t0, t1)));
      expect(a).toContain('"positions"');
    }
  });
});

describe('paper fills move the pools they traded', () => {
  /** Trades per event of the gapped pool from the gap on. */
  const atGap = (r: BacktestReport): number[] => gapEvents.map((id) => r.trades.filter((t) => t.sourceEvent.startsWith(id)).length);

  it('trades a lasting gap once; without moving the pools, at every event that shows it', async () => {
    const params = { baseMints: [gapped.pool.tokenA], maxLegs: 2 };
    const still = await run(Strategy.Arbitrage, params, g0, g1, false);
    const moved = await run(Strategy.Arbitrage, params, g0, g1, true);
    expect(still.events.skipped).toEqual({});
    expect(new Set(gapEvents).size).toBe(LASTING + 1);
    // Without market impact every event showing the gap trades it; with it, the gap's event alone.
    expect(atGap(still).every((n) => n > 0)).toBe(true);
    expect(atGap(moved)).toEqual([1, ...Array<number>(LASTING).fill(0)]);
    // The fill at the gap's event took the gap back to the other pool's price: the next events see no profitable cycle.
    expect(moved.trades.find((t) => t.sourceEvent.startsWith(gapEvents[0]!))!.route).toContain(gapped.address);
    expect(reportJson(moved)).toBe(reportJson(await run(Strategy.Arbitrage, params, g0, g1, true)));
  });
});

describe('tidepool backtest --strategy grid|dca|signal', () => {
  it('reports positions from the command line, as the library does, and names a bad field', async () => {
    const common = ['--bus-servers', LOCAL_NATS_URL, '--subject-prefix', prefix, '--warmup', '0', '--from', String(t0), '--to', String(t1)];
    const grid = await cli(['backtest', ...common, '--strategy', 'grid', '--strategy-id', 'bt-grid', '--params', JSON.stringify(gridParams()), '--json']);
    expect(grid.stderr).toBe('');
    expect(grid.code).toBe(0);
    expect(grid.stdout).toBe(reportJson(await run(Strategy.Grid, gridParams(), t0, t1)));
    const signal = await cli(['backtest', ...common, '--strategy', 'signal', '--strategy-id', 'bt-signal', '--params', JSON.stringify(signalParams()), '--signal-options', JSON.stringify(TREND_OPTIONS)]);
    expect(signal.code).toBe(0);
    expect(signal.stdout).toMatch(/^strategy\s+strategy id\s+token\s+quote mint\s+trades\s+buys\s+sells/);

    const badGrid = await cli(['backtest', ...common, '--strategy', 'grid', '--params', JSON.stringify({ ...gridParams(), upperPrice: 'high' })]);
    expect(badGrid.code).toBe(2);
    expect(badGrid.stderr).toMatch(/--params: strategy parameter upperPrice \(grid\) must be a number/);
    const badDca = await cli(['backtest', ...common, '--strategy', 'dca', '--params', JSON.stringify({ ...dcaParams(), amountPerOrder: 5 })]);
    expect(badDca.code).toBe(2);
    expect(badDca.stderr).toMatch(/amountPerOrder \(dca\) must be a u64 decimal string/);
    const unknownKey = await cli(['backtest', ...common, '--strategy', 'signal', '--params', JSON.stringify({ ...signalParams(), leverage: 10 })]);
    expect(unknownKey.code).toBe(2);
    expect(unknownKey.stderr).toMatch(/leverage/);
  });
});
