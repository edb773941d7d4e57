import { loadConfig, parseCommandLine, type CommandOption } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { StrategyAdmin, PARAMETER_KINDS, parametersFromPairs, parseStrategyType, type StrategyPnl, type StrategySummary } from '../../planner/index.js';
import { databaseSchema, migrateUp, openDatabase } from '../../state/index.js';
import { STRATEGIES } from '../../messages/index.js';
import { settingsHelp } from '../service-command.js';
import { toJson, type CliIo, type Command } from '../command.js';

const OPTIONS: Record<string, CommandOption> = {
  config: { type: 'string', description: 'config file' },
  params: { type: 'string', description: 'parameters as one JSON object (instead of key=value pairs; in edit, null drops a key)' },
  paused: { type: 'boolean', description: 'add the strategy disabled (resume it later)' },
  json: { type: 'boolean', description: 'JSON output' },
};

const kinds = STRATEGIES.map((t) => `  ${t.padEnd(9)} ${Object.keys(PARAMETER_KINDS[t]).join(', ')}`).join('\n');

const HELP = `Usage: tidepool strategies <action> [options]

The strategies the planners run (strategy_configs rows). A running \`tidepool planner\` picks a
change up within --strategy-reload-interval (2 s) without a restart, for the strategy types it
was started with (--strategy).

Actions:
  add <type> key=value ... [--paused]   type: ${STRATEGIES.join(', ')}; or --params '{"key": ...}'
  list [--json]                         every strategy, enabled or paused, with its order counts and P&L
  show <id> [--json]                    parameters, realized P&L and the latest grid orders (id: uuid or prefix)
  edit <id> key=value ...               change parameters (merged over the row's; or --params '{"key": ...}',
                                        where null drops a key); a running planner rebuilds the strategy
  pause <id>                            stop running it; a grid's open orders are cancelled
  resume <id>                           run it again (its parameters are checked again)
  remove <id>                           delete it and its grid orders (open ones cancelled first)

Parameters each type reads (engine/planner/README.md explains them; u64 amounts in atoms, prices
raw: quote atoms per token atom):
${kinds}

Parameters are checked as the strategy reads them before anything is written: a bad or unknown
one is refused with TP_ERR_CONFIG_INVALID naming it (exit 1), and nothing changes.

P&L (engine/planner/README.md): realized from the strategy's filled trades (confirmed or paper);
grid, DCA and signal at average cost in quote atoms, arbitrage the sum of the trades' actual
profit; position in token atoms; fees and tips in lamports.

Example:
  tidepool strategies add grid pool=<pool> token=<mint> lowerPrice=0.9 upperPrice=1.1 levels=5 \\
    amountPerLevel=1000000

${settingsHelp(databaseSchema)}
`;

/** `pnl 50001 (So11…) position 1 fills 2 fees 10000`; the mint only when there is one. */
function pnlText(p: StrategyPnl): string {
  const mint = p.mint === null ? '' : ` (${p.mint})`;
  return `pnl ${p.realizedPnl}${mint} position ${p.position} cost ${p.costBasis} fills ${p.fills} fees ${p.fees}${p.tips > 0n ? ` tips ${p.tips}` : ''}${p.skipped > 0 ? ` skipped ${p.skipped}` : ''}`;
}

function summaryLine(s: StrategySummary): string {
  const orders = Object.entries(s.orders).map(([k, v]) => `${k}=${v}`).join(' ');
  return `${s.id}  ${s.strategyType.padEnd(9)} ${(s.enabled ? 'enabled' : 'paused').padEnd(8)} ${s.lastRun?.toISOString() ?? '-'}  pnl ${s.pnl.realizedPnl} fills ${s.pnl.fills}${orders === '' ? '' : `  orders: ${orders}`}`;
}

/** --params: one JSON object. */
function jsonParams(text: string): Record<string, unknown> {
  let params: unknown;
  try {
    params = JSON.parse(text);
  } catch {
    throw new TpError(ErrorCode.Usage, '--params is not JSON');
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new TpError(ErrorCode.Usage, '--params must be a JSON object');
  return params as Record<string, unknown>;
}

function needId(positionals: string[], action: string): string {
  if (positionals.length !== 2) throw new TpError(ErrorCode.Usage, `expected \`tidepool strategies ${action} <id>\``);
  return positionals[1]!;
}

export const strategiesCommand: Command = {
  name: 'strategies',
  summary: 'add, list, show, edit, pause, resume or remove grid, DCA, signal and arbitrage strategies',
  help: HELP,
  settings: databaseSchema,
  async run(argv: string[], io: CliIo) {
    const { flags, options, positionals } = parseCommandLine(argv, databaseSchema, OPTIONS);
    const action = positionals[0];
    if (!['add', 'list', 'show', 'edit', 'pause', 'resume', 'remove'].includes(action ?? '')) throw new TpError(ErrorCode.Usage, 'expected `tidepool strategies add|list|show|edit|pause|resume|remove` (see --help)');
    const { values } = loadConfig(databaseSchema, { flags, env: io.env, ...(typeof options.config === 'string' ? { file: options.config } : {}) });
    const json = options.json === true;
    // Parse before opening the database: a usage or parameter error needs none.
    let add: { type: ReturnType<typeof parseStrategyType>; params: Record<string, unknown> } | undefined;
    if (action === 'add') {
      const type = parseStrategyType(positionals[1]);
      const pairs = positionals.slice(2);
      let params: Record<string, unknown>;
      if (typeof options.params === 'string') {
        if (pairs.length > 0) throw new TpError(ErrorCode.Usage, 'give the parameters either as key=value pairs or as --params JSON, not both');
        params = jsonParams(options.params);
      } else params = parametersFromPairs(type, pairs);
      add = { type, params };
    }
    if (action === 'edit') {
      if (positionals.length < 2) throw new TpError(ErrorCode.Usage, 'expected `tidepool strategies edit <id> key=value ...` or `--params JSON`');
      if ((positionals.length > 2) === (typeof options.params === 'string')) throw new TpError(ErrorCode.Usage, 'give the changes either as key=value pairs or as --params JSON (one of the two)');
    }
    const db = await openDatabase({ url: values['database.url'], dataDir: values['database.dataDir'] });
    try {
      await migrateUp(db);
      const admin = new StrategyAdmin(db);
      const print = (value: unknown, text: string): void => void io.stdout.write(json ? `${toJson(value, 2)}\n` : `${text}\n`);
      switch (action) {
        case 'add': {
          const row = await admin.add(add!.type, add!.params, options.paused !== true);
          print(row, `added ${row.strategyType} strategy ${row.id} (${row.enabled ? 'enabled' : 'paused'})`);
          return 0;
        }
        case 'list': {
          const rows = await admin.list();
          print(rows, rows.length === 0 ? 'no strategies (tidepool strategies add --help)' : rows.map(summaryLine).join('\n'));
          return 0;
        }
        case 'show': {
          const d = await admin.show(needId(positionals, 'show'));
          const orders = d.recentOrders.map((o) => `  ${o.id}  ${(o.side ?? '-').padEnd(4)} ${o.status.padEnd(9)} price ${o.priceLevel}  filled ${o.filled}/${o.amount}`);
          print(d, [summaryLine(d), `parameters: ${toJson(d.parameters)}`, pnlText(d.pnl), ...(orders.length === 0 ? [] : ['orders:', ...orders])].join('\n'));
          return 0;
        }
        case 'edit': {
          const row = await admin.resolve(positionals[1]!);
          const changes = typeof options.params === 'string' ? jsonParams(options.params) : parametersFromPairs(row.strategyType, positionals.slice(2));
          const edited = await admin.update(row.id, changes);
          print(edited, `edited ${edited.strategyType} strategy ${edited.id}: ${toJson(edited.parameters)}`);
          return 0;
        }
        case 'pause': {
          const r = await admin.pause(needId(positionals, 'pause'));
          print(r, `paused ${r.row.strategyType} strategy ${r.row.id}${r.cancelled > 0 ? `, ${r.cancelled} open order(s) cancelled` : ''}`);
          return 0;
        }
        case 'resume': {
          const row = await admin.resume(needId(positionals, 'resume'));
          print(row, `resumed ${row.strategyType} strategy ${row.id}`);
          return 0;
        }
        default: {
          const r = await admin.remove(needId(positionals, 'remove'));
          print(r, `removed ${r.row.strategyType} strategy ${r.row.id}${r.cancelled > 0 ? ` (${r.cancelled} open order(s) cancelled first)` : ''}`);
          return 0;
        }
      }
    } finally {
      await db.close();
    }
  },
};
