import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import { int, setting, str, uniqueList } from '../../config/index.js';
import { createDecoderRegistry } from '../../dex/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { discoverPools } from '../../market/index.js';
import { RpcPoolLoader } from '../../pools/index.js';
import { AccountFetcher, RpcClient } from '../../rpc/index.js';
import { DEFAULT_POOLS_FILE, scannerSchema } from '../../scanner/index.js';
import { readCommandSettings, settingsHelp } from '../service-command.js';
import { toJson, type Command } from '../command.js';

export const poolsSchema = {
  'rpc.endpoints': scannerSchema['rpc.endpoints'],
  'discover.mints': setting({ description: 'mints whose pools to find (comma-separated base58)', parse: uniqueList(str({ nonEmpty: true })), default: [] as string[], flag: 'mints' }),
  'discover.out': setting({ description: 'the monitored pools file written ({"pools": [...ranked addresses], "discovered": [...]}); "-" prints it only', parse: str({ nonEmpty: true }), default: DEFAULT_POOLS_FILE, flag: 'out' }),
  'discover.limit': setting({ description: 'keep the first N pools of the ranking (0: all)', parse: int({ min: 0 }), default: 0, flag: 'limit' }),
};

const HELP = `Usage: tidepool pools discover --mints A,B,… [options]

Market data initialization (spec 03): finds the pools of the four DEX kinds that trade the mints with
getProgramAccounts on each DEX program (a dataSize filter and a memcmp filter on each mint field),
reads them (vault balances for reserves), ranks them by liquidity (the reserve of the first listed
mint the pool holds) and writes the monitored pools file that 'tidepool scanner', 'tidepool
market-scanner' and 'tidepool planner' read (pools.file). With one mint: every pool holding it; with
several: pools whose two mints are both listed.

${settingsHelp(poolsSchema)}
`;

export const poolsCommand: Command = {
  name: 'pools',
  summary: 'find the pools that trade given mints and write the monitored pools file (pools discover)',
  help: HELP,
  settings: poolsSchema,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub !== 'discover') throw new TpError(ErrorCode.Usage, `tidepool pools: unknown subcommand ${sub ?? '(none)'}; expected discover`);
    const { loaded } = readCommandSettings(rest, poolsSchema, io);
    const v = loaded.values;
    if (v['discover.mints'].length === 0) throw new TpError(ErrorCode.Usage, 'tidepool pools discover: --mints is required');
    const rpcUrl = v['rpc.endpoints'][0]!;
    const rpc = new RpcClient({ endpoints: [rpcUrl] });
    try {
      const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
      let pools = await discoverPools({ rpcUrl, mints: v['discover.mints'], loader });
      if (v['discover.limit'] > 0) pools = pools.slice(0, v['discover.limit']);
      const file = { pools: pools.map((p) => p.address), mints: v['discover.mints'], discovered: pools };
      const text = `${toJson(file, 2)}\n`;
      if (v['discover.out'] === '-') io.stdout.write(text);
      else {
        mkdirSync(dirname(v['discover.out']), { recursive: true });
        writeFileSync(v['discover.out'], text);
        io.stderr.write(`wrote ${pools.length} pools to ${v['discover.out']}\n`);
        for (const p of pools) io.stdout.write(`${p.address}  ${p.dex.padEnd(15)} ${p.tokenA} ${p.tokenB} liquidity ${p.liquidity ?? '?'} (${p.liquidityMint ?? '-'})\n`);
      }
      return 0;
    } finally {
      await rpc.close();
    }
  },
};
