import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { base58 } from '../../chain/index.js';
import { encodeEntries } from '../../chain/entry-encoder.js';
import { buildKitVectors, decodeWithKit, type KitVector } from '../../chain/testing/kit-vectors.js';
import { encodeAmmInfo, withAmmVaultAmounts } from '../../dex/amm/amm-info.js';
import { quoteConstantProduct } from '../../dex/amm/constant-product.js';
import { DEFAULT_PROGRAM_IDS } from '../../dex/program-ids.js';
import { quoteSwap } from '../../dex/quote.js';
import { createDecoderRegistry } from '../../dex/registry.js';
import { Dex, SwapMode, type ConcentratedPool, type TickArray } from '../../dex/types.js';
import { encodeWhirlpoolTickArray } from '../../dex/whirlpool/tick-array.js';
import { encodeWhirlpool } from '../../dex/whirlpool/whirlpool-account.js';
import { whirlpoolSqrtPriceAtTick } from '../../dex/concentrated/tick-math.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const VAULT_A = 'DQyrAcCrDXQ7NeoqGgDCZwBvWDcYmFCjSb9JtteuvPpz';
const VAULT_B = 'HLmqeL62xR1QoZ1HKKbXRrdN1p3phKpxRMb2VVopvBBz';

async function cli(argv: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += String(c)));
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: out, stderr: err, stdin: Readable.from([Buffer.from(stdin)]), env: {} };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'tp-cli-'));
function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A getAccountInfo response, as `curl` against a node returns it. */
function accountInfo(data: Uint8Array, owner: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    result: {
      context: { slot: 5 },
      value: { data: [Buffer.from(data).toString('base64'), 'base64'], executable: false, lamports: 1, owner, rentEpoch: 0, space: data.length },
    },
  });
}

describe('tidepool decode entries', () => {
  let vectors: KitVector[];
  let payload: Uint8Array;
  beforeAll(async () => {
    vectors = (await buildKitVectors(6, 9)).slice(0, 12);
    payload = encodeEntries([
      { numHashes: 12n, hash: new Uint8Array(32).fill(1), transactions: vectors.slice(0, 5).map((v) => v.bytes) },
      { numHashes: 1n, hash: new Uint8Array(32).fill(2), transactions: [] },
      { numHashes: 3n, hash: new Uint8Array(32).fill(3), transactions: vectors.slice(5).map((v) => v.bytes) },
    ]);
  });

  it('prints one JSON line per transaction, field for field as @solana/kit decodes it', async () => {
    const { code, stdout } = await cli(['decode', 'entries', file('entries.bin', payload), '--slot', '18446744073709551615']);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(vectors.length);
    lines.forEach((line, i) => {
      const kit = decodeWithKit(vectors[i]!.bytes);
      expect(line.slot).toBe('18446744073709551615');
      expect(line.entryIndex).toBe(i < 5 ? 0 : 2);
      expect(line.signature).toBe(kit.signatures[0]);
      expect(line.version).toBe(kit.version);
      expect(line.header).toEqual(kit.header);
      expect(line.accountKeys).toEqual(kit.accountKeys);
      expect(line.addressTableLookups).toEqual(kit.addressTableLookups);
      expect(line.programIds).toEqual(kit.programIds);
      expect(line.recentBlockhash).toBe(kit.recentBlockhash);
    });
  });

  it('reads base64 from standard input', async () => {
    const { code, stdout } = await cli(['decode', 'entries', '-', '--encoding', 'base64'], Buffer.from(payload).toString('base64'));
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(vectors.length);
  });

  it('fails a malformed payload with its reason and offset, printing nothing', async () => {
    const truncated = payload.subarray(0, payload.length - 10);
    const { code, stdout, stderr } = await cli(['decode', 'entries', file('cut.bin', truncated)]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/malformed entry batch: truncated at offset \d+ \[TP_ERR_ENTRY_MALFORMED\]/);
  });

  it('rejects bad arguments with a usage error', async () => {
    expect((await cli(['decode', 'entries', file('e.bin', payload), '--slot', '-1'])).code).toBe(2);
    expect((await cli(['decode', 'blocks', 'x'])).code).toBe(2);
    expect((await cli(['decode', 'entries', '-', '--encoding', 'base64'], '!!!')).stderr).toContain('not valid base64');
    expect((await cli(['decode', 'entries', '/nonexistent'])).stderr).toContain('cannot read /nonexistent');
  });
});

/** A Raydium AMM v4 AmmInfo of WSOL/USDC with its vaults at VAULT_A / VAULT_B (need_take_pnl 7 / 11). */
function ammInfo(): Uint8Array {
  return encodeAmmInfo({
    status: 6n, nonce: 254n, coinDecimals: 9n, pcDecimals: 6n, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n,
    needTakePnlCoin: 7n, needTakePnlPc: 11n, coinVault: VAULT_A, pcVault: VAULT_B, coinMint: WSOL, pcMint: USDC,
  });
}

/** An SPL Token account of `mint` holding `amount` (165 bytes, initialized). */
function tokenAccount(mint: string, amount: bigint): Uint8Array {
  const data = new Uint8Array(165);
  data.set(base58.decodePubkey(mint), 0);
  new DataView(data.buffer).setBigUint64(64, amount, true);
  data[108] = 1;
  return data;
}

describe('tidepool decode account', () => {
  it('decodes a pool from a getAccountInfo response, reading the owner from it', async () => {
    const data = ammInfo();
    const { code, stdout } = await cli(['decode', 'account', file('amm.json', accountInfo(data, DEFAULT_PROGRAM_IDS[Dex.Amm])), '--address', POOL]);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as { kind: string; pool: Record<string, unknown> };
    expect(json.kind).toBe('pool');
    expect(json.pool).toMatchObject({
      dex: 'dexa_amm', address: POOL, tokenA: WSOL, tokenB: USDC, vaultA: VAULT_A, vaultB: VAULT_B,
      needTakePnlA: '7', needTakePnlB: '11', feeNumerator: '25', feeDenominator: '10000', decimalsA: 9, decimalsB: 6,
    });
  });

  it('decodes raw bytes with --owner and names an unknown owner or a wrong size', async () => {
    const data = ammInfo();
    const raw = file('amm.bin', data);
    expect((await cli(['decode', 'account', raw, '--owner', DEFAULT_PROGRAM_IDS[Dex.Amm]])).code).toBe(0);
    const unknown = await cli(['decode', 'account', raw, '--owner', WSOL]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('TP_ERR_UNKNOWN_OWNER');
    const short = await cli(['decode', 'account', file('short.bin', data.subarray(0, 700)), '--owner', DEFAULT_PROGRAM_IDS[Dex.Amm]]);
    expect(short.stderr).toContain('TP_ERR_ACCOUNT_SIZE');
    expect((await cli(['decode', 'account', raw])).stderr).toContain('--owner');
  });
});

describe('tidepool swap', () => {
  it('quotes a dexa_amm (AMM v4) swap from its vaults exactly as the constant-product math does', async () => {
    const data = ammInfo();
    const account = file('amm-swap.json', accountInfo(data, DEFAULT_PROGRAM_IDS[Dex.Amm]));
    const vaults = ['--vault', file('vault-b.bin', tokenAccount(USDC, 150_000_000_011n)), '--vault', file('vault-a.bin', tokenAccount(WSOL, 1_000_000_000_007n))];
    const withoutVaults = await cli(['swap', '--account', account, '--input', WSOL, '--amount', '2500000000']);
    expect(withoutVaults.code).toBe(1);
    expect(withoutVaults.stdout).toContain('insufficient_liquidity_data');
    const { code, stdout } = await cli(['swap', '--account', account, '--input', WSOL, '--amount', '2500000000', ...vaults]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    const pool = createDecoderRegistry().decodeAccount(DEFAULT_PROGRAM_IDS[Dex.Amm], data);
    if (pool.kind !== 'pool' || pool.pool.dex !== Dex.Amm) throw new Error('fixture');
    // Reserves: the vaults less need_take_pnl, 1e12 and 1.5e11.
    const withVaults = withAmmVaultAmounts(pool.pool, 1_000_000_000_007n, 150_000_000_011n);
    expect([withVaults.reserveA, withVaults.reserveB]).toEqual([1_000_000_000_000n, 150_000_000_000n]);
    const expected = quoteConstantProduct(withVaults, { aToB: true, mode: SwapMode.ExactIn, amount: 2_500_000_000n });
    if (!expected.ok) throw new Error('fixture quote');
    expect(out).toMatchObject({
      dex: 'dexa_amm',
      inputMint: WSOL,
      outputMint: USDC,
      inputAmount: '2500000000',
      outputAmount: expected.amountOut.toString(),
      fee: expected.fee.toString(),
      feeMint: WSOL,
    });
    expect(out.priceImpact).toBeCloseTo(expected.priceImpact, 12);

    const exactOut = JSON.parse((await cli(['swap', '--account', account, '--input', USDC, '--amount', '1000000000', '--mode', 'ExactOut', ...vaults])).stdout) as Record<string, string>;
    expect(exactOut.outputAmount).toBe('1000000000');
    expect(exactOut.outputMint).toBe(WSOL);
  });

  describe('on a Whirlpool with tick arrays', () => {
    const spacing = 64;
    const tick = -16_000; // ~0.2 raw price: e.g. USDC (6) per SOL (9) scaled
    const start = Math.floor(tick / (spacing * 88)) * spacing * 88;
    const liquidity = 5_000_000_000_000n;
    const pool: ConcentratedPool = {
      dex: Dex.Whirlpool,
      address: POOL,
      tokenA: WSOL,
      tokenB: USDC,
      vaultA: VAULT_A,
      vaultB: VAULT_B,
      sqrtPrice: whirlpoolSqrtPriceAtTick(tick),
      tick,
      tickSpacing: spacing,
      liquidity,
      feeRate: 3000,
    };
    // Liquidity from the array below to the array above the current one.
    const arrays: TickArray[] = [start - spacing * 88, start, start + spacing * 88].map((s, i) => ({
      dex: Dex.Whirlpool,
      pool: POOL,
      startTickIndex: s,
      ticks: Array.from({ length: 88 }, (_, j) => {
        const edge = (i === 0 && j === 0) || (i === 2 && j === 87);
        const net = i === 0 ? liquidity : -liquidity;
        return { index: s + j * spacing, initialized: edge, liquidityNet: edge ? net : 0n, liquidityGross: edge ? liquidity : 0n };
      }),
    }));
    const owner = DEFAULT_PROGRAM_IDS[Dex.Whirlpool];
    const poolFile = file('whirlpool.json', accountInfo(encodeWhirlpool(pool), owner));
    const tickFiles = arrays.map((a, i) => file(`ta${i}.json`, accountInfo(encodeWhirlpoolTickArray({ pool: POOL, startTickIndex: a.startTickIndex, ticks: a.ticks }), owner)));

    it('crosses tick arrays and matches quoteSwap', async () => {
      const amount = 1_000_000_000_000n; // 1,000 SOL: ~510 SOL moves the price out of the current array
      const args = ['swap', '--account', poolFile, '--input', WSOL, '--amount', amount.toString()];
      const { code, stdout } = await cli([...args, ...tickFiles.flatMap((f) => ['--ticks', f])]);
      expect(code).toBe(0);
      const expected = quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount }, { tickArrays: arrays });
      if (!expected.ok) throw new Error(`fixture quote: ${expected.message}`);
      const out = JSON.parse(stdout) as Record<string, unknown>;
      expect(out.outputAmount).toBe(expected.amountOut.toString());
      expect(out.fee).toBe(expected.fee.toString());
      expect(out.tickAfter).toBe(expected.tickAfter);
      expect(expected.tickAfter).toBeLessThan(start); // it did cross into the array below
    });

    it('answers insufficient_liquidity_data, not a number, without the tick arrays the swap needs', async () => {
      const { code, stdout } = await cli(['swap', '--account', poolFile, '--input', WSOL, '--amount', '1000000000000', '--ticks', tickFiles[1]!]);
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ error: { code: 'insufficient_liquidity_data' } });
    });
  });

  it('rejects a mint the pool does not trade and a bad amount', async () => {
    const data = ammInfo();
    const account = file('amm2.json', accountInfo(data, DEFAULT_PROGRAM_IDS[Dex.Amm]));
    expect((await cli(['swap', '--account', account, '--input', POOL, '--amount', '1'])).stderr).toContain('TP_ERR_UNKNOWN_MINT');
    expect((await cli(['swap', '--account', account, '--input', WSOL, '--amount', '18446744073709551616'])).stderr).toContain('unsigned 64-bit');
    expect((await cli(['swap', '--account', account, '--input', WSOL])).stderr).toContain('--amount is required');
  });
});

describe('the tidepool binary', () => {
  const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');
  it.skipIf(!existsSync(bin))('runs as a process and lists its commands', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help']);
    expect(stdout).toContain('decode');
    expect(stdout).toContain('swap');
  });
});
