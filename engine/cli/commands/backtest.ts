import { connect } from 'nats';

import { PlatformStream } from '../../bus/index.js';
import { bool, duration, setting, str } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { ArbitrageStrategy, arbitrageSettingsOf, checkArbitrageSettings } from '../../planner/index.js';
import { Backtest, paperBacktestFill, parseTimeRange, readMarketEventRange, reportJson, reportTable } from '../../backtest/index.js';
import { DEFAULT_SNAPSHOT_INTERVAL_MS } from '../../market/index.js';
import { scannerSchema } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

export const backtestSchema = {
  'bus.servers': scannerSchema['bus.servers'],
  'backtest.from': setting({ description: 'start of the range, inclusive: ISO 8601 time (UTC when no zone is given) or Unix ms; required', parse: str(), default: '', flag: 'from' }),
  'backtest.to': setting({ description: 'end of the range, inclusive: ISO 8601 time or Unix ms; required', parse: str(), default: '', flag: 'to' }),
  'backtest.strategy': setting({ description: 'the strategy replayed: arbitrage (grid and dca are not replayed yet)', parse: str({ nonEmpty: true }), default: 'arbitrage', flag: 'strategy' }),
  'backtest.params': setting({ description: "the strategy's parameters, JSON, as in strategy_configs.parameters (engine/planner/README.md); {} takes the defaults", parse: str({ nonEmpty: true }), default: '{}', flag: 'params' }),
  'backtest.strategyId': setting({ description: 'the strategy id the report and the opportunities carry', parse: str({ nonEmpty: true }), default: 'backtest', flag: 'strategy-id' }),
  'backtest.warmup': setting({ description: 'events stored this long before --from are read first: their pool states are applied, no strategy runs (it must cover market.stateSnapshotInterval so every pool has a full state)', parse: duration(), default: DEFAULT_SNAPSHOT_INTERVAL_MS, flag: 'warmup' }),
  'backtest.json': setting({ description: 'print the report as JSON (byte-identical for the same range) instead of a table', parse: bool(), default: false, flag: 'json' }),
  'backtest.natsStream': setting({ description: 'the JetStream stream of market.events.>', parse: str({ nonEmpty: true }), default: PlatformStream.MarketEvents as string, flag: 'nats-stream' }),
  'backtest.subjectPrefix': setting({ description: 'prefix in front of the stream name and subjects (tests; empty in deployments)', parse: str(), default: '', flag: 'subject-prefix' }),
};

const HELP = `Usage: tidepool backtest --from T --to T [--strategy arbitrage] [--params JSON] [--json] [options]

Replays the pool_update MarketEvents the MARKET_EVENTS stream stored between --from and --to
(stream times; a JetStream ordered consumer from --from - --warmup, stopping at the first message
after --to or at the stream's end) through the planner's strategy and the paper executor's fill, and
prints a report per strategy and profit mint: trades, wins, losses, win rate, gross and net profit
and loss, fees and tips paid, the worst drawdown. Each event's pool state is the one it carries
(the market scanner's market.eventState); an event without one is counted as skipped. The same
range gives the same report, byte for byte with --json. T: ISO 8601 (2026-11-27T10:00:00Z) or Unix
milliseconds. Exit codes: 0 done, 2 bad arguments, 1 the bus or stream unreachable.

${settingsHelp(backtestSchema)}
`;

export type BacktestConfig = { [K in keyof typeof backtestSchema]: ReturnType<(typeof backtestSchema)[K]['parse']> };

function strategyParams(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.Usage, `--params: not JSON: ${(err as Error).message}`, { context: { setting: 'params' } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TpError(ErrorCode.Usage, '--params: must be a JSON object', { context: { setting: 'params' } });
  return value as Record<string, unknown>;
}

export const backtestCommand: Command = {
  name: 'backtest',
  summary: 'replay MARKET_EVENTS through a planner strategy and the paper fill; report trades and P&L',
  help: HELP,
  settings: backtestSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, backtestSchema, io);
    const config = loaded.values as BacktestConfig;
    if (config['backtest.from'] === '' || config['backtest.to'] === '') throw new TpError(ErrorCode.Usage, 'tidepool backtest: --from and --to are required');
    const range = parseTimeRange(config['backtest.from'], config['backtest.to']);
    const strategy = config['backtest.strategy'];
    if (strategy === 'grid' || strategy === 'dca') throw new TpError(ErrorCode.Usage, `--strategy ${strategy}: not replayed by backtests yet (only arbitrage)`, { context: { setting: 'strategy' } });
    if (strategy !== 'arbitrage') throw new TpError(ErrorCode.Usage, `--strategy: unknown strategy ${JSON.stringify(strategy)}; expected arbitrage`, { context: { setting: 'strategy' } });
    const params = strategyParams(config['backtest.params']);
    const strategyId = config['backtest.strategyId'];
    let settings;
    try {
      settings = arbitrageSettingsOf(strategyId, params);
      checkArbitrageSettings(settings);
    } catch (err) {
      throw new TpError(ErrorCode.Usage, `--params: ${(err as Error).message}`, { cause: err, context: { setting: 'params' } });
    }
    const warmupMs = config['backtest.warmup'];
    const prefix = config['backtest.subjectPrefix'];
    const stream = config['backtest.natsStream'] === PlatformStream.MarketEvents ? `${prefix}${PlatformStream.MarketEvents}` : config['backtest.natsStream'];
    let nc;
    try {
      nc = await connect({ servers: [...config['bus.servers']], name: 'tidepool-backtest', maxReconnectAttempts: 0 });
    } catch (err) {
      throw new TpError(ErrorCode.Unavailable, `the bus at ${config['bus.servers'].join(',')} is unreachable: ${(err as Error).message}`, { cause: err });
    }
    try {
      const backtest = new Backtest({
        range: { ...range, warmupMs },
        strategies: (pools, now) => [new ArbitrageStrategy(strategyId, params, pools, now)],
        // The fill charges the priority fee at the strategy's compute unit price, as the executor would.
        fill: paperBacktestFill({ computeUnitPriceMicroLamports: settings.computeUnitPriceMicroLamports }),
      });
      const report = await backtest.run(readMarketEventRange({ nc, from: range.from - warmupMs, to: range.to, prefix, stream }));
      io.stdout.write(config['backtest.json'] ? reportJson(report) : reportTable(report));
      return 0;
    } finally {
      await nc.close();
    }
  },
};
