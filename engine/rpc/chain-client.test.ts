import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { ChainClient } from './chain-client.js';
import { eventually } from '../rpc-proxy/testing.js';
import { SOL, slippageFailingSubmission, startSimulator, swapSubmission, traderBalances, traderOf } from '../executor/testing/submitter-sim.js';

/** ChainClient's reads an executor needs, against the simulator over real JSON-RPC. */

let sim: Simulator;
let endpoints: SimEndpoints;
let client: ChainClient;

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator());
  client = new ChainClient({ url: endpoints.rpc });
});

afterAll(async () => {
  await client?.close();
  await sim?.close();
});

describe('ChainClient', () => {
  it("getTransaction: slot, fee and the owner's lamport and per-mint token changes, as the chain moved them", async () => {
    const trader = traderOf(sim.chain, 0);
    const { submission } = swapSubmission(sim.chain, trader, SOL / 2n);
    const before = traderBalances(sim.chain, trader);
    const signature = await client.sendTransaction(submission.transaction.bytes);
    await eventually(() => ['confirmed', 'finalized'].includes(sim.chain.signatureStatus(signature)?.confirmationStatus ?? ''), 'the swap confirmed', 10_000);
    const landed = await client.getTransaction(signature, trader.keypair.address);
    expect(landed).not.toBeNull();
    const after = traderBalances(sim.chain, trader);
    expect(landed!.err).toBeNull();
    expect(landed!.slot).toBe(sim.chain.signatureStatus(signature)!.slot);
    expect(landed!.fee).toBeGreaterThanOrEqual(5000n);
    expect(landed!.lamports).toBe(after.lamports - before.lamports);
    expect(landed!.tokens.get(WSOL_MINT)).toBe(after.sol - before.sol);
    expect(landed!.tokens.get(WSOL_MINT)).toBe(-(SOL / 2n));
    expect(landed!.tokens.get(USDC_MINT)).toBe(after.usdc - before.usdc);
    expect(landed!.tokens.get(USDC_MINT)! > 0n).toBe(true);
    // Another owner's view of the same transaction: nothing of its own moved.
    const other = await client.getTransaction(signature, traderOf(sim.chain, 1).keypair.address);
    expect(other!.lamports).toBe(0n);
    expect(other!.tokens.size).toBe(0);
  });

  it('getTransaction is null for a signature the chain does not know', async () => {
    const { submission } = swapSubmission(sim.chain, traderOf(sim.chain, 2), SOL / 10n);
    expect(await client.getTransaction(submission.transaction.signature, submission.wallet.address)).toBeNull();
  });

  it('simulateTransaction: no error, logs and units for a good swap; the program error for a slippage failure', async () => {
    const trader = traderOf(sim.chain, 2);
    const good = await client.simulateTransaction(swapSubmission(sim.chain, trader, SOL / 10n).submission.transaction.bytes);
    expect(good.err).toBeNull();
    expect(good.logs.length).toBeGreaterThan(0);
    expect(good.unitsConsumed).toBeGreaterThan(0);
    expect(good.slot).toBeGreaterThan(0n);
    const bad = await client.simulateTransaction(slippageFailingSubmission(sim.chain, trader, SOL / 10n).transaction.bytes);
    expect(bad.err).toMatchObject({ InstructionError: [0, { Custom: expect.any(Number) as number }] });
  });

  it('getRecentPrioritizationFees and getMinimumBalanceForRentExemption', async () => {
    const fees = await client.getRecentPrioritizationFees();
    expect(fees.length).toBeGreaterThan(0);
    for (const f of fees) {
      expect(typeof f.slot).toBe('bigint');
      expect(typeof f.prioritizationFee).toBe('bigint');
    }
    // The swap of the first test paid 1,000 micro-lamports per unit and wrote the trader's accounts.
    const mine = await client.getRecentPrioritizationFees([traderOf(sim.chain, 0).keypair.address]);
    expect(mine.some((f) => f.prioritizationFee === 1_000n)).toBe(true);
    expect(await client.getMinimumBalanceForRentExemption(165)).toBe(2_039_280n);
    expect(await client.getMinimumBalanceForRentExemption(0)).toBe(890_880n);
  });

  it('getTransaction keeps u64 lamports and token amounts exact (beyond 2^53)', async () => {
    // A node's reply with balances no JS number holds exactly: 2^64 − 1 and 2^64 − 5001 are the
    // same double. The reply text is what a node sends; the server only answers it.
    const owner = traderOf(sim.chain, 0).keypair.address;
    const other = traderOf(sim.chain, 1).keypair.address;
    const max = '18446744073709551615';
    const tokenBalance = (index: number, who: string, amount: string) =>
      `{"accountIndex":${index},"mint":"${USDC_MINT}","owner":"${who}","uiTokenAmount":{"amount":"${amount}","decimals":6,"uiAmount":1.8e13,"uiAmountString":"x"}}`;
    const reply =
      '{"jsonrpc":"2.0","result":{"slot":77,"blockTime":1,"transaction":{"signatures":["s"],"message":{"accountKeys":["' + owner + '","' + other + '","t1","t2"],"recentBlockhash":"h","instructions":[]}},' +
      '"meta":{"err":null,"fee":5000,"preBalances":[' + max + ',1,2,3],"postBalances":[18446744073709546615,1,2,3],' +
      '"preTokenBalances":[' + tokenBalance(2, owner, '1') + ',' + tokenBalance(3, other, '5') + '],' +
      '"postTokenBalances":[' + tokenBalance(2, owner, max) + ',' + tokenBalance(3, other, '0') + '],' +
      '"logMessages":["\\"preBalances\\":[0]"],"loadedAddresses":{"writable":[],"readonly":[]}}},"id":1}';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const canned = new ChainClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    try {
      const landed = await canned.getTransaction('s', owner);
      expect(landed).toEqual({ slot: 77n, err: null, fee: 5000n, lamports: -5000n, tokens: new Map([[USDC_MINT, 18446744073709551614n]]), rent: 0n });
    } finally {
      await canned.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('connections: that many calls reach the node at once, none waits for another to answer', async () => {
    // A node that answers nothing until it holds every call: a client with fewer connections than
    // calls would leave some queued behind the held ones (an executor's sends behind its status polls).
    const calls = 10;
    const held: (() => void)[] = [];
    let released = false;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const answer = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","result":7,"id":1}');
        if (released) answer();
        else held.push(answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const wide = new ChainClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: calls });
    const heights = Array.from({ length: calls }, () => wide.getBlockHeight());
    try {
      await eventually(() => held.length === calls, `${calls} calls held by the node at once`, 5_000);
    } finally {
      released = true;
      for (const answer of held.splice(0)) answer();
      expect(await Promise.all(heights)).toEqual(Array<bigint>(calls).fill(7n));
      await wide.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
