import { createPlannerApp, plannerSchema, type PlannerConfig } from '../../app/index.js';
import { redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { readPoolsFile } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp, startOrClose } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool planner --strategy arbitrage|grid|dca[,…] [options]

The planners of spec 03 in one process: a durable consumer planner_<planner-id> on the MARKET_EVENTS
stream (market.events.*.pool_update, explicit ack after processing, dead-letter stream after 5
failed deliveries) runs every enabled strategy_configs row of the strategies asked for and publishes
TradeOpportunities on trade.opportunities.<strategy> (stream TRADE_OPPORTUNITIES). Arbitrage gets a
default strategy_configs row when none exists; grid and dca need theirs (engine/planner/
README.md gives the parameters). Pools are read from RPC at start (pools.monitored, else pools.file)
and again for each event. planner_metrics rows every --metrics-interval; /health, /ready and
/metrics on --port (8084). Watch: nats sub 'trade.opportunities.>'. SIGTERM drains and exits 0.

${settingsHelp(plannerSchema)}
`;

export const plannerCommand: Command = {
  name: 'planner',
  summary: 'run the arbitrage, grid and DCA planners on the platform streams (spec 03)',
  help: HELP,
  settings: plannerSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, plannerSchema, io);
    const config = loaded.values as PlannerConfig;
    const logger = createLogger({ name: 'planner', level: config['metrics.logLevel'] });
    const pools = config['pools.monitored'].length > 0 ? config['pools.monitored'] : readPoolsFile(config['pools.file']);
    const app = await createPlannerApp(loaded, { logger, pools });
    const endpoints = await startOrClose(app);
    logger.info({ endpoints, pools: pools.length, strategies: app.strategies.map((s) => `${s.type}:${s.id}`), config: redactedValues(plannerSchema, loaded) }, 'planner started');
    io.stderr.write(
      [
        `tidepool planner is running (${app.strategies.map((s) => `${s.type} ${s.id}`).join(', ')}; ${pools.length} pools):`,
        `  probes, metrics   ${endpoints.http}/health  ${endpoints.http}/ready  ${endpoints.http}/metrics`,
        `  watch             nats sub '${config['planner.subjectPrefix']}trade.opportunities.>'`,
        '',
      ].join('\n'),
    );
    return app.host.untilShutdown();
  },
};
