import { createExecutorApp, executorSchema, type ExecutorConfig } from '../../app/index.js';
import { redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { readCommandSettings, settingsHelp, startOrClose } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool executor [--paper] [options]

The executor of spec 03: a durable consumer executor_<executor-id> on the TRADE_OPPORTUNITIES stream
(trade.opportunities.>, explicit ack once the outcome is recorded, dead-letter stream after 5 failed
deliveries). Each opportunity is checked (expired, state too old, the route re-quoted on the current
pool state still profitable) and executed on spec 03's path: bundle (block engine, tip 5,000-6,000
lamports) for arbitrage or an expected profit above 0.1 SOL, else a direct transaction. Up to
--max-concurrent-trades at once; one trade per worker wallet (lock:executor:{wallet_id}). Every trade
is a trades row (pending, submitted, confirmed | failed | expired) with its trade_routes; its
ExecutionResult goes to execution.orders.<strategy> (stream EXECUTION_ORDERS).

--paper (PAPER_TRADING=true): the same pipeline without sending anything: the fill is computed on the
live pool state with the exact swap math plus the fees and tip the real path would pay, recorded as a
trade with status paper. No wallet passphrase is needed.

Real mode opens the worker wallets' keys with TIDEPOOL_WALLET_PASSPHRASE (or --key-file), as
\`tidepool wallets\` does. executor_metrics rows every --metrics-interval; /health, /ready, /metrics
and /stats on --port (8085). Watch: nats sub 'execution.orders.>' (each trade's request on
execution.orders.request.<strategy>, then its result on execution.orders.<strategy>). SIGTERM
drains (trades in flight finish and are recorded) and exits 0.

${settingsHelp(executorSchema)}
`;

export const executorCommand: Command = {
  name: 'executor',
  summary: 'execute trade opportunities: bundle or direct path, worker wallets, trade records; --paper (spec 03)',
  help: HELP,
  settings: executorSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, executorSchema, io);
    const config = loaded.values as ExecutorConfig;
    const logger = createLogger({ name: 'executor', level: config['metrics.logLevel'] });
    const app = await createExecutorApp(loaded, { logger });
    const endpoints = await startOrClose(app);
    logger.info({ endpoints, paper: config['executor.paper'], config: redactedValues(executorSchema, loaded) }, 'executor started');
    io.stderr.write(
      [
        `tidepool executor is running (${config['executor.paper'] ? 'paper trading: nothing is sent' : 'real trades'}; up to ${config['executor.maxConcurrentTrades']} at once):`,
        `  probes, metrics   ${endpoints.http}/health  ${endpoints.http}/ready  ${endpoints.http}/metrics  ${endpoints.http}/stats`,
        `  watch             nats sub '${config['executor.subjectPrefix']}execution.orders.>'`,
        '',
      ].join('\n'),
    );
    return app.host.untilShutdown();
  },
};
