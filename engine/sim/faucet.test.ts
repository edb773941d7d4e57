import { address, createSolanaRpc, devnet, generateKeyPairSigner, lamports as toLamports, signature as toSignature } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { associatedTokenAddress } from '../chain/index.js';
import { parseEntries } from '../chain/native-parser.js';
import { decodeEntryBatch } from '../chain/transaction-view.js';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/logger.js';
import type { EntryBatch } from './chain-backend.js';
import { FAUCET_LAMPORTS, TOKEN_FAUCET_CAP_USD } from './faucet.js';
import { LAMPORTS_PER_SOL, TOKEN_PROGRAM_ID, USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { mintSupply } from './spl-token.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from './simulator.js';

/**
 * The faucets over the simulator's real JSON-RPC: requestAirdrop through @solana/kit, unchanged,
 * and simRequestTokens; each grant a real transaction that lands in the next slot, is in the entry
 * stream and has a status and a getTransaction record. The chain is manual and has no generated
 * flow, so every slot holds only what the test sent.
 */

let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: {
      seed: '11',
      'rpc-port': '0',
      'ws-port': '0',
      'stream-port': '0',
      'geyser-port': '0',
      'http-port': '0',
      'tx-rate': '0',
      tokens: '2',
      'pools-per-kind': '1',
      'faucet-cap-sol': '50',
    },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'faucet-test', level: 'silent' }) });
  endpoints = await sim.start();
  // Kit types requestAirdrop for test clusters only: the simulator is one.
  rpc = createSolanaRpc(devnet(endpoints.rpc));
  sim.chain.advanceSlot(2);
});

afterAll(async () => {
  await sim.close();
});

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

async function call(method: string, params?: unknown): Promise<RpcAnswer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params !== undefined ? { params } : {}) });
  const res = await fetch(endpoints.rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return (await res.json()) as RpcAnswer;
}

/** Advances `slots` slots and returns the signatures of every transaction their entries carry. */
function landInEntries(slots: number): Set<string> {
  const batches: EntryBatch[] = [];
  const off = sim.chain.onEntries((b) => batches.push(b));
  sim.chain.advanceSlot(slots);
  off();
  return new Set(batches.flatMap((b) => decodeEntryBatch(b.entries, b.slot, parseEntries).map((tx) => tx.signature())));
}

describe('requestAirdrop', () => {
  it('funds a new wallet with a real transfer from the faucet, seen by kit, the entry stream and getTransaction', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    const faucet = sim.chain.faucet.address;
    const signature = await rpc.requestAirdrop(wallet, toLamports(2n * LAMPORTS_PER_SOL), { commitment: 'confirmed' }).send();
    expect(typeof signature).toBe('string');

    const landed = landInEntries(1);
    expect(landed.has(signature)).toBe(true);
    expect((await rpc.getBalance(wallet, { commitment: 'processed' }).send()).value).toBe(2n * LAMPORTS_PER_SOL);
    const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();
    expect(statuses[0]).toMatchObject({ err: null, confirmationStatus: 'processed' });

    sim.chain.advanceSlot(1);
    const tx = await rpc.getTransaction(signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(tx).not.toBeNull();
    expect(tx!.meta!.err).toBeNull();
    const keys = tx!.transaction.message.accountKeys;
    expect(keys[0]).toBe(faucet);
    expect(keys[1]).toBe(wallet);
    expect(tx!.meta!.preBalances[1]).toBe(0n);
    expect(tx!.meta!.postBalances[1]).toBe(2n * LAMPORTS_PER_SOL);
    expect(tx!.meta!.postBalances[0]).toBe(tx!.meta!.preBalances[0]! - 2n * LAMPORTS_PER_SOL - 5000n);
    expect(tx!.meta!.preBalances[0]).toBe(FAUCET_LAMPORTS);
  });

  it('adds to an existing balance and signs with the blockhash it is given', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    const blockhash = sim.chain.latestBlockhash('processed').blockhash;
    const first = await rpc.requestAirdrop(wallet, toLamports(LAMPORTS_PER_SOL)).send();
    sim.chain.advanceSlot(1);
    const second = (await call('requestAirdrop', [wallet, 3 * Number(LAMPORTS_PER_SOL), { recentBlockhash: blockhash }])).result as string;
    expect(second).not.toBe(first);
    sim.chain.advanceSlot(1);
    expect((await rpc.getBalance(wallet, { commitment: 'processed' }).send()).value).toBe(4n * LAMPORTS_PER_SOL);
  });

  it('refuses bad parameters with -32602 as a node does, and a request over the cap with -32603', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    expect((await call('requestAirdrop', ['not-a-key', 1000])).error).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
    expect((await call('requestAirdrop', ['abc', 1000])).error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect((await call('requestAirdrop', [wallet, -1])).error).toEqual({ code: -32602, message: 'Invalid params: invalid value: integer `-1`, expected u64.' });
    expect((await call('requestAirdrop', [wallet, 1.5])).error).toEqual({ code: -32602, message: 'Invalid params: invalid type: floating point `1.5`, expected u64.' });
    expect((await call('requestAirdrop', [wallet, '1000'])).error).toEqual({ code: -32602, message: 'Invalid params: invalid type: string "1000", expected u64.' });
    expect((await call('requestAirdrop', [wallet])).error).toEqual({ code: -32602, message: '`params` should have at least 2 argument(s)' });
    expect((await call('requestAirdrop', [wallet, 1000, { recentBlockhash: 'xyz' }])).error).toEqual({ code: -32602, message: 'WrongSize' });
    // faucet-cap-sol 50 in this simulator.
    expect((await call('requestAirdrop', [wallet, 51 * Number(LAMPORTS_PER_SOL)])).error).toEqual({
      code: -32603,
      message: 'Internal error',
      data: 'request too large; req: ◎51, cap: ◎50',
    });
    await expect(rpc.requestAirdrop(address(wallet), toLamports(51n * LAMPORTS_PER_SOL)).send()).rejects.toThrow();
    sim.chain.advanceSlot(1);
    expect((await rpc.getBalance(wallet, { commitment: 'processed' }).send()).value).toBe(0n);
  });

  it('is a transaction like any other: an amount below the rent-exempt minimum for a new account fails on chain', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    const signature = await rpc.requestAirdrop(wallet, toLamports(1_000n)).send();
    sim.chain.advanceSlot(1);
    const { value } = await rpc.getSignatureStatuses([toSignature(signature)]).send();
    expect(value[0]!.err).toEqual({ InsufficientFundsForRent: { account_index: 1n } });
    expect((await rpc.getBalance(wallet, { commitment: 'processed' }).send()).value).toBe(0n);
  });
});

describe('simRequestTokens', () => {
  const tokenBalance = async (account: string): Promise<string> => (await rpc.getTokenAccountBalance(address(account), { commitment: 'processed' }).send()).value.amount;

  it('creates the owner\'s associated token account and mints the amount into it, signed by the mint authority', async () => {
    const owner = (await generateKeyPairSigner()).address;
    const supplyBefore = mintSupply(sim.chain.getAccount(USDC_MINT)!.data);
    const answer = await call('simRequestTokens', [owner, 'usdc', '250000000']);
    const grant = answer.result as { signature: string; tokenAccount: string; mint: string; symbol: string; amount: string };
    expect(grant).toMatchObject({ tokenAccount: associatedTokenAddress(owner, USDC_MINT), mint: USDC_MINT, symbol: 'USDC', amount: '250000000' });
    expect(sim.chain.getAccount(grant.tokenAccount)).toBeNull();

    expect(landInEntries(1).has(grant.signature)).toBe(true);
    expect(await tokenBalance(grant.tokenAccount)).toBe('250000000');
    const { value: accounts } = await rpc.getTokenAccountsByOwner(owner, { programId: address(TOKEN_PROGRAM_ID) }, { encoding: 'base64', commitment: 'processed' }).send();
    expect(accounts.map((a) => a.pubkey)).toEqual([grant.tokenAccount]);
    expect(mintSupply(sim.chain.getAccount(USDC_MINT)!.data)).toBe(supplyBefore + 250_000_000n);

    // Again, by mint address: the account exists and is credited.
    const again = (await call('simRequestTokens', [owner, USDC_MINT, 1_000_000])).result as { signature: string };
    sim.chain.advanceSlot(2);
    expect(await tokenBalance(grant.tokenAccount)).toBe('251000000');
    const tx = await rpc.getTransaction(toSignature(again.signature), { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(tx!.meta!.err).toBeNull();
    expect(tx!.meta!.postTokenBalances!.find((b) => b.owner === owner)!.uiTokenAmount.amount).toBe('251000000');
  });

  it('grants every SPL Token mint of the simulator, wrapped SOL by wrapping the faucet\'s lamports', async () => {
    const owner = (await generateKeyPairSigner()).address;
    const grants: { tokenAccount: string; mint: string }[] = [];
    for (const token of sim.chain.tokens().filter((t) => t.programId === undefined)) {
      const answer = await call('simRequestTokens', [owner, token.symbol, (10n ** BigInt(token.decimals)).toString()]);
      expect(answer.error).toBeUndefined();
      grants.push(answer.result as { tokenAccount: string; mint: string });
    }
    expect(grants.map((g) => g.mint)).toContain(WSOL_MINT);
    sim.chain.advanceSlot(1);
    for (const grant of grants) {
      const decimals = sim.chain.token(grant.mint)!.decimals;
      expect(await tokenBalance(grant.tokenAccount)).toBe((10n ** BigInt(decimals)).toString());
    }
  });

  it('refuses what it cannot grant with -32602 and a reason, and a real node does not know the method', async () => {
    const owner = (await generateKeyPairSigner()).address;
    const refused = async (params: unknown[]): Promise<string> => {
      const { error } = await call('simRequestTokens', params);
      expect(error?.code).toBe(-32602);
      return error!.message;
    };
    expect(await refused([owner, 'NOPE', 5])).toMatch(/no token "NOPE" on this simulator; its tokens: SOL .*USDC/);
    expect(await refused([owner, 'TOLL', 5])).toMatch(/Token-2022/);
    expect(await refused([owner, 'USDC', 0])).toMatch(/from 1 to/);
    expect(await refused([owner, 'USDC', (BigInt(TOKEN_FAUCET_CAP_USD + 1) * 1_000_000n).toString()])).toMatch(/request too large/);
    expect(await refused(['bad', 'USDC', 5])).toBe('Invalid param: WrongSize');
    expect(await refused([owner, 'USDC', 'ten'])).toMatch(/invalid type: string "ten"/);
    expect(await refused([owner, 'USDC'])).toBe('`params` should have at least 3 argument(s)');
  });
});
