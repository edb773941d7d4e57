import { createWalletServiceApp, walletServiceSchema, type WalletServiceConfig } from '../../app/index.js';
import { base58 } from '../../chain/index.js';
import { deploymentSafetySchema, loadConfig } from '../../config/index.js';
import { parseCommandLine, type CommandOption } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { createLogger } from '../../obs/index.js';
import { ChainClient } from '../../rpc/index.js';
import { databaseSchema, redisSchema, walletSchema, openPlatformState } from '../../state/index.js';

import { NATIVE_SOL, Rebalancer, WalletManager, WalletPassphrase, parseTier, type Balances, type RebalanceResult, type WalletRecord } from '../../wallets/index.js';
import { settingsHelp, startOrClose } from '../service-command.js';
import { toJson, type CliIo, type Command } from '../command.js';

const schema = { ...databaseSchema, ...redisSchema, ...walletSchema, ...walletServiceSchema, ...deploymentSafetySchema };

const OPTIONS: Record<string, CommandOption> = {
  config: { type: 'string', description: 'config file' },
  tier: { type: 'string', description: 'treasure | controller | proxy | worker' },
  count: { type: 'string', description: 'wallets to create (default 1)' },
  keypair: { type: 'string', description: 'Solana CLI keypair file to import' },
  expected: { type: 'string', multiple: true, description: 'expected balance TOKEN=ATOMS (TOKEN: SOL or a mint), repeatable or comma-separated' },
  address: { type: 'string', description: 'wallet address' },
  token: { type: 'string', description: 'SOL or a mint address' },
  amount: { type: 'string', description: 'atoms, or none' },
  'dry-run': { type: 'boolean', description: 'plan only' },
  json: { type: 'boolean', description: 'JSON output' },
};

const HELP = `Usage: tidepool wallets <action> [options]

The platform's wallets (spec 03): tiers treasure (funding source), controller, proxy, worker.
Private keys are sealed with AES-256-GCM under a key derived by scrypt from the passphrase in
TIDEPOOL_WALLET_PASSPHRASE (or the file named by --key-file / TIDEPOOL_WALLET_KEY_FILE); they are
opened only in memory to sign and never printed.

Actions:
  create --tier T [--count N] [--expected SOL=2000000000,<mint>=100000000]
  import --tier T --keypair FILE [--expected ...]      a Solana CLI keypair file (JSON array of 64 bytes)
  list [--tier T] [--json]                             addresses, tiers, expected and actual balances
  set-expected --address A --token SOL|<mint> --amount ATOMS|none
  sync [--json]                                        read SOL and SPL Token balances from the chain
  rebalance [--dry-run] [--json]                       a worker below 50% of an expected balance is
                                                       topped up by the difference from the treasure;
                                                       above 150% it returns the excess
  serve                                                the wallet service: sync every --sync-interval,
                                                       rebalance every --rebalance-interval (--rebalance
                                                       false: sync only), wallet_* metrics, /health,
                                                       /ready, /metrics on --port (8089), the
                                                       system:health:wallets heartbeat. It needs
                                                       DATABASE_URL and REDIS_URL (state shared with the
                                                       executors) unless --single-instance

Transfers are real signed transactions, each recorded in wallet_transactions; a run first settles
the transfers an interrupted run left open, so nothing is paid twice.

${settingsHelp(schema)}
`;

const U64_MAX = (1n << 64n) - 1n;

function parseAtoms(text: string, what: string): bigint {
  if (!/^\d{1,20}$/.test(text) || BigInt(text) > U64_MAX) throw new TpError(ErrorCode.Usage, `${what}: ${JSON.stringify(text)} is not an amount of atoms (a u64)`);
  return BigInt(text);
}

function parseToken(text: string): string {
  if (text === NATIVE_SOL) return text;
  try {
    base58.decodePubkey(text);
    return text;
  } catch {
    throw new TpError(ErrorCode.Usage, `token ${JSON.stringify(text)} is neither SOL nor a mint address`);
  }
}

function parseExpected(values: string[] | undefined): Balances | undefined {
  if (values === undefined) return undefined;
  const out: Balances = new Map();
  for (const part of values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '')) {
    const at = part.indexOf('=');
    if (at <= 0) throw new TpError(ErrorCode.Usage, `--expected ${JSON.stringify(part)}: expected TOKEN=ATOMS`);
    out.set(parseToken(part.slice(0, at)), parseAtoms(part.slice(at + 1), `--expected ${part.slice(0, at)}`));
  }
  return out;
}

function balancesText(b: Balances): string {
  return [...b].map(([token, amount]) => `${token === NATIVE_SOL ? 'SOL' : token}=${amount}`).join(' ') || '-';
}

function walletJson(w: WalletRecord): Record<string, unknown> {
  return {
    id: w.id,
    tier: w.tier,
    address: w.address,
    enabled: w.enabled,
    expectedBalance: Object.fromEntries(w.expectedBalance),
    actualBalance: Object.fromEntries(w.actualBalance),
    lastSync: w.lastSync?.getTime() ?? null,
    createdAt: w.createdAt.getTime(),
  };
}

function writeWallets(io: CliIo, wallets: readonly WalletRecord[], json: boolean): void {
  if (json) {
    io.stdout.write(`${toJson(wallets.map(walletJson))}\n`);
    return;
  }
  for (const w of wallets) {
    io.stdout.write(
      `${w.tier.padEnd(10)} ${w.address.padEnd(44)} ${w.enabled ? 'enabled ' : 'disabled'}  expected ${balancesText(w.expectedBalance)}  actual ${balancesText(w.actualBalance)}  synced ${w.lastSync?.toISOString() ?? '-'}\n`,
    );
  }
}

function writeRebalance(io: CliIo, r: RebalanceResult, json: boolean, dryRun: boolean): void {
  if (json) {
    io.stdout.write(
      `${toJson({
        dryRun,
        settled: r.settled.map((o) => ({ signature: o.transfer.signature, status: o.status, error: o.error ?? null })),
        transfers: r.plan.transfers.map((t) => ({ reason: t.reason, token: t.token, amount: t.amount, from: t.from.address, to: t.to.address, expected: t.expected, actual: t.actual })),
        skipped: r.plan.skipped,
        executed: r.executed.map((o) => ({ signature: o.transfer.signature, token: o.transfer.token, amount: o.transfer.amount, status: o.status, error: o.error ?? null })),
      })}\n`,
    );
    return;
  }
  for (const o of r.settled) io.stdout.write(`settled ${o.transfer.signature}: ${o.status}${o.error ? ` (${o.error})` : ''}\n`);
  if (r.plan.transfers.length === 0) io.stdout.write('nothing to rebalance\n');
  for (const t of r.plan.transfers) {
    io.stdout.write(`${dryRun ? 'would ' : ''}${t.reason.padEnd(13)} ${t.token.padEnd(44)} ${String(t.amount).padStart(20)}  ${t.from.address} -> ${t.to.address}  (expected ${t.expected}, held ${t.actual})\n`);
  }
  for (const s of r.plan.skipped) io.stdout.write(`skipped ${s.worker} ${s.token}: ${s.why}\n`);
  for (const o of r.executed) io.stdout.write(`${o.status.padEnd(9)} ${o.transfer.signature}${o.error ? ` (${o.error})` : ''}\n`);
}

export const walletsCommand: Command = {
  name: 'wallets',
  summary: 'create, import, list, sync and rebalance the platform wallets (keys encrypted at rest)',
  help: HELP,
  settings: schema,
  async run(argv, io) {
    const { flags, options, positionals } = parseCommandLine(argv, schema, OPTIONS);
    const action = positionals[0];
    if (positionals.length !== 1) throw new TpError(ErrorCode.Usage, 'expected one action: create, import, list, set-expected, sync, rebalance or serve');
    const { values } = loadConfig(schema, { flags, env: io.env, ...(typeof options.config === 'string' ? { file: options.config } : {}) });
    if (action === 'serve') {
      const logger = createLogger({ name: 'wallets', level: io.env.LOG_LEVEL });
      const app = await createWalletServiceApp(values as WalletServiceConfig, { logger });
      const endpoints = await startOrClose(app);
      logger.info({ endpoints, rebalance: values['wallets.rebalance'], singleInstance: values['deployment.singleInstance'] }, 'wallet service started');
      io.stderr.write(`tidepool wallets serve is running (${values['wallets.rebalance'] ? 'sync and rebalance' : 'sync only'}):\n  probes, metrics   ${endpoints.http}/health  ${endpoints.http}/ready  ${endpoints.http}/metrics\n`);
      return app.host.untilShutdown();
    }
    const json = options.json === true;
    const str = (name: string): string | undefined => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
    const need = (name: string): string => {
      const v = str(name);
      if (v === undefined || v === '') throw new TpError(ErrorCode.Usage, `wallets ${action} needs --${name}`);
      return v;
    };
    const passphrase = (): WalletPassphrase | undefined =>
      values['wallets.keyFile'] === '' && values['wallets.passphrase'] === ''
        ? undefined
        : WalletPassphrase.resolve({ passphrase: values['wallets.passphrase'], keyFile: values['wallets.keyFile'] });
    // Checked before anything is opened: a bad command line touches no state.
    switch (action) {
      case 'create':
      case 'import':
        parseTier(need('tier'));
        if (action === 'import') need('keypair');
        if (passphrase() === undefined) WalletPassphrase.resolve({});
        break;
      case 'set-expected':
        need('address');
        need('token');
        need('amount');
        break;
      case 'list':
      case 'sync':
      case 'rebalance':
        break;
      default:
        throw new TpError(ErrorCode.Usage, `unknown action ${JSON.stringify(action)}: expected create, import, list, set-expected, sync, rebalance or serve`);
    }
    const state = await openPlatformState(values);
    const chain = action === 'sync' || action === 'rebalance' ? new ChainClient({ url: values['rpc.url'] }) : undefined;
    const logger = createLogger({ name: 'wallets', level: io.env.LOG_LEVEL, stderr: true });
    const pass = passphrase();
    const manager = new WalletManager({
      db: state.db,
      keys: state.keys,
      ...(chain === undefined ? {} : { chain }),
      ...(pass === undefined ? {} : { passphrase: pass }),
      logger,
    });
    try {
      switch (action) {
        case 'create': {
          const count = str('count') === undefined ? 1 : Number(str('count'));
          if (!Number.isSafeInteger(count) || count < 1 || count > 1000) throw new TpError(ErrorCode.Usage, '--count must be an integer from 1 to 1000');
          const created = await manager.create(parseTier(need('tier')), count, parseExpected(options.expected as string[] | undefined));
          writeWallets(io, created, json);
          return 0;
        }
        case 'import': {
          const imported = await manager.importKeypairFile(parseTier(need('tier')), need('keypair'), parseExpected(options.expected as string[] | undefined));
          writeWallets(io, [imported], json);
          return 0;
        }
        case 'list': {
          const tier = str('tier');
          writeWallets(io, await manager.repo.list(tier === undefined ? {} : { tier: parseTier(tier) }), json);
          return 0;
        }
        case 'set-expected': {
          const amount = need('amount');
          const updated = await manager.repo.setExpected(need('address'), parseToken(need('token')), amount === 'none' ? null : parseAtoms(amount, '--amount'));
          writeWallets(io, [updated], json);
          return 0;
        }
        case 'sync': {
          const synced = await manager.sync();
          writeWallets(io, synced.map((s) => s.wallet), json);
          return 0;
        }
        default: {
          const dryRun = options['dry-run'] === true;
          const result = await new Rebalancer(manager, chain!, { logger }).run({ dryRun });
          writeRebalance(io, result, json, dryRun);
          return result.executed.every((o) => o.status === 'confirmed') ? 0 : 1;
        }
      }
    } finally {
      await chain?.close();
      await state.close();
      logger.flush();
    }
  },
};
