import { join } from 'node:path';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { address, createSolanaRpc, createSolanaRpcSubscriptions, type Base64EncodedWireTransaction } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeEntryBatch } from '../chain/transaction-view.js';
import { buildTransaction } from '../chain/transaction-builder.js';
import { loadConfig } from '../config/index.js';
import { Dex, SwapMode, createDecoderRegistry, quoteSwap, withAmmConfig, withAmmVaultAccounts, type ConcentratedPool } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { protoDir } from '../proto.js';
import { systemTransfer } from './flow.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from './simulator.js';

/**
 * The simulator as its users meet it: every server bound on port 0, driven by independent real
 * clients (@solana/kit's RPC client, grpc-js with the ShredStream proto, plain HTTP). The chain
 * is manual so that what the clients read can be compared with the chain's own state.
 */

let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '5', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '300', tokens: '2', 'pools-per-kind': '2' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  endpoints = await sim.start();
});

afterAll(async () => {
  await sim.close();
});

describe('createSimulator', () => {
  it('binds the four endpoints', () => {
    expect(endpoints.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoints.ws).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoints.stream).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(endpoints.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves pool accounts over JSON-RPC that the engine decodes to the chain\'s own state', async () => {
    sim.chain.advanceSlot(2);
    const rpc = createSolanaRpc(endpoints.rpc);
    expect(await rpc.getSlot({ commitment: 'processed' }).send()).toBe(2n);
    const registry = createDecoderRegistry();
    for (const view of sim.chain.pools()) {
      const { value } = await rpc.getAccountInfo(address(view.address), { encoding: 'base64', commitment: 'processed' }).send();
      const decoded = registry.decodeAccount(value!.owner, Buffer.from(value!.data[0], 'base64'), view.address);
      expect(decoded.kind).toBe('pool');
      if (decoded.kind !== 'pool') continue;
      let pool = decoded.pool;
      if (view.dex === Dex.Clmm) {
        const config = await rpc.getAccountInfo(address((pool as ConcentratedPool).ammConfig!), { encoding: 'base64' }).send();
        const ammConfig = registry.decodeAccount(config.value!.owner, Buffer.from(config.value!.data[0], 'base64'), (pool as ConcentratedPool).ammConfig);
        if (ammConfig.kind === 'ammConfig') pool = withAmmConfig(pool as ConcentratedPool, ammConfig.ammConfig);
      }
      if (pool.dex === Dex.Amm) {
        // AMM v4: the reserves are its vaults' balances less need_take_pnl, read over JSON-RPC too.
        const vaults = await rpc.getMultipleAccounts([address(pool.vaultA!), address(pool.vaultB!)], { encoding: 'base64', commitment: 'processed' }).send();
        const [a, b] = vaults.value.map((v) => (v === null ? null : { owner: v.owner, data: Buffer.from(v.data[0], 'base64') }));
        const withVaults = withAmmVaultAccounts(pool, a, b);
        if (typeof withVaults === 'string') throw new Error(withVaults);
        pool = withVaults;
      }
      expect(pool).toEqual(view.pool);
    }
  });

  it('quotes over HTTP with the engine\'s math on the chain\'s pools', async () => {
    const view = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).find((p) => p.dex === Dex.Whirlpool)!;
    const amount = 3_000_000_000n;
    const url = `${endpoints.http}/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=${amount}&dexes=Whirlpool&onlyDirectRoutes=true`;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { outAmount: string; routePlan: { swapInfo: { ammKey: string } }[] };
    const quote = quoteSwap(view.pool, { aToB: view.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount }, view.ctx);
    expect(quote.ok).toBe(true);
    if (!quote.ok) return;
    expect(body.routePlan[0]!.swapInfo.ammKey).toBe(view.address);
    expect(body.outAmount).toBe(quote.amountOut.toString());
  });

  it('takes a transaction from a real client and reports it confirmed', async () => {
    const rpc = createSolanaRpc(endpoints.rpc);
    const from = sim.chain.genesis.actors.traders[0]!;
    const to = sim.chain.genesis.actors.wallets[0]!;
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const tx = buildTransaction({ payer: from.keypair, instructions: [systemTransfer(from.keypair.address, to, 1_234_567n)], recentBlockhash: latest.blockhash });
    const encoded = Buffer.from(tx).toString('base64') as Base64EncodedWireTransaction;
    const signature = await rpc.sendTransaction(encoded, { encoding: 'base64', preflightCommitment: 'processed' }).send();
    sim.chain.advanceSlot(2);
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    expect(value[0]).toMatchObject({ confirmationStatus: 'confirmed', err: null });
    const balance = await rpc.getBalance(address(to), { commitment: 'confirmed' }).send();
    expect(balance.value).toBe(sim.chain.getAccount(to, 'confirmed')!.lamports);
    expect(balance.value - 1_000_000_000n).toBeGreaterThanOrEqual(1_234_567n);
  });

  it('notifies accounts and slots over WebSocket and reports token balances', async () => {
    const rpc = createSolanaRpc(endpoints.rpc);
    const subscriptions = createSolanaRpcSubscriptions(endpoints.ws);
    const abort = new AbortController();
    const from = sim.chain.genesis.actors.traders[1]!;
    const to = sim.chain.genesis.actors.wallets[1]!;
    const accounts = await subscriptions.accountNotifications(address(to), { encoding: 'base64', commitment: 'processed' }).subscribe({ abortSignal: abort.signal });
    const slots = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
    const nextAccount = accounts[Symbol.asyncIterator]().next();
    const nextSlot = slots[Symbol.asyncIterator]().next();
    const before = sim.chain.getAccount(to)!.lamports;
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const tx = buildTransaction({ payer: from.keypair, instructions: [systemTransfer(from.keypair.address, to, 42_000n)], recentBlockhash: latest.blockhash });
    sim.chain.sendTransaction(tx);
    const slot = sim.chain.advanceSlot();
    expect((await nextSlot).value).toEqual({ slot, parent: slot - 1n, root: sim.chain.slot('finalized') });
    const notification = (await nextAccount).value!;
    expect(notification.context.slot).toBe(slot);
    expect(notification.value.lamports).toBe(sim.chain.getAccount(to)!.lamports);
    expect(notification.value.lamports - before).toBeGreaterThanOrEqual(42_000n);
    abort.abort();

    const usdc = from.tokenAccounts.get(USDC_MINT)!;
    const { value: balance } = await rpc.getTokenAccountBalance(address(usdc), { commitment: 'processed' }).send();
    expect(balance.decimals).toBe(6);
    expect(BigInt(balance.amount)).toBe(sim.chain.getTokenBalance(usdc)!.amount);
  });

  it('injects faults set through the admin interface', async () => {
    const rpc = createSolanaRpc(endpoints.rpc);
    const set = await fetch(`${endpoints.http}/admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rpc: { getSlot: { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' } } }),
    });
    expect(set.status).toBe(200);
    await expect(rpc.getSlot().send()).rejects.toThrow();
    await fetch(`${endpoints.http}/admin/faults`, { method: 'DELETE' });
    expect(await rpc.getSlot({ commitment: 'processed' }).send()).toBe(sim.chain.slot());
  });
});

/** Waits until `condition` holds, polling; fails after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function subscribe(target: string): { messages: { slot: string; entries: Buffer }[]; stop(): void } {
  const definition = protoLoader.loadSync(join(protoDir(), 'shredstream.proto'), { includeDirs: [protoDir()], keepCase: true, longs: String, defaults: true });
  const shredstream = grpc.loadPackageDefinition(definition)['shredstream'] as grpc.GrpcObject;
  const Client = shredstream['ShredstreamProxy'] as grpc.ServiceClientConstructor;
  const client = new Client(target, grpc.credentials.createInsecure());
  const call = client['SubscribeEntries']!({}) as grpc.ClientReadableStream<{ slot: string; entries: Buffer }>;
  const messages: { slot: string; entries: Buffer }[] = [];
  call.on('data', (m: { slot: string; entries: Buffer }) => messages.push(m));
  call.on('error', () => {});
  return {
    messages,
    stop: () => {
      call.cancel();
      client.close();
    },
  };
}

describe('the simulator clock', () => {
  it('makes slots on its own, streams every entry of them over ShredStream gRPC, and stops on close', async () => {
    const config = loadConfig(simSchema, {
      env: {},
      flags: { seed: '6', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '2000', 'slot-ms': '400', tokens: '2', 'pools-per-kind': '2' },
    }).values;
    const running = createSimulator(config, { logger: createLogger({ name: 'sim-test', level: 'silent' }) });
    const bound = await running.start();
    const subscription = subscribe(bound.stream);
    // Slots come from the simulator's own clock: wait for them rather than for a time, which a
    // loaded machine may stretch.
    await until(() => subscription.messages.length > 0 && running.chain.slot() >= BigInt(subscription.messages[0]!.slot) + 3n, 30_000);
    // Stop the clock, wait until every batch the server sent has arrived, then hang up.
    running.chain.stop();
    const last = running.chain.slot();
    await until(() => subscription.messages.length === running.servers.stream.stats().batchesSent, 10_000);
    subscription.stop();
    await running.close();
    await running.close();
    expect(running.chain.running).toBe(false);
    expect(last).toBeGreaterThanOrEqual(3n);

    // Slots the subscription saw from their first piece to their last: every transaction arrived and parses.
    const bySlot = new Map<bigint, number>();
    for (const m of subscription.messages) {
      const slot = BigInt(m.slot);
      bySlot.set(slot, (bySlot.get(slot) ?? 0) + decodeEntryBatch(new Uint8Array(m.entries), slot).length);
    }
    const whole = [...bySlot.keys()].filter((slot) => slot > [...bySlot.keys()][0]! && slot <= last);
    expect(whole.length).toBeGreaterThan(0);
    for (const slot of whole) expect(bySlot.get(slot)).toBe(800);
    expect(running.servers.stream.stats().batchesDropped).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(running.chain.slot()).toBe(last);
  });
});
