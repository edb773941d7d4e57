import { createSignalSourceApp, signalSourceSchema, type SignalSourceConfig } from '../../app/index.js';
import { redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { readCommandSettings, settingsHelp, startOrClose } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool signal-source [options]

A signal source (spec 03, "AI-based signals"): a model reads the market events' pool updates
(stream MARKET_EVENTS, durable consumer signal_source_<source-id>) and publishes TradeSignals on
signals.<source> (stream SIGNALS) for the planner's signal strategy (tidepool planner --strategy
signal). The built-in model (source "trend") learns online, per pool, whether the price will be
higher one --horizon from now, and speaks only while it has been right often enough; --model
loads your own (an ES module: engine/signals/README.md). At start, the last --warm-window of
history is replayed through the model without publishing, so it resumes where it was trusted.
/health, /ready and /metrics (signal_source_*) on --port (8087). SIGTERM drains and exits 0.

${settingsHelp(signalSourceSchema)}
`;

export const signalSourceCommand: Command = {
  name: 'signal-source',
  summary: 'publish trade signals from a model over the market events (the built-in trend model, or yours)',
  help: HELP,
  settings: signalSourceSchema,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, signalSourceSchema, io);
    const config = loaded.values as SignalSourceConfig;
    const logger = createLogger({ name: 'signal-source', level: config['metrics.logLevel'] });
    const app = await createSignalSourceApp(loaded, { logger });
    const endpoints = await startOrClose(app);
    logger.info({ endpoints, source: app.model.source, warmed: app.warmed, config: redactedValues(signalSourceSchema, loaded) }, 'signal source started');
    io.stderr.write(
      [
        `tidepool signal-source is running (model ${app.model.source}; ${app.warmed} events of history replayed):`,
        `  probes, metrics   ${endpoints.http}/health  ${endpoints.http}/ready  ${endpoints.http}/metrics`,
        `  watch             nats sub '${config['signals.subjectPrefix']}signals.>'`,
        '',
      ].join('\n'),
    );
    return app.host.untilShutdown();
  },
};
