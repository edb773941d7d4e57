import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { associatedTokenAddress, generateKeypair } from '../../chain/index.js';
import { loadConfig } from '../../config/index.js';
import { ErrorCode, isTpError } from '../../errors.js';
import { createLogger } from '../../obs/index.js';
import { USDC_MINT, createSimulator, simSchema, type Simulator } from '../../sim/index.js';
import type { CliIo } from '../command.js';
import { simCommand } from './sim.js';

/** `tidepool sim faucet` against a running simulator (its clock running, no generated flow). */

let sim: Simulator;
let rpcUrl: string;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '5', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '1', 'pools-per-kind': '1', 'slot-ms': '40' },
  }).values;
  sim = createSimulator(config, { logger: createLogger({ name: 'sim-faucet-cli-test', level: 'silent' }) });
  rpcUrl = (await sim.start()).rpc;
});

afterAll(async () => {
  await sim.close();
});

async function faucet(...args: string[]): Promise<{ code: number; out: Record<string, unknown> }> {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c) => (text += String(c)));
  const io: CliIo = { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} };
  const code = await simCommand.run(['faucet', '--rpc-url', rpcUrl, ...args], io);
  return { code, out: JSON.parse(text) as Record<string, unknown> };
}

async function refusal(...args: string[]): Promise<{ code: string; message: string }> {
  try {
    await faucet(...args);
  } catch (err) {
    if (isTpError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the faucet did not refuse');
}

describe('tidepool sim faucet', () => {
  it('airdrops SOL and prints the confirmed grant with the new balance', async () => {
    const wallet = generateKeypair().address;
    const { code, out } = await faucet('--wallet', wallet, '--sol', '--amount', '1500000000');
    expect(code).toBe(0);
    expect(out).toMatchObject({ wallet, mint: 'SOL', amount: '1500000000', balance: '1500000000' });
    expect(sim.chain.signatureStatus(out.signature as string)?.err).toBeNull();
    expect(sim.chain.getAccount(wallet, 'confirmed')!.lamports).toBe(1_500_000_000n);
  });

  it('creates the wallet\'s token account and mints into it, by symbol', async () => {
    const wallet = generateKeypair().address;
    const { out } = await faucet('--wallet', wallet, '--mint', 'usdc', '--amount', '5000000');
    expect(out).toMatchObject({ wallet, mint: USDC_MINT, tokenAccount: associatedTokenAddress(wallet, USDC_MINT), amount: '5000000', balance: '5000000' });
    const again = await faucet('--wallet', wallet, '--mint', USDC_MINT, '--amount', '7');
    expect(again.out.balance).toBe('5000007');
  });

  it('names what is wrong: usage, and the simulator\'s refusal', async () => {
    const wallet = generateKeypair().address;
    expect(await refusal('--wallet', wallet, '--amount', '5')).toMatchObject({ code: ErrorCode.Usage, message: expect.stringContaining('exactly one of --sol and --mint') });
    expect(await refusal('--wallet', 'nope', '--sol', '--amount', '5')).toMatchObject({ code: ErrorCode.Usage });
    expect(await refusal('--wallet', wallet, '--sol', '--amount', '-5')).toMatchObject({ code: ErrorCode.Usage });
    expect(await refusal('--wallet', wallet, '--sol', '--amount', '2000000000000')).toMatchObject({
      code: ErrorCode.TransferFailed,
      message: expect.stringContaining('Internal error (-32603) (request too large; req: ◎2000, cap: ◎1000)'),
    });
    expect(await refusal('--wallet', wallet, '--mint', 'TOLL', '--amount', '5')).toMatchObject({ code: ErrorCode.TransferFailed, message: expect.stringContaining('Token-2022') });
    // Below the rent-exempt minimum for a new account: the transaction lands and fails.
    expect(await refusal('--wallet', wallet, '--sol', '--amount', '10')).toMatchObject({ code: ErrorCode.TransferFailed, message: expect.stringContaining('InsufficientFundsForRent') });
  });
});
