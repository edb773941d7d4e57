import { writeFileSync } from 'node:fs';

import { ServiceHost } from '../../app/index.js';
import { describeSchema, redactedValues } from '../../config/index.js';
import { createLogger } from '../../obs/index.js';
import { createSimulator } from '../../sim/index.js';
import { simSchema } from '../../sim/index.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/index.js';
import { readCommandSettings } from '../service-command.js';
import type { Command } from '../command.js';
import { runSimFaucet } from './sim-faucet.js';

const HELP = `Usage: tidepool sim [options]
       tidepool sim faucet --wallet PUBKEY (--sol | --mint MINT|SYMBOL) --amount ATOMS   (see tidepool sim faucet --help)

Runs the local chain simulator: a deterministic, seeded Solana chain with pools of the four DEX
kinds and a flow of signed swap transactions, served over the real protocols:
  Solana JSON-RPC (HTTP) and PubSub (WebSocket), the ShredStream gRPC entry stream, and one HTTP
  server with an aggregator-style GET /quote, a Jito-style block engine (/api/v1/bundles) and the
  fault admin (/admin/faults). Everything follows from --seed: the same seed and settings give the
  same slots, transactions and states. SIGTERM, Ctrl-C or the parent process exiting stops it cleanly.

Options (flag, environment variable; a JSON config file via --config FILE or TIDEPOOL_CONFIG):
  --config FILE                                JSON config file with any of the settings below
  --pools-out FILE                             write the pool addresses as {"pools": [...]} once started
                                               (a pools file for 'tidepool scanner', MONITORED_POOLS_FILE)
${describeSchema(simSchema)}

Funding a wallet of your own (real transactions from the simulator's faucet; see docs/command-line.md):
  tidepool sim faucet --wallet <pubkey> --sol --amount 2000000000        # requestAirdrop
  tidepool sim faucet --wallet <pubkey> --mint USDC --amount 1000000000  # simRequestTokens (simulator only)

Faults at run time (loopback HTTP):
  curl -s localhost:8890/admin/faults                                  # current faults
  curl -s -XPOST localhost:8890/admin/faults -d '{"stream":{"stall":true}}'
  curl -s -XPOST localhost:8890/admin/faults -d '{"rpc":{"getMultipleAccounts":{"errorRate":1,"latencyMs":200}}}'
  curl -s -XPOST localhost:8890/admin/faults/actions/stream.disconnect  # also: ws.drop
  curl -s -XDELETE localhost:8890/admin/faults                         # clear all
`;

export const simCommand: Command = {
  name: 'sim',
  summary: 'run the local Solana chain simulator (JSON-RPC, ShredStream, /quote, block engine, faults)',
  help: HELP,
  settings: simSchema,
  async run(argv, io) {
    if (argv[0] === 'faucet') return runSimFaucet(argv.slice(1), io);
    const { loaded, options } = readCommandSettings(argv, simSchema, io, { options: { 'pools-out': { type: 'string', description: 'pools file to write' } } });
    const logger = createLogger({ name: 'sim', level: io.env.LOG_LEVEL });
    // The host's close stack: a start that fails half way, or a SIGTERM during it, closes the simulator.
    const { host, endpoints } = await ServiceHost.assemble({ service: 'simulator', logger }, async (host) => {
      const sim = createSimulator(loaded.values, { logger });
      host.onClose('simulator', () => sim.close());
      const endpoints = await sim.start();
      const poolsOut = options['pools-out'];
      if (typeof poolsOut === 'string') writeFileSync(poolsOut, `${JSON.stringify({ pools: sim.chain.pools().map((p) => p.address) }, null, 2)}\n`);
      return { host, endpoints };
    });
    logger.info({ endpoints, config: redactedValues(simSchema, loaded) }, 'simulator started');
    io.stderr.write(
      [
        'tidepool sim is running:',
        `  Solana JSON-RPC   ${endpoints.rpc}`,
        `  Solana PubSub     ${endpoints.ws}`,
        `  ShredStream gRPC  ${endpoints.stream}`,
        `  quote API         ${endpoints.http}/quote`,
        `  block engine      ${endpoints.http}/api/v1/bundles`,
        `  fault admin       ${endpoints.http}/admin/faults`,
        'Try:',
        `  curl -s '${endpoints.http}/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000000'`,
        `  curl -s ${endpoints.rpc} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'`,
        `  tidepool sim faucet --rpc-url ${endpoints.rpc} --wallet <pubkey> --sol --amount 1000000000`,
        '',
      ].join('\n'),
    );
    return host.untilShutdown();
  },
};
