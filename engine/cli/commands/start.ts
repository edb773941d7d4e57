import { checkEngineConfig } from '../../app/engine-config.js';
import { createEngine } from '../../app/engine-app.js';
import { engineConfigUnderSim, startSchema } from '../../app/start-config.js';
import { createLogger } from '../../obs/logger.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';
import { startSimulatorThread } from '../../sim/sim-thread.js';
import type { SimConfig } from '../../sim/sim-config.js';
import { readCommandSettings, serveUntilSignal, settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';
import { endpointLines } from './engine.js';

const HELP = `Usage: tidepool start [options]      (what 'npm start' runs)

Runs everything in one process on the embedded defaults, no servers needed: the local chain
simulator on its own thread (JSON-RPC :8899, PubSub :8900, ShredStream gRPC :9999, quote API /
block engine / faults :8890), the scanner reading its block-entry stream, and the quote service serving quotes from the
scanner's pool cache (:8080; gRPC quote stream StreamBatchQuotes :50052). Every pool of the simulator is monitored unless MONITORED_POOLS says
otherwise. Prints the endpoints and a ready-to-run quote request. SIGTERM or Ctrl-C drains and exits 0.

${settingsHelp(startSchema)}
`;

export const startCommand: Command = {
  name: 'start',
  summary: 'run the simulator, the scanner and the quote service in one process (npm start)',
  help: HELP,
  async run(argv, io) {
    const { loaded } = readCommandSettings(argv, startSchema, io);
    checkEngineConfig(loaded.values);
    const logger = createLogger({ name: 'tidepool', level: loaded.values['log.level'] });
    // The chain runs on its own thread, as a node would beside the engine.
    const sim = await startSimulatorThread(loaded.values as unknown as SimConfig, { logLevel: loaded.values['log.level'] });
    const simEndpoints = sim.endpoints;
    const pools = loaded.values['pools.monitored'].length > 0 ? loaded.values['pools.monitored'] : sim.pools.map((p) => p.address);
    const engine = createEngine(engineConfigUnderSim(loaded, simEndpoints), { logger, pools });
    let endpoints;
    try {
      endpoints = await engine.start();
    } catch (err) {
      await Promise.allSettled([engine.close(), sim.close()]);
      throw err;
    }
    logger.info({ endpoints, sim: simEndpoints, pools: pools.length }, 'tidepool started');
    io.stderr.write(
      [
        `tidepool is running (simulated chain, ${pools.length} pools monitored):`,
        ...endpointLines(endpoints),
        `  chain JSON-RPC    ${simEndpoints.rpc}   (PubSub ${simEndpoints.ws}, ShredStream ${simEndpoints.stream})`,
        `  chain quote API   ${simEndpoints.http}/quote   (block engine /api/v1/bundles, faults /admin/faults)`,
        'Try (1 wrapped SOL to USDC):',
        `  curl -s '${endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000'`,
        '',
      ].join('\n'),
    );
    return serveUntilSignal(logger, 'tidepool', async () => {
      await engine.close();
      await sim.close();
    });
  },
};
