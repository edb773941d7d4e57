import { parseCommandLine } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { formatReport, generateConfig, maskedReport, readConfigFile, validateConfig, ValidationExit } from '../../config-validator/index.js';
import { toJson, type Command } from '../command.js';

const HELP = `Usage: tidepool validate-config FILE [--generate] [--offline] [--json]

Checks a trading platform configuration (JSON) against schemas/platform-config.schema.json:
rpcEndpoints (at least 3 URLs), rpcTimeout (>= 5000 ms), natsUrl, natsToken (optional), redisUrl,
redisPassword (optional), databaseUrl, treasureWallet and workerWallets (64-byte secret keys in
base58, 88 characters; at least 5 workers), minProfitThreshold (> 0), maxConcurrentTrades (1-50),
blockEngineUrl, blockEngineUuid, tipBase (positive integer); optionally the bus's natsUser +
natsPassword, natsCredsFile, natsTls, natsTlsCaFile, natsTlsCertFile, natsTlsKeyFile, the external
aggregator's externalQuoteUrl (+ externalQuoteApiKey) and the block-entry stream's shredstreamUrl.
Every violation is printed with its path. Each wallet key is verified (its public half must be the
key its seed derives), then each connection is tested (RPC getHealth, Redis PING, PostgreSQL
SELECT 1, NATS with its credentials and TLS then JetStream, the block engine's getTipAccounts, a
small SOL to USDC GET /quote of the aggregator, a gRPC channel to the ShredStream proxy) and its
latency or exact failure printed; no secret is printed. docs/mainnet.md walks through a real one.

  --generate   first fill in what FILE lacks (a new file: all of it, with fresh keypairs and a
               fresh block-engine UUID), written with mode 0600; existing values are kept
  --offline    skip the connection tests
  --json       the report as JSON

Exit codes: 0 valid, 1 invalid, 2 valid but a dependency unreachable.
`;

export const validateConfigCommand: Command = {
  name: 'validate-config',
  summary: 'validate a platform config: schema, wallet keys, connections (exit 0 valid, 1 invalid, 2 unreachable)',
  help: HELP,
  async run(argv, io) {
    const { options, positionals } = parseCommandLine(argv, {}, {
      generate: { type: 'boolean', description: 'fill in missing parts' },
      offline: { type: 'boolean', description: 'no connection tests' },
      json: { type: 'boolean', description: 'JSON report' },
    });
    if (positionals.length !== 1) throw new TpError(ErrorCode.Usage, 'expected one config FILE');
    const file = positionals[0]!;
    if (options.generate === true) {
      const added = generateConfig(file);
      io.stderr.write(added.length === 0 ? `${file}: nothing missing\n` : `${file}: generated ${added.join(', ')} (mode 0600)\n`);
    }
    const read = readConfigFile(file);
    const checked =
      read.violations.length > 0
        ? { violations: read.violations, keys: [], connections: [], exitCode: ValidationExit.Invalid }
        : await validateConfig(read.config, { offline: options.offline === true });
    const report = maskedReport(checked);
    io.stdout.write(options.json === true ? `${toJson(report)}\n` : formatReport(report));
    return report.exitCode;
  },
};
