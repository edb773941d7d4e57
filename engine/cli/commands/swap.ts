import { base58 } from '../../chain/index.js';
import { parseCommandLine } from '../../config/index.js';
import { withAmmConfig, withAmmVaultAccounts, type FetchedAccount } from '../../dex/index.js';
import { directionFor, quoteSwap } from '../../dex/index.js';
import { createDecoderRegistry, type DecodedAccount } from '../../dex/index.js';
import { Dex, SwapMode, type BinArray, type DecodedPool, type SwapContext, type TickArray } from '../../dex/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { readAccountInput } from '../account-input.js';
import { type CliIo, type Command, toJson } from '../command.js';

const HELP = `Usage:
  tidepool swap --account FILE --input MINT --amount N [--output MINT] [--mode ExactIn|ExactOut]
                [--ticks FILE]... [--amm-config FILE] [--vault FILE --vault FILE] [--owner PROGRAM_ID] [--encoding raw|base64|hex] [--now SECONDS]

Quotes a swap on one pool with the protocol's exact integer math and prints JSON:
  {pool, dex, mode, inputMint, outputMint, inputAmount, outputAmount, fee, feeMint, priceImpact, ...}
Amounts are raw atoms as decimal strings. When the pool cannot answer (for example a swap that
would leave the ticks or bins supplied: "insufficient_liquidity_data"), it prints
{"error":{"code","message"}} and exits 1.

  --account FILE    the pool account: a getAccountInfo response, its value, a 'solana account
                    --output json' dump, or bytes (then --owner is needed)
  --input MINT      the mint sold; --output defaults to the pool's other token
  --amount N        input atoms (ExactIn, default) or output atoms (ExactOut)
  --ticks FILE      a tick array (dexa_clmm, dexc_whirlpool) or bin array (dexb_dlmm) account;
                    repeat for as many as the swap may cross. Without them a concentrated or bin
                    pool is quoted only where its current data suffices.
  --amm-config FILE dexa_clmm only: the pool's AmmConfig account, which holds the fee rate
  --vault FILE      dexa_amm (Raydium AMM v4) only, twice: the pool's coin and pc vault token
                    accounts (any order); the reserves are their balances less need_take_pnl.
                    Without them an AMM v4 pool is refused (insufficient_liquidity_data).
  --now SECONDS     dexb_dlmm only: Unix time for the volatility decay (default: the pool's last update)
`;

const OPTIONS = {
  account: { type: 'string', description: 'pool account file' },
  ticks: { type: 'string', multiple: true, description: 'tick or bin array files' },
  'amm-config': { type: 'string', description: 'Raydium AmmConfig file' },
  vault: { type: 'string', multiple: true, description: 'AMM v4 vault token account files' },
  input: { type: 'string', description: 'input mint' },
  output: { type: 'string', description: 'output mint' },
  amount: { type: 'string', description: 'amount' },
  mode: { type: 'string', description: 'ExactIn or ExactOut' },
  owner: { type: 'string', description: 'owner program id' },
  encoding: { type: 'string', description: 'input encoding' },
  now: { type: 'string', description: 'unix seconds' },
} as const;

const U64_MAX = 0xffff_ffff_ffff_ffffn;

function required(options: Record<string, unknown>, name: string): string {
  const v = options[name];
  if (typeof v !== 'string' || v === '') throw new TpError(ErrorCode.Usage, `--${name} is required\n\n${HELP}`);
  return v;
}

function parseU64(text: string, name: string): bigint {
  if (!/^\d{1,20}$/.test(text) || BigInt(text) > U64_MAX) {
    throw new TpError(ErrorCode.Usage, `--${name} must be an unsigned 64-bit integer, got ${JSON.stringify(text)}`);
  }
  return BigInt(text);
}

async function decodeFile(path: string, options: Record<string, unknown>, io: CliIo, poolSpacing?: number): Promise<DecodedAccount> {
  const account = await readAccountInput(path, (options.encoding as string | undefined) ?? 'raw', io);
  const owner = (options.owner as string | undefined) ?? account.owner;
  if (owner === undefined) throw new TpError(ErrorCode.Usage, `${path}: the owner program is unknown: pass --owner PROGRAM_ID`);
  const registry = createDecoderRegistry(poolSpacing === undefined ? {} : { tickSpacingOf: () => poolSpacing });
  return registry.decodeAccount(owner, account.data, account.address);
}

export const swapCommand: Command = {
  name: 'swap',
  summary: 'quote a swap on one pool account with exact integer math (inspection)',
  help: HELP,
  async run(argv, io) {
    const { options, positionals } = parseCommandLine(argv, {}, OPTIONS);
    if (positionals.length > 0) throw new TpError(ErrorCode.Usage, `unexpected argument ${positionals[0]}\n\n${HELP}`);
    const mode = (options.mode as string | undefined) ?? SwapMode.ExactIn;
    if (mode !== SwapMode.ExactIn && mode !== SwapMode.ExactOut) {
      throw new TpError(ErrorCode.Usage, `--mode must be ExactIn or ExactOut, got ${JSON.stringify(mode)}`);
    }
    const amount = parseU64(required(options, 'amount'), 'amount');
    const input = required(options, 'input');

    const decoded = await decodeFile(required(options, 'account'), options, io);
    if (decoded.kind !== 'pool') throw new TpError(ErrorCode.Usage, `--account holds a ${decoded.kind}, not a pool`);
    let pool: DecodedPool = decoded.pool;
    const output = (options.output as string | undefined) ?? (input === pool.tokenA ? pool.tokenB : pool.tokenA);
    const aToB = directionFor(pool, input, output);

    const spacing = pool.dex === Dex.Clmm || pool.dex === Dex.Whirlpool ? pool.tickSpacing : undefined;
    const tickArrays: TickArray[] = [];
    const binArrays: BinArray[] = [];
    for (const file of (options.ticks as string[] | undefined) ?? []) {
      const extra = await decodeFile(file, options, io, spacing);
      if (extra.kind === 'tickArray') tickArrays.push(extra.tickArray);
      else if (extra.kind === 'binArray') binArrays.push(extra.binArray);
      else throw new TpError(ErrorCode.Usage, `${file} holds a ${extra.kind}, not a tick or bin array`);
    }
    const configFile = options['amm-config'] as string | undefined;
    if (configFile !== undefined) {
      const config = await decodeFile(configFile, options, io);
      if (config.kind !== 'ammConfig' || pool.dex !== Dex.Clmm) {
        throw new TpError(ErrorCode.Usage, '--amm-config takes a dexa_clmm AmmConfig account, for a dexa_clmm pool');
      }
      pool = withAmmConfig(pool, config.ammConfig);
    }
    const vaultFiles = (options.vault as string[] | undefined) ?? [];
    if (vaultFiles.length > 0) {
      if (pool.dex !== Dex.Amm || pool.vaultA === undefined || vaultFiles.length !== 2) {
        throw new TpError(ErrorCode.Usage, '--vault takes the two vault token accounts of a dexa_amm (Raydium AMM v4) pool');
      }
      const vaults: FetchedAccount[] = [];
      for (const file of vaultFiles) {
        const account = await readAccountInput(file, (options.encoding as string | undefined) ?? 'raw', io);
        vaults.push({ owner: account.owner ?? '', data: account.data });
      }
      // Coin first: the vault whose token account mint (bytes 0..32) is token A.
      const coinFirst = vaults[0]!.data.length >= 32 && base58.encode(vaults[0]!.data.subarray(0, 32)) === pool.tokenA;
      const [coin, pc] = coinFirst ? [vaults[0], vaults[1]] : [vaults[1], vaults[0]];
      const withVaults = withAmmVaultAccounts(pool, coin, pc);
      if (typeof withVaults === 'string') throw new TpError(ErrorCode.Usage, `--vault: ${withVaults}`);
      pool = withVaults;
    }
    const ctx: SwapContext = { tickArrays, binArrays };
    const now = options.now as string | undefined;
    if (now !== undefined) ctx.nowSeconds = parseU64(now, 'now');

    const result = quoteSwap(pool, { aToB, mode, amount }, ctx);
    if (!result.ok) {
      io.stdout.write(`${toJson({ error: { code: result.reason, message: result.message } }, 2)}\n`);
      return 1;
    }
    const { sqrtPriceAfter, tickAfter, activeIdAfter, feeInOutput } = result;
    io.stdout.write(
      `${toJson(
        {
          pool: pool.address ?? null,
          dex: pool.dex,
          mode,
          inputMint: input,
          outputMint: output,
          inputAmount: result.amountIn,
          outputAmount: result.amountOut,
          fee: result.fee,
          feeMint: feeInOutput ? output : input,
          priceImpact: result.priceImpact,
          ...(sqrtPriceAfter === undefined ? {} : { sqrtPriceAfter }),
          ...(tickAfter === undefined ? {} : { tickAfter }),
          ...(activeIdAfter === undefined ? {} : { activeIdAfter }),
        },
        2,
      )}\n`,
    );
    return 0;
  },
};
