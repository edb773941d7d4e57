import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { JITO_TIP_ACCOUNTS, USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { ChainClient } from '../rpc/chain-client.js';
import { eventually } from '../rpc-proxy/testing.js';
import { BlockEngineClient, bundleIdOf } from './block-engine-client.js';
import { BundleSubmitter } from './bundle-submitter.js';
import { FlakyJsonRpcProxy } from './testing/flaky-json-rpc-proxy.js';
import { SOL, slippageFailingSubmission, startSimulator, swapSubmission, traderBalances, traderOf } from './testing/submitter-sim.js';

/** The bundle path against the simulator's block engine and JSON-RPC, with real swaps on a sim pool. */

let sim: Simulator;
let endpoints: SimEndpoints;
let chain: ChainClient;
let blockEngine: BlockEngineClient;

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator());
  chain = new ChainClient({ url: endpoints.rpc });
  blockEngine = new BlockEngineClient({ url: endpoints.http });
});

afterAll(async () => {
  await chain?.close();
  await blockEngine?.close();
  await sim?.close();
});

const lamportsOf = (address: string): bigint => sim.chain.getAccount(address, 'confirmed')?.lamports ?? 0n;

/** A block-engine client through a proxy that cuts connections as planned. */
async function flakyBlockEngine(run: (proxy: FlakyJsonRpcProxy, client: BlockEngineClient) => Promise<void>): Promise<void> {
  const proxy = new FlakyJsonRpcProxy(endpoints.http);
  const client = new BlockEngineClient({ url: await proxy.start() });
  try {
    await run(proxy, client);
  } finally {
    await client.close();
    await proxy.close();
  }
}

describe('BlockEngineClient', () => {
  it('asks getTipAccounts once; reads getBundleStatuses and getInflightBundleStatuses of a landed bundle', async () => {
    await flakyBlockEngine(async (proxy, client) => {
      expect(await client.getTipAccounts()).toEqual(JITO_TIP_ACCOUNTS);
      expect(await client.getTipAccounts()).toEqual(JITO_TIP_ACCOUNTS);
      expect(proxy.received('getTipAccounts')).toBe(1);
      const outcome = await new BundleSubmitter({ chain, blockEngine: client, pollMs: 25 }).submit(
        swapSubmission(sim.chain, traderOf(sim.chain, 17), SOL / 10n, { tipLamports: 5_000n }).submission,
      );
      expect(outcome.status).toBe('confirmed');
      const id = outcome.bundleId!;
      const [status, unknown] = await client.getBundleStatuses([id, 'f'.repeat(64)]);
      expect(status).toMatchObject({ bundleId: id, err: null, slot: outcome.status === 'confirmed' ? outcome.slot : -1n });
      expect(status!.transactions[0]).toBe(outcome.signature);
      expect(unknown).toBeNull();
      expect(await client.getInflightBundleStatuses([id, 'f'.repeat(64)])).toEqual([
        { bundleId: id, status: 'Landed', landedSlot: status!.slot },
        { bundleId: 'f'.repeat(64), status: 'Invalid', landedSlot: null },
      ]);
    });
  });

  it('a failed getTipAccounts is asked again next time', async () => {
    await flakyBlockEngine(async (proxy, client) => {
      proxy.plan('getTipAccounts', 'dropBefore');
      await expect(client.getTipAccounts()).rejects.toMatchObject({ code: 'TP_ERR_RPC_FAILED', context: { kind: 'network' } });
      expect(await client.getTipAccounts()).toEqual(JITO_TIP_ACCOUNTS);
      expect(proxy.received('getTipAccounts')).toBe(2);
    });
  });
});

describe('BundleSubmitter', () => {
  it('lands [swap, tip]: balance changes cover both transactions, the tip reached a tip account', async () => {
    const trader = traderOf(sim.chain, 10);
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_500n });
    const before = traderBalances(sim.chain, trader);
    const tipsBefore = JITO_TIP_ACCOUNTS.map(lamportsOf);
    const submitted: { at: number; signature: string; bundleId?: string }[] = [];
    const outcome = await new BundleSubmitter({ chain, blockEngine, pollMs: 25 }).submit(submission, { submitted: (info) => void submitted.push(info) });
    expect(outcome).toMatchObject({ status: 'confirmed', path: 'bundle', signature: submission.transaction.signature, attempts: 1 });
    if (outcome.status !== 'confirmed') return;
    const after = traderBalances(sim.chain, trader);
    const b = outcome.balanceChanges;
    expect(b.lamports).toBe(after.lamports - before.lamports);
    expect(b.tokens.get(WSOL_MINT)).toBe(after.sol - before.sol);
    expect(b.tokens.get(USDC_MINT)).toBe(after.usdc - before.usdc);
    expect(b.tokens.get(USDC_MINT)).toBe(plan.hops[0]!.quote.amountOut);
    // Two fees (swap with its priority fee, tip transfer) and the tip.
    expect(b.lamports).toBe(-b.fee - 5_500n);
    expect(b.fee).toBeGreaterThan(10_000n);
    const tipsGained = JITO_TIP_ACCOUNTS.map((a, i) => lamportsOf(a) - tipsBefore[i]!);
    expect(tipsGained.filter((g) => g !== 0n)).toEqual([5_500n]);
    expect(outcome.bundleId).toMatch(/^[0-9a-f]{64}$/);
    expect(sim.chain.bundleStatus(outcome.bundleId!)).toMatchObject({ err: null, transactions: [submission.transaction.signature, expect.any(String) as string] });
    expect(outcome.bundleId).toBe(bundleIdOf(sim.chain.bundleStatus(outcome.bundleId!)!.transactions));
    expect(submitted).toEqual([{ at: outcome.submittedAt, signature: submission.transaction.signature, bundleId: outcome.bundleId }]);
  });

  it('takes the tip accounts in turn, wrapping around', async () => {
    const submitter = new BundleSubmitter({ chain, blockEngine, pollMs: 25, firstTipAccount: 6 });
    const tipped: string[] = [];
    for (const i of [11, 12, 13]) {
      const trader = traderOf(sim.chain, i);
      const before = JITO_TIP_ACCOUNTS.map(lamportsOf);
      const outcome = await submitter.submit(swapSubmission(sim.chain, trader, SOL / 10n, { tipLamports: 5_000n }).submission);
      expect(outcome.status).toBe('confirmed');
      tipped.push(JITO_TIP_ACCOUNTS.find((a, k) => lamportsOf(a) - before[k]! === 5_000n)!);
    }
    expect(tipped).toEqual([JITO_TIP_ACCOUNTS[6], JITO_TIP_ACCOUNTS[7], JITO_TIP_ACCOUNTS[0]]);
  });

  it('refuses a tip outside 5,000..6,000 lamports before sending anything', async () => {
    const submitter = new BundleSubmitter({ chain, blockEngine, pollMs: 25 });
    for (const tipLamports of [4_999n, 6_001n, undefined]) {
      const { submission } = swapSubmission(sim.chain, traderOf(sim.chain, 21), SOL / 10n, tipLamports === undefined ? {} : { tipLamports });
      const err = await submitter.submit(submission).catch((e: unknown) => e);
      expect(isTpError(err, ErrorCode.BadParameter)).toBe(true);
      expect(sim.chain.signatureStatus(submission.transaction.signature)).toBeNull();
    }
  });

  it('a bundle the block engine rejects is failed; nothing moved', async () => {
    const trader = traderOf(sim.chain, 14);
    const { submission } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_000n });
    const before = traderBalances(sim.chain, trader);
    sim.faults.rejectBundles = true;
    try {
      const outcome = await new BundleSubmitter({ chain, blockEngine, pollMs: 25 }).submit(submission);
      expect(outcome).toMatchObject({ status: 'failed', attempts: 1 });
      expect(outcome.status === 'failed' && outcome.error).toMatch(/^rejected by the block engine: sendBundle: Bundle Dropped, no connected leader up soon \(-32000\)$/);
      expect(outcome).not.toHaveProperty('submittedAt');
    } finally {
      sim.faults.rejectBundles = false;
    }
    expect(sim.chain.signatureStatus(submission.transaction.signature)).toBeNull();
    expect(traderBalances(sim.chain, trader)).toEqual(before);
  });

  it('a bundle whose swap fails is Failed and charged nothing (all or nothing)', async () => {
    const trader = traderOf(sim.chain, 15);
    const submission = { ...slippageFailingSubmission(sim.chain, trader, SOL / 4n), tipLamports: 5_000n };
    const before = traderBalances(sim.chain, trader);
    const outcome = await new BundleSubmitter({ chain, blockEngine, pollMs: 25 }).submit(submission);
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && outcome.error).toMatch(/Failed/);
    expect(outcome).not.toHaveProperty('balanceChanges');
    expect(outcome.submittedAt).toBeGreaterThan(0);
    expect(traderBalances(sim.chain, trader)).toEqual(before);
  });

  it('expired when the bundle does not land within the monitor timeout', async () => {
    // No slots while it waits: the block engine holds the bundle as Pending.
    const trader = traderOf(sim.chain, 16);
    const { submission } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_000n, timeoutMs: 500 });
    sim.chain.stop();
    try {
      const outcome = await new BundleSubmitter({ chain, blockEngine, pollMs: 25 }).submit(submission);
      expect(outcome.status).toBe('expired');
      expect(outcome.status === 'expired' && outcome.error).toMatch(/^bundle not landed within 500 ms \(last status Pending\)$/);
      expect(outcome.submittedAt).toBeGreaterThan(0);
      expect(sim.chain.signatureStatus(submission.transaction.signature)).toBeNull();
    } finally {
      sim.chain.start();
    }
    // Expired by the timeout, not by its blockhash: the block engine still held it, and it lands now.
    await eventually(() => sim.chain.signatureStatus(submission.transaction.signature) !== null, 'the held bundle to land', 10_000);
  });

  it('sendBundle cut on the way: the same bundle (same id) is sent again and lands once', async () => {
    await flakyBlockEngine(async (proxy, client) => {
      const trader = traderOf(sim.chain, 18);
      proxy.plan('sendBundle', 'dropBefore');
      const { submission, plan } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_000n });
      const before = traderBalances(sim.chain, trader);
      const outcome = await new BundleSubmitter({ chain, blockEngine: client, pollMs: 25, resendInitialMs: 20 }).submit(submission);
      expect(outcome).toMatchObject({ status: 'confirmed', attempts: 2 });
      expect(proxy.received('sendBundle')).toBe(2);
      expect(sim.chain.bundleStatus(outcome.bundleId!)).toMatchObject({ err: null });
      expect(traderBalances(sim.chain, trader).usdc - before.usdc).toBe(plan.hops[0]!.quote.amountOut);
    });
  });

  it('sendBundle answer lost and the bundle sent twice: the swap landed once, and the outcome says so', async () => {
    // The first copy reaches the block engine, its answer is lost; status polls are cut for a
    // while, so the submitter sends the same bundle again. The block engine has it twice (the
    // simulator runs the second copy, which fails AlreadyProcessed and may leave the id reported
    // Failed): the swap's own signature status decides.
    await flakyBlockEngine(async (proxy, client) => {
      const trader = traderOf(sim.chain, 19);
      proxy.plan('sendBundle', 'dropAfter');
      proxy.plan('getInflightBundleStatuses', ...Array<'dropBefore'>(20).fill('dropBefore'));
      const { submission, plan } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_000n });
      const before = traderBalances(sim.chain, trader);
      const landedBefore = sim.chain.stats().bundlesLanded;
      const outcome = await new BundleSubmitter({ chain, blockEngine: client, pollMs: 25, resendInitialMs: 20 }).submit(submission);
      expect(outcome).toMatchObject({ status: 'confirmed', attempts: 2 });
      expect(proxy.received('sendBundle')).toBe(2);
      expect(sim.chain.stats().bundlesLanded - landedBefore).toBe(1);
      const after = traderBalances(sim.chain, trader);
      expect(after.usdc - before.usdc).toBe(plan.hops[0]!.quote.amountOut);
      if (outcome.status === 'confirmed') expect(outcome.balanceChanges.lamports).toBe(after.lamports - before.lamports);
    });
  });

  it('status polls unanswered until the monitor timeout: the swap landed, and the outcome says so', async () => {
    await flakyBlockEngine(async (proxy, client) => {
      const trader = traderOf(sim.chain, 20);
      proxy.plan('getInflightBundleStatuses', ...Array<'dropBefore'>(10_000).fill('dropBefore'));
      const { submission } = swapSubmission(sim.chain, trader, SOL, { tipLamports: 5_000n, timeoutMs: 600 });
      const before = traderBalances(sim.chain, trader);
      const outcome = await new BundleSubmitter({ chain, blockEngine: client, pollMs: 25 }).submit(submission);
      expect(outcome).toMatchObject({ status: 'confirmed', attempts: 1 });
      expect(proxy.received('getInflightBundleStatuses')).toBeGreaterThan(1);
      const after = traderBalances(sim.chain, trader);
      if (outcome.status === 'confirmed') expect(outcome.balanceChanges.lamports).toBe(after.lamports - before.lamports);
    });
  });
});
