import { connect } from 'nats';

import { PlatformStream } from '../../bus/index.js';
import { bool, duration, setting, str } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { arbitrageSettingsOf, checkArbitrageSettings } from '../../planner/index.js';
import { Backtest, BACKTEST_STRATEGIES, backtestStrategy, backtestStrategyType, paperBacktestFill, parseTimeRange, readMarketEventRange, reportJson, reportTable, type BacktestStrategy } from '../../backtest/index.js';
import { Strategy } from '../../messages/index.js';
import { loadSignalModel, TrendModel, type SignalModel, type TrendModelOptions } from '../../signals/index.js';
import { DEFAULT_SNAPSHOT_INTERVAL_MS } from '../../market/index.js';
import { scannerSchema } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

export const backtestSchema = {
  'bus.servers': scannerSchema['bus.servers'],
  'backtest.from': setting({ description: 'start of the range, inclusive: ISO 8601 time (UTC when no zone is given) or Unix ms; required', parse: str(), default: '', flag: 'from' }),
  'backtest.to': setting({ description: 'end of the range, inclusive: ISO 8601 time or Unix ms; required', parse: str(), default: '', flag: 'to' }),
  'backtest.strategy': setting({ description: `the strategy replayed: ${BACKTEST_STRATEGIES.join(', ')}`, parse: str({ nonEmpty: true }), default: 'arbitrage', flag: 'strategy' }),
  'backtest.params': setting({ description: "the strategy's parameters, JSON, as in strategy_configs.parameters (engine/planner/README.md); {} takes the defaults (arbitrage; grid, dca and signal have required fields)", parse: str({ nonEmpty: true }), default: '{}', flag: 'params' }),
  'backtest.movePools': setting({ description: 'a paper fill moves the pools it traded (their state after the swap, by the pool program\'s math) until the pool\'s next market event; false: fills leave the pools as recorded', parse: bool(), default: true, flag: 'move-pools' }),
  'backtest.signalModel': setting({ description: 'signal strategy: the signal model replayed over the events, an ES module (engine/signals/README.md); empty: the built-in trend model', parse: str(), default: '', flag: 'signal-model' }),
  'backtest.signalOptions': setting({ description: "signal strategy: the model's options, JSON (the trend model's: horizonMs, warmupSamples, minConfidence, minIntervalMs, minHitRate, hitWindow, quoteMints, learningRate, l2)", parse: str({ nonEmpty: true }), default: '{}', flag: 'signal-options' }),
  'backtest.strategyId': setting({ description: 'the strategy id the report and the opportunities carry', parse: str({ nonEmpty: true }), default: 'backtest', flag: 'strategy-id' }),
  'backtest.warmup': setting({ description: 'events stored this long before --from are read first: their pool states are applied, no strategy runs (it must cover market.stateSnapshotInterval so every pool has a full state)', parse: duration(), default: DEFAULT_SNAPSHOT_INTERVAL_MS, flag: 'warmup' }),
  'backtest.json': setting({ description: 'print the report as JSON (byte-identical for the same range) instead of a table', parse: bool(), default: false, flag: 'json' }),
  'backtest.natsStream': setting({ description: 'the JetStream stream of market.events.>', parse: str({ nonEmpty: true }), default: PlatformStream.MarketEvents as string, flag: 'nats-stream' }),
  'backtest.subjectPrefix': setting({ description: 'prefix in front of the stream name and subjects (tests; empty in deployments)', parse: str(), default: '', flag: 'subject-prefix' }),
};

const HELP = `Usage: tidepool backtest --from T --to T [--strategy arbitrage|grid|dca|signal] [--params JSON] [--json] [options]

Replays the pool_update MarketEvents the MARKET_EVENTS stream stored between --from and --to
(stream times; a JetStream ordered consumer from --from - --warmup, stopping at the first message
after --to or at the stream's end) through the planner's strategy and the paper executor's fill.
Each event's pool state is the one it carries (the market scanner's market.eventState); an event
without one is counted as skipped. A fill moves the pools it traded until their next event
(--move-pools false: it does not), so a lasting price gap is traded once.

  arbitrage   report per profit mint: trades, wins, losses, win rate, gross and net P&L, fees and
              tips, the worst drawdown
  grid, dca   the planner's grid or DCA strategy on --params (the keys of strategy_configs, e.g.
              {"pool":…,"token":…,"lowerPrice":…,"upperPrice":…,"levels":5,"amountPerLevel":"1000000"})
  signal      the signal strategy on --params, fed by a signal model replayed over the same events
              (the built-in trend model, or --signal-model), so no signal stream is needed

Grid, DCA and signal are reported by position, per token: base held, quote spent and received,
average cost, realized P&L (average cost), unrealized P&L at the last replayed price, trades, fees.
A bad parameter exits 2 naming it. The same range gives the same report, byte for byte with
--json. T: ISO 8601 (2026-11-27T10:00:00Z) or Unix milliseconds. Exit codes: 0 done, 2 bad
arguments, 1 the bus or stream unreachable. A trader's guide: docs/trading.md.

${settingsHelp(backtestSchema)}
`;

export type BacktestConfig = { [K in keyof typeof backtestSchema]: ReturnType<(typeof backtestSchema)[K]['parse']> };

function jsonObject(flag: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.Usage, `--${flag}: not JSON: ${(err as Error).message}`, { context: { setting: flag } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TpError(ErrorCode.Usage, `--${flag}: must be a JSON object`, { context: { setting: flag } });
  return value as Record<string, unknown>;
}

/** A bad parameter as a usage error naming it (the strategy's own message names the field). */
function asUsage(flag: string, err: unknown): never {
  throw new TpError(ErrorCode.Usage, `--${flag}: ${(err as Error).message}`, { cause: err, context: { setting: flag } });
}

async function signalModelOf(config: BacktestConfig): Promise<SignalModel> {
  const options = jsonObject('signal-options', config['backtest.signalOptions']);
  if (config['backtest.signalModel'] !== '') return loadSignalModel(config['backtest.signalModel'], options, '--signal-model');
  return new TrendModel(options as TrendModelOptions);
}

export const backtestCommand: Command = {
  name: 'backtest',
  summary: 'replay MARKET_EVENTS through a planner strategy (arbitrage, grid, dca, signal) and the paper fill; report trades and P&L',
  help: HELP,
  settings: backtestSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, backtestSchema, io);
    const config = loaded.values as BacktestConfig;
    if (config['backtest.from'] === '' || config['backtest.to'] === '') throw new TpError(ErrorCode.Usage, 'tidepool backtest: --from and --to are required');
    const range = parseTimeRange(config['backtest.from'], config['backtest.to']);
    const type = backtestStrategyType(config['backtest.strategy']);
    const params = jsonObject('params', config['backtest.params']);
    const strategyId = config['backtest.strategyId'];
    let computeUnitPriceMicroLamports = 0n;
    if (type === Strategy.Arbitrage) {
      try {
        const settings = arbitrageSettingsOf(strategyId, params);
        checkArbitrageSettings(settings);
        computeUnitPriceMicroLamports = settings.computeUnitPriceMicroLamports;
      } catch (err) {
        asUsage('params', err);
      }
    }
    const signalModel = type === Strategy.Signal ? await signalModelOf(config).catch((err: unknown) => asUsage('signal-model', err)) : undefined;
    let strategy: BacktestStrategy;
    try {
      strategy = await backtestStrategy(type, strategyId, params, signalModel === undefined ? {} : { signalModel });
    } catch (err) {
      if (err instanceof TpError && err.code === ErrorCode.ConfigInvalid) asUsage('params', err);
      throw err;
    }
    const warmupMs = config['backtest.warmup'];
    const prefix = config['backtest.subjectPrefix'];
    const stream = config['backtest.natsStream'] === PlatformStream.MarketEvents ? `${prefix}${PlatformStream.MarketEvents}` : config['backtest.natsStream'];
    let nc;
    try {
      nc = await connect({ servers: [...config['bus.servers']], name: 'tidepool-backtest', maxReconnectAttempts: 0 });
    } catch (err) {
      await strategy.close();
      throw new TpError(ErrorCode.Unavailable, `the bus at ${config['bus.servers'].join(',')} is unreachable: ${(err as Error).message}`, { cause: err });
    }
    try {
      const backtest = new Backtest({
        range: { ...range, warmupMs },
        strategies: strategy.strategies,
        // The fill charges the priority fee at the strategy's compute unit price, as the executor would.
        fill: paperBacktestFill({ computeUnitPriceMicroLamports }),
        movePools: config['backtest.movePools'],
        ...(strategy.signals === undefined ? {} : { signals: strategy.signals }),
      });
      const report = await backtest.run(readMarketEventRange({ nc, from: range.from - warmupMs, to: range.to, prefix, stream }));
      io.stdout.write(config['backtest.json'] ? reportJson(report) : reportTable(report));
      return 0;
    } finally {
      await nc.close();
      await strategy.close();
    }
  },
};
