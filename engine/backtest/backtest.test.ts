import { PassThrough, Readable } from 'node:stream';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PLATFORM_STREAMS } from '../bus/index.js';
import { createMarketScannerApp, marketScannerSchema } from '../app/market-scanner-app.js';
import { PARSE_WORKER, RPC_WORKER, eventually } from '../app/testing.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, LOCAL_NATS_URL, uniqueName, waitFor } from '../bus/testing/local-nats.js';
import type { CliIo } from '../cli/command.js';
import { runCli } from '../cli/main.js';
import { loadConfig } from '../config/index.js';
import { createDecoderRegistry, quoteSwap } from '../dex/index.js';
import { createLogger } from '../obs/index.js';
import { RpcPoolLoader, type LoadedPool } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { PriceGapError, createSimulator, openPriceGap, simSchema, type SimEndpoints, type SimPoolView, type Simulator } from '../sim/index.js';
import { MarketDataSink, MarketPublisher } from '../market/index.js';
import { ArbitrageStrategy } from '../planner/index.js';
import { flashLoanFeeOf } from '../messages/index.js';
import { paperBacktestFill } from './backtest-fill.js';
import { reportJson, reportTable, type BacktestReport } from './backtest-report.js';
import { Backtest } from './backtest-runner.js';
import { readMarketEventRange } from './market-event-range.js';

/**
 * `tidepool market-scanner` (rpc-polling, event state on by default) publishes the pools of a
 * simulator with no transaction flow, then the state of a pool where a price gap was planted, on
 * the real JetStream; then backtests over ranges of that stream.
 */

const logger = createLogger({ name: 'backtest-test', level: process.env.TEST_LOG ?? 'silent' });
const prefix = `${uniqueName('BT')}_`;
let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: RpcClient;
let nc: NatsConnection;
/** The gapped pool and the cycle's base mint. */
let gapped: SimPoolView;
let base: string;
/** Range bounds (Unix ms): [t0, t1] the scanner's events, the gap's at or after gapAt; [t2, t3] a publisher without state. */
let t0: number;
let gapAt: number;
let t1: number;
let t2: number;
let t3: number;
/** Every pool as read over RPC (another loader) once the gap's event was published. */
const statesAtGap = new Map<string, LoadedPool>();

async function load(address: string): Promise<LoadedPool> {
  const [r] = await new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() }).load([address]);
  if (!r!.ok) throw new Error(r!.error.message);
  return r!.value;
}

function plain(): SimPoolView[] {
  return sim.chain.pools().filter((p) => p.transferFees === undefined);
}

/** Opens a gap of `bps` on a pool against another pool of its pair, on the first pair where the market mover can. */
function plantGap(bps: number): SimPoolView {
  const pools = plain();
  for (const p of pools) {
    const others = pools.filter((o) => o.address !== p.address && [o.pool.tokenA, o.pool.tokenB].includes(p.pool.tokenA) && [o.pool.tokenA, o.pool.tokenB].includes(p.pool.tokenB));
    for (const o of others) {
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

/** pool_update messages the stream holds. */
async function poolUpdates(): Promise<number> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(`${prefix}MARKET_EVENTS`, { subjects_filter: `${prefix}market.events.*.pool_update` }).catch(() => undefined);
  return Object.values(info?.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

const params = (): Record<string, unknown> => ({ baseMints: [base], maxLegs: 2 });

async function backtest(from: number, to: number, warmupMs = 0, movePools = true): Promise<BacktestReport> {
  const bt = new Backtest({
    range: { from, to, warmupMs },
    movePools,
    strategies: (pools, now) => [new ArbitrageStrategy('bt-arb', params(), pools, now)],
    fill: paperBacktestFill(),
  });
  return bt.run(readMarketEventRange({ nc, from: from - warmupMs, to, prefix }));
}

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

beforeAll(async () => {
  const simConfig = loadConfig(simSchema, { env: {}, flags: { seed: '51', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' } }).values;
  sim = createSimulator(simConfig, { manual: true, logger });
  endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  nc = await connectLocal();
  const accounts = sim.chain.pools().map((p) => p.address);
  const settings = loadConfig(marketScannerSchema, {
    env: {},
    flags: { mode: 'rpc-polling', 'rpc-endpoints': endpoints.rpc, 'health-port': '0', 'metrics-port': '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE), 'poll-interval': '50', 'bus-servers': LOCAL_NATS_URL, accounts: accounts.join(',') },
  });
  const app = await createMarketScannerApp(settings, { logger, accounts, parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
  try {
    t0 = Date.now();
    await app.start();
    await eventually(async () => ((await poolUpdates()) >= accounts.length ? true : undefined), 20_000, 'a pool_update of every pool');
    gapped = plantGap(80);
    base = gapped.pool.tokenA;
    gapAt = Date.now();
    // No transaction flow: the polling publishes the gapped pool alone.
    await eventually(async () => ((await poolUpdates()) > accounts.length ? true : undefined), 20_000, 'the gapped pool\'s pool_update');
  } finally {
    await app.close();
  }
  t1 = Date.now();
  expect(app.publisher.stats.publishErrors + app.publisher.stats.dropped).toBe(0);
  for (const address of accounts) statesAtGap.set(address, await load(address));

  // An older publisher: pool_updates without state.
  await waitFor(() => Date.now() > t1 + 2, 1_000, 'the clock to move past t1');
  t2 = Date.now();
  const publisher = new MarketPublisher({ js: () => nc.jetstream(), bufferSize: 100, dedupWindowMs: 60_000, prefix });
  await new MarketDataSink(publisher).observe(await load(plain()[0]!.address), 'older');
  await publisher.drain();
  t3 = Date.now();
}, 90_000);

afterAll(async () => {
  await deleteStreams(nc, PLATFORM_STREAMS.map((s) => `${prefix}${s.name}`));
  await nc?.close();
  await rpc?.close();
  await sim?.close();
});

describe('tidepool backtest over the market events the scanner published', () => {
  it('finds the planted arbitrage and reports its paper trade with the profit of the exact math by hand', async () => {
    const report = await backtest(t0, t1);
    expect(report.events.skipped).toEqual({});
    expect(report.events.replayed).toBe(report.events.read);
    expect(report.events.read).toBeGreaterThan(sim.chain.pools().length);
    // The events: every pool's first state, then the gapped pool's.
    expect(report.events.read).toBe(sim.chain.pools().length + 1);
    const trade = report.trades.find((t) => t.sourceEvent.startsWith(`${gapped.address}:`));
    expect(trade).toBeDefined();
    expect(trade!.route).toContain(gapped.address);
    expect(trade!.inputMint).toBe(base);
    expect(trade!.profitMint).toBe(base);
    // The route quoted by hand, hop by hop, on the states read over RPC right after the gap.
    let amount = trade!.input;
    let mint = base;
    for (const address of trade!.route) {
      const state = statesAtGap.get(address)!;
      const aToB = mint === state.pool.tokenA;
      const q = quoteSwap(state.pool, { aToB, mode: 'ExactIn', amount }, state.context);
      if (!q.ok) throw new Error(q.reason);
      amount = q.amountOut;
      mint = aToB ? state.pool.tokenB : state.pool.tokenA;
    }
    expect(mint).toBe(base);
    expect(trade!.output).toBe(amount);
    expect(trade!.gross).toBe(amount - trade!.input);
    // Bundle path (arbitrage): the swap transaction's and the tip transfer's signatures, priority fee 0; the opportunity's tip.
    expect(trade!.path).toBe('bundle');
    expect(trade!.fees).toBe(10_000n);
    expect(trade!.tip).toBe(5_000n);
    // funded by a flash loan (the backtest's spec 03 funding): its fee is paid with the repay
    expect(trade!.net).toBe(amount - trade!.input - flashLoanFeeOf(trade!.input) - 10_000n - 5_000n);
    // The planner's own profit rule on the same states: output − input − quoted fees − flash-loan fee − tip.
    expect(trade!.expectedProfit).toBe(amount - trade!.input - 5_000n - flashLoanFeeOf(trade!.input) - 5_000n);
    const json = report.toJson() as { strategies: { strategyId: string; trades: number; wins: number; winRate: number; feesPaid: string; tipsPaid: string; byProfitMint: { profitMint: string; netProfit: string; maxDrawdown: string }[] }[] };
    const s = json.strategies[0]!;
    expect(s).toMatchObject({ strategyId: 'bt-arb', trades: report.trades.length, wins: report.trades.length, winRate: 1 });
    expect(BigInt(s.feesPaid)).toBe(10_000n * BigInt(report.trades.length));
    expect(s.byProfitMint[0]).toMatchObject({ profitMint: base, maxDrawdown: '0' });
    expect(reportTable(report)).toContain(base);
  });

  it('gives byte-identical JSON for the same range, run twice', async () => {
    const a = reportJson(await backtest(t0, t1));
    const b = reportJson(await backtest(t0, t1));
    expect(a).toBe(b);
    expect(a).toContain('"trades"');
  });

  it('needs the warm-up: from the gap alone the pools have no full state; with the warm-up the trade is found', async () => {
    const cold = await backtest(gapAt, t1);
    expect(cold.trades).toEqual([]);
    expect(cold.events.skipped['no_base']).toBe(1);
    const warm = await backtest(gapAt, t1, gapAt - t0 + 1, false);
    expect(warm.events.warmup).toBeGreaterThan(0);
    const atGap = (r: BacktestReport): unknown[] => r.trades.filter((t) => t.sourceEvent.startsWith(`${gapped.address}:`)).map((t) => [t.id, t.route, t.net]);
    expect(atGap(warm).length).toBeGreaterThan(0);
    // Without market impact: the full range's earlier fills (warm-up events never trade) would move pools the gap's route may use.
    expect(atGap(warm)).toEqual(atGap(await backtest(t0, t1, 0, false)));
  });

  it('gives an empty report for a range with no events', async () => {
    const report = await backtest(t0 - 600_000, t0 - 300_000);
    expect(report.events).toEqual({ read: 0, warmup: 0, replayed: 0, skipped: {} });
    expect(report.trades).toEqual([]);
    expect((report.toJson() as { strategies: { trades: number }[] }).strategies).toEqual([expect.objectContaining({ strategyId: 'bt-arb', trades: 0, opportunities: 0 })]);
  });

  it('counts an event without state (an older publisher) as skipped, and quotes nothing on a guess', async () => {
    const report = await backtest(t2, t3);
    expect(report.events).toEqual({ read: 1, warmup: 0, replayed: 0, skipped: { no_state: 1 } });
    expect(report.trades).toEqual([]);
  });

  it('runs from the command line: --json is the same report; bad times and --from after --to exit 2', async () => {
    const common = ['--bus-servers', LOCAL_NATS_URL, '--subject-prefix', prefix, '--params', JSON.stringify(params()), '--strategy-id', 'bt-arb', '--warmup', '0'];
    const ok = await cli(['backtest', '--from', String(t0), '--to', new Date(t1).toISOString(), '--json', ...common]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(reportJson(await backtest(t0, t1)));
    const table = await cli(['backtest', '--from', String(t0), '--to', String(t1), ...common]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^strategy\s+strategy id\s+profit mint\s+trades/);

    const reversed = await cli(['backtest', '--from', String(t1), '--to', String(t0), ...common]);
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toMatch(/--from .* is after --to/);
    const bad = await cli(['backtest', '--from', 'yesterday', '--to', String(t1), ...common]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--from: "yesterday" is not an ISO 8601 time/);
    const missing = await cli(['backtest', '--to', String(t1), ...common]);
    expect(missing.code).toBe(2);
    const badParams = await cli(['backtest', '--from', String(t0), '--to', String(t1), ...common.slice(0, 4), '--params', '{"tip":"1"}']);
    expect(badParams.code).toBe(2);
    expect(badParams.stderr).toMatch(/tip/);
    const unknown = await cli(['backtest', '--from', String(t0), '--to', String(t1), ...common, '--strategy', 'martingale']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--strategy: unknown strategy "martingale"; expected one of arbitrage, grid, dca, signal/);
  });
});
