import { checkEngineConfig } from '../../app/engine-config.js';
import { createEngine } from '../../app/engine-app.js';
import { engineConfigUnderSim, startSchema } from '../../app/start-config.js';
import { parseCommandLine } from '../../config/command-line.js';
import { describeSchema, loadConfig } from '../../config/loader.js';
import { createLogger } from '../../obs/logger.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';
import { startSimulatorThread } from '../../sim/sim-thread.js';
import type { SimConfig } from '../../sim/sim-config.js';
import type { Command } from '../command.js';
import { waitForShutdown } from '../shutdown.js';
import { endpointLines } from './engine.js';

const HELP = `Usage: tidepool start [options]      (what 'npm start' runs)

Runs everything in one process on the embedded defaults, no servers needed: the local chain
simulator on its own thread (JSON-RPC :8899, PubSub :8900, ShredStream gRPC :9999, quote API /
block engine / faults :8890), the scanner reading its block-entry stream, and the quote service serving quotes from the
scanner's pool cache (:8080). Every pool of the simulator is monitored unless MONITORED_POOLS says
otherwise. Prints the endpoints and a ready-to-run quote request. SIGTERM or Ctrl-C drains and exits 0.

Options (flag, environment variable; a JSON config file via --config FILE or TIDEPOOL_CONFIG):
  --config FILE                                JSON config file with any of the settings below
${describeSchema(startSchema)}
`;

export const startCommand: Command = {
  name: 'start',
  summary: 'run the simulator, the scanner and the quote service in one process (npm start)',
  help: HELP,
  async run(argv, io) {
    const { flags, options } = parseCommandLine(argv, startSchema, { config: { type: 'string', description: 'config file' } });
    const loaded = loadConfig(startSchema, { flags, env: io.env, ...(typeof options.config === 'string' ? { file: options.config } : {}) });
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
    const signal = await waitForShutdown();
    logger.info({ signal }, 'tidepool stopping');
    await engine.close();
    await sim.close();
    logger.info('tidepool stopped');
    logger.flush();
    return 0;
  },
};
