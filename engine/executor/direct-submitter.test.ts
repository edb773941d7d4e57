import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { RpcNode } from '../sim/rpc-nodes.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { ChainClient } from '../rpc/chain-client.js';
import { eventually } from '../rpc-proxy/testing.js';
import { DirectSubmitter } from './direct-submitter.js';
import type { SubmissionOutcome } from './submission.js';
import { FlakyJsonRpcProxy } from './testing/flaky-json-rpc-proxy.js';
import { SOL, slippageFailingSubmission, startSimulator, swapSubmission, traderBalances, traderOf, type TraderBalances } from './testing/submitter-sim.js';

/**
 * The direct path against the simulator over real JSON-RPC: real swaps on a sim pool, RPC faults
 * injected on an extra RPC node of the same chain (its own fault injector, and a count of the calls
 * it received).
 */

let sim: Simulator;
let endpoints: SimEndpoints;
let client: ChainClient;
const clients: ChainClient[] = [];
const proxies: FlakyJsonRpcProxy[] = [];

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator());
  client = new ChainClient({ url: endpoints.rpc });
});

afterAll(async () => {
  await Promise.all([client, ...clients].map((c) => c?.close()));
  await Promise.all(proxies.map((p) => p.close()));
  await sim?.close();
});

function changesOf(outcome: SubmissionOutcome): { lamports: bigint; sol: bigint; usdc: bigint; fee: bigint } {
  if (outcome.status === 'expired' || outcome.balanceChanges === undefined) throw new Error(`no balance changes: ${JSON.stringify(outcome.status)}`);
  const b = outcome.balanceChanges;
  return { lamports: b.lamports, sol: b.tokens.get(WSOL_MINT)!, usdc: b.tokens.get(USDC_MINT)!, fee: b.fee };
}

function moved(before: TraderBalances, after: TraderBalances): { lamports: bigint; sol: bigint; usdc: bigint } {
  return { lamports: after.lamports - before.lamports, sol: after.sol - before.sol, usdc: after.usdc - before.usdc };
}

/** A client of an extra RPC node whose faults the test sets. */
async function faultyNode(timeoutMs?: number): Promise<{ node: RpcNode; chain: ChainClient }> {
  const node = await sim.rpcNodes.add();
  const chain = new ChainClient({ url: node.rpc, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  clients.push(chain);
  return { node, chain };
}

/** A client of a proxy in front of the simulator's RPC that cuts connections as planned. */
async function flakyRpc(): Promise<{ proxy: FlakyJsonRpcProxy; chain: ChainClient }> {
  const proxy = new FlakyJsonRpcProxy(endpoints.rpc);
  proxies.push(proxy);
  const chain = new ChainClient({ url: await proxy.start() });
  clients.push(chain);
  return { proxy, chain };
}

describe('DirectSubmitter', () => {
  it('confirms a swap and reports the balance changes the chain shows, with one submitted event', async () => {
    const trader = traderOf(sim.chain, 0);
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const submitted: { at: number; signature: string }[] = [];
    const outcome = await new DirectSubmitter({ chain: client, pollMs: 25 }).submit(submission, { submitted: (info) => void submitted.push(info) });
    expect(outcome).toMatchObject({ status: 'confirmed', path: 'direct', signature: submission.transaction.signature, attempts: 1 });
    if (outcome.status !== 'confirmed') return;
    const after = traderBalances(sim.chain, trader);
    expect(changesOf(outcome)).toEqual({ ...moved(before, after), fee: outcome.balanceChanges.fee });
    expect(outcome.balanceChanges.tokens.get(WSOL_MINT)).toBe(-SOL);
    expect(outcome.balanceChanges.tokens.get(USDC_MINT)).toBe(plan.hops[0]!.quote.amountOut);
    expect(outcome.balanceChanges.lamports).toBe(-outcome.balanceChanges.fee);
    expect(outcome.slot).toBe(sim.chain.signatureStatus(submission.transaction.signature)!.slot);
    expect(submitted).toEqual([{ at: outcome.submittedAt, signature: submission.transaction.signature }]);
    expect(outcome.confirmedAt).toBeGreaterThanOrEqual(outcome.submittedAt);
  });

  it('sends the same bytes again while sendTransaction errors, and the swap executes once', async () => {
    const trader = traderOf(sim.chain, 1);
    const { node, chain } = await faultyNode();
    node.faults.setRpcFault('sendTransaction', { errorRate: 1, errorCode: -32603, errorMessage: 'Internal error (injected)' });
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const landedBefore = sim.chain.stats().transactions;
    const pending = new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20 }).submit(submission);
    await eventually(() => node.received('sendTransaction') >= 2, 'two failed sends', 10_000);
    node.faults.rpc.delete('sendTransaction');
    const outcome = await pending;
    expect(outcome.status).toBe('confirmed');
    expect(outcome.attempts).toBeGreaterThanOrEqual(3);
    expect(outcome.attempts).toBe(node.received('sendTransaction'));
    const after = traderBalances(sim.chain, trader);
    expect(moved(before, after).usdc).toBe(plan.hops[0]!.quote.amountOut);
    expect(moved(before, after).sol).toBe(-SOL);
    expect(sim.chain.stats().transactions - landedBefore).toBe(1);
    expect(changesOf(outcome)).toMatchObject(moved(before, after));
  });

  it('sends again when the answers are lost after the node took the swap, and the swap executes once', async () => {
    // Every sendTransaction answers after 1.5 s; the client gives up after 400 ms. The first copy
    // reaches the chain; the later ones find it already processed.
    const trader = traderOf(sim.chain, 2);
    const { node, chain } = await faultyNode(400);
    node.faults.setRpcFault('sendTransaction', { latencyMs: 1500 });
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const landedBefore = sim.chain.stats().transactions;
    const submitted: number[] = [];
    const outcome = await new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 50 }).submit(submission, { submitted: ({ at }) => void submitted.push(at) });
    expect(outcome.status).toBe('confirmed');
    expect(outcome.attempts).toBeGreaterThanOrEqual(2);
    expect(node.received('sendTransaction')).toBe(outcome.attempts);
    // No send was answered: the submitted event came when the chain first showed the signature.
    expect(submitted).toEqual([outcome.submittedAt]);
    const after = traderBalances(sim.chain, trader);
    expect(moved(before, after).usdc).toBe(plan.hops[0]!.quote.amountOut);
    expect(sim.chain.stats().transactions - landedBefore).toBe(1);
    expect(changesOf(outcome)).toMatchObject(moved(before, after));
  });

  it('a preflight refusal is failed at once: one send, nothing on chain', async () => {
    const trader = traderOf(sim.chain, 3);
    const submission = slippageFailingSubmission(sim.chain, trader, SOL / 4n);
    const before = traderBalances(sim.chain, trader);
    const outcome = await new DirectSubmitter({ chain: client, pollMs: 25 }).submit(submission);
    expect(outcome).toMatchObject({ status: 'failed', attempts: 1 });
    expect(outcome.status === 'failed' && outcome.error).toMatch(/^refused: .*-32002/);
    expect(outcome).not.toHaveProperty('balanceChanges');
    expect(outcome).not.toHaveProperty('submittedAt');
    expect(sim.chain.signatureStatus(submission.transaction.signature)).toBeNull();
    expect(traderBalances(sim.chain, trader)).toEqual(before);
  });

  it('a swap that fails on chain (slippage) is failed, with the fee it paid in the balance changes', async () => {
    const trader = traderOf(sim.chain, 4);
    const submission = slippageFailingSubmission(sim.chain, trader, SOL / 4n);
    const before = traderBalances(sim.chain, trader);
    const outcome = await new DirectSubmitter({ chain: client, pollMs: 25, preflight: false }).submit(submission);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error).toMatch(/^failed on chain: \{"InstructionError":\[0,\{"Custom":\d+\}\]\}$/);
    expect(outcome.slot).toBe(sim.chain.signatureStatus(submission.transaction.signature)!.slot);
    const after = traderBalances(sim.chain, trader);
    expect(outcome.balanceChanges).toEqual({ lamports: -5000n, fee: 5000n, tokens: new Map([[WSOL_MINT, 0n], [USDC_MINT, 0n]]), rent: 0n });
    expect(moved(before, after)).toEqual({ lamports: -5000n, sol: 0n, usdc: 0n });
  });

  it('expired when no send gets through before the blockhash expires; the chain never saw it', async () => {
    const trader = traderOf(sim.chain, 5);
    const { node, chain } = await faultyNode();
    node.faults.setRpcFault('sendTransaction', { errorRate: 1, errorCode: -32603, errorMessage: 'Internal error (injected)' });
    const { submission } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const outcome = await new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20, resendMaxMs: 200 }).submit(submission);
    expect(outcome.status).toBe('expired');
    expect(outcome.status === 'expired' && outcome.error).toMatch(/blockhash expired.*last send error: sendTransaction: Internal error \(injected\)/);
    expect(outcome.attempts).toBeGreaterThan(1);
    expect(await chain.getBlockHeight()).toBeGreaterThan(submission.lastValidBlockHeight);
    expect(sim.chain.signatureStatus(submission.transaction.signature)).toBeNull();
    expect(traderBalances(sim.chain, trader)).toEqual(before);
  });

  it('expired after timeoutMs without a final status, while the blockhash is still valid', async () => {
    const trader = traderOf(sim.chain, 6);
    const { node, chain } = await faultyNode();
    node.faults.setRpcFault('sendTransaction', { errorRate: 1 });
    const { submission } = swapSubmission(sim.chain, trader, SOL, { timeoutMs: 300 });
    const outcome = await new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20 }).submit(submission);
    expect(outcome.status).toBe('expired');
    expect(outcome.status === 'expired' && outcome.error).toMatch(/^no final status within 300 ms/);
    expect(await chain.getBlockHeight()).toBeLessThanOrEqual(submission.lastValidBlockHeight);
  });

  it('connections cut before the node got the swap: the same bytes are sent again, and it executes once', async () => {
    const trader = traderOf(sim.chain, 7);
    const { proxy, chain } = await flakyRpc();
    proxy.plan('sendTransaction', 'dropBefore', 'dropBefore');
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const landedBefore = sim.chain.stats().transactions;
    const outcome = await new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20 }).submit(submission);
    expect(outcome).toMatchObject({ status: 'confirmed', attempts: 3 });
    expect(proxy.received('sendTransaction')).toBe(3);
    expect(moved(before, traderBalances(sim.chain, trader)).usdc).toBe(plan.hops[0]!.quote.amountOut);
    expect(sim.chain.stats().transactions - landedBefore).toBe(1);
  });

  it('the answer lost after the node took the swap: the re-send is "already processed", an acceptance, and it executes once', async () => {
    const trader = traderOf(sim.chain, 8);
    const { proxy, chain } = await flakyRpc();
    // The first send reaches the chain, its answer is lost; the status polls are cut too, so only
    // the re-send's answer can tell the submitter the node has it.
    proxy.plan('sendTransaction', 'dropAfter');
    proxy.plan('getSignatureStatuses', ...Array<'dropBefore'>(40).fill('dropBefore'));
    const { submission, plan } = swapSubmission(sim.chain, trader, SOL);
    const before = traderBalances(sim.chain, trader);
    const landedBefore = sim.chain.stats().transactions;
    const submitted: number[] = [];
    const outcome = await new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20 }).submit(submission, { submitted: ({ at }) => void submitted.push(at) });
    expect(outcome).toMatchObject({ status: 'confirmed', attempts: 2 });
    expect(proxy.received('sendTransaction')).toBe(2);
    expect(submitted).toEqual([outcome.submittedAt]);
    expect(moved(before, traderBalances(sim.chain, trader)).usdc).toBe(plan.hops[0]!.quote.amountOut);
    expect(sim.chain.stats().transactions - landedBefore).toBe(1);
  });

  it('an aborted submission ends expired without waiting', async () => {
    const trader = traderOf(sim.chain, 9);
    const { node, chain } = await faultyNode();
    node.faults.setRpcFault('sendTransaction', { errorRate: 1 });
    const controller = new AbortController();
    const { submission } = swapSubmission(sim.chain, trader, SOL, { signal: controller.signal });
    const pending = new DirectSubmitter({ chain, pollMs: 25, resendInitialMs: 20 }).submit(submission);
    await eventually(() => node.received('sendTransaction') >= 1, 'a send', 10_000);
    controller.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'expired', error: 'aborted before a final status' });
  });

  it('an abort ends it at once while a status poll hangs (not after the request timeout)', async () => {
    // An RPC node that reads every request and never answers.
    const server = createServer((req: IncomingMessage) => req.resume());
    const arrived = once(server, 'request');
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const chain = new ChainClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 600_000 });
    try {
      const controller = new AbortController();
      const { submission } = swapSubmission(sim.chain, traderOf(sim.chain, 10), SOL, { signal: controller.signal });
      const pending = new DirectSubmitter({ chain, pollMs: 25 }).submit(submission);
      await arrived;
      controller.abort();
      expect(await pending).toMatchObject({ status: 'expired', error: 'aborted before a final status' });
    } finally {
      server.closeAllConnections();
      server.close();
      await chain.close().catch(() => undefined);
    }
  });
});
