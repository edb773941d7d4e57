import { describe, expect, it } from 'vitest';

import { isTpError, ErrorCode } from '../errors.js';
import { BacktestReport, reportJson, reportTable, type BacktestTrade } from './backtest-report.js';
import { parseTimeBound, parseTimeRange } from './time-bound.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

function trade(n: number, net: bigint, profitMint = SOL, strategyId = 'arb'): BacktestTrade {
  return { id: `t${n}`, strategy: 'arbitrage', strategyId, sourceEvent: `e${n}`, slot: BigInt(n), timestamp: 1_000 + n, path: 'bundle', profitMint, inputMint: profitMint, input: 1_000n, output: 1_000n + net + 15_000n, expectedProfit: net, gross: net + 15_000n, fees: 10_000n, tip: 5_000n, net, route: ['p'] };
}

describe('the backtest report', () => {
  it('takes the worst drawdown as the largest fall of cumulative net P&L from its running peak, per profit mint', () => {
    const r = new BacktestReport({ from: 0, to: 10, warmupMs: 0 });
    // Cumulative SOL: 100, 40, 70, -30, 20 → peak 100, trough -30: drawdown 130.
    for (const [i, net] of [100n, -60n, 30n, -100n, 50n].entries()) r.trade(trade(i, net));
    r.trade(trade(9, -7n, USDC)); // from 0 to -7: drawdown 7, in its own mint
    const json = r.toJson() as { strategies: { trades: number; wins: number; losses: number; winRate: number; feesPaid: string; tipsPaid: string; byProfitMint: Record<string, unknown>[] }[] };
    const s = json.strategies[0]!;
    expect(s).toMatchObject({ trades: 6, wins: 3, losses: 3, winRate: 0.5, feesPaid: '60000', tipsPaid: '30000' });
    expect(s.byProfitMint).toEqual([
      { profitMint: USDC, trades: 1, wins: 0, losses: 1, winRate: 0, grossProfit: '14993', netProfit: '-7', maxDrawdown: '7' },
      { profitMint: SOL, trades: 5, wins: 3, losses: 2, winRate: 0.6, grossProfit: String(20n + 5n * 15_000n), netProfit: '20', maxDrawdown: '130' },
    ]);
  });

  it('lists every strategy, even one with no opportunity, and writes the same bytes for the same trades', () => {
    const make = (): BacktestReport => {
      const r = new BacktestReport({ from: 5, to: 9, warmupMs: 1 });
      r.strategy('arbitrage', 'quiet');
      r.trade(trade(1, 3n, SOL, 'busy'));
      r.notFilled('arbitrage', 'busy', 'quote_refused');
      r.skip('no_state');
      return r;
    };
    expect(reportJson(make())).toBe(reportJson(make()));
    const json = JSON.parse(reportJson(make())) as { strategies: { strategyId: string; notFilled: Record<string, number> }[]; events: { skipped: Record<string, number> } };
    expect(json.strategies.map((s) => s.strategyId)).toEqual(['busy', 'quiet']);
    expect(json.strategies[0]!.notFilled).toEqual({ quote_refused: 1 });
    expect(json.events.skipped).toEqual({ no_state: 1 });
    const table = reportTable(make());
    expect(table).toContain('quiet');
    expect(table).toContain('skipped: no_state 1');
  });
});

describe('--from and --to', () => {
  it('reads ISO 8601 times (UTC without a zone) and Unix milliseconds', () => {
    expect(parseTimeBound('from', '2026-11-27T10:00:00Z')).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseTimeBound('from', '2026-11-27T10:00:00')).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseTimeBound('from', '2026-11-27T11:00:00+01:00')).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseTimeBound('from', '2026-11-27')).toBe(Date.UTC(2026, 10, 27));
    expect(parseTimeBound('to', '1795600000000')).toBe(1_795_600_000_000);
  });

  it('refuses anything else, and a range that ends before it starts, as usage errors', () => {
    for (const bad of ['', 'yesterday', '2026-13-45T99:00:00Z', '-5', '1.5', '27/11/2026']) {
      expect(() => parseTimeBound('from', bad), bad).toThrow(/--from/);
      try {
        parseTimeBound('from', bad);
      } catch (err) {
        expect(isTpError(err, ErrorCode.Usage)).toBe(true);
      }
    }
    expect(() => parseTimeRange('2026-11-27T10:00:01Z', '2026-11-27T10:00:00Z')).toThrow(/is after --to/);
    expect(parseTimeRange('5', '5')).toEqual({ from: 5, to: 5 });
  });
});
