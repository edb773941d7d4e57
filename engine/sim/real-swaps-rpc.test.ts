import { address, createSolanaRpc, signature as toSignature, type Base64EncodedWireTransaction } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import {
  AmmV4Error,
  ClmmError,
  DEX_KINDS,
  Dex,
  DlmmError,
  WhirlpoolError,
  SwapMode,
  buildSwapRouteTransaction,
  createDecoderRegistry,
  loadSwapPool,
  planSwapRoute,
  swapInstructionFor,
  type FetchedAccount,
  type SwapPool,
  type SwapRoutePlan,
} from '../dex/index.js';
import { buildFittedTransaction } from '../chain/fitted-transaction.js';
import { createLogger } from '../obs/logger.js';
import { readLookupTable } from './address-lookup-tables.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from './simulator.js';
import { nextBlockTime } from './testing/real-swaps.js';

/**
 * End to end over real JSON-RPC (the simulator's HTTP server, @solana/kit as the client): what an
 * executor does. Pools read with getMultipleAccounts and decoded, routes planned with the
 * engine's exact quotes, real swap instructions signed, simulateTransaction as the pre-trade
 * check, sendTransaction, getSignatureStatuses until confirmed, getTransaction's meta for the
 * balance changes. The chain is manual and has no generated flow, so the state a quote was made on
 * is the state the transaction executes on.
 */

let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: ReturnType<typeof createSolanaRpc>;
const registry = createDecoderRegistry();
const SOL = 1_000_000_000n;
const SLIPPAGE_ERROR: Record<Dex, number> = {
  [Dex.Amm]: AmmV4Error.ExceededSlippage,
  [Dex.Clmm]: ClmmError.TooLittleOutputReceived,
  [Dex.Whirlpool]: WhirlpoolError.AmountOutBelowMinimum,
  [Dex.Dlmm]: DlmmError.ExceededAmountSlippageTolerance,
};

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '9', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  endpoints = await sim.start();
  rpc = createSolanaRpc(endpoints.rpc);
  sim.chain.advanceSlot(3);
});

afterAll(async () => {
  await sim.close();
});

const trader = () => sim.chain.genesis.actors.traders[0]!;

async function getMultipleAccounts(addresses: readonly string[]): Promise<(FetchedAccount | null)[]> {
  const { value } = await rpc.getMultipleAccounts(addresses.map((a) => address(a)), { encoding: 'base64', commitment: 'processed' }).send();
  return value.map((v) => (v === null ? null : { owner: v.owner, data: new Uint8Array(Buffer.from(v.data[0], 'base64')) }));
}

function solUsdcPool(dex: Dex): string {
  return sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).find((p) => p.dex === dex)!.address;
}

async function pool(dex: Dex): Promise<SwapPool> {
  return loadSwapPool(registry, solUsdcPool(dex), getMultipleAccounts, { nowSeconds: nextBlockTime(sim.chain) });
}

async function tokenBalance(account: string): Promise<bigint> {
  const { value } = await rpc.getTokenAccountBalance(address(account), { commitment: 'processed' }).send();
  return BigInt(value.amount);
}

async function blockhash(): Promise<string> {
  return (await rpc.getLatestBlockhash({ commitment: 'processed' }).send()).value.blockhash;
}

function wire(bytes: Uint8Array): Base64EncodedWireTransaction {
  return Buffer.from(bytes).toString('base64') as Base64EncodedWireTransaction;
}

/** Sends, then makes slots until getSignatureStatuses says confirmed. */
async function sendAndConfirm(bytes: Uint8Array, skipPreflight = false): Promise<string> {
  const sig = await rpc.sendTransaction(wire(bytes), { encoding: 'base64', skipPreflight, preflightCommitment: 'processed' }).send();
  for (let i = 0; i < 5; i++) {
    sim.chain.advanceSlot();
    const { value } = await rpc.getSignatureStatuses([sig]).send();
    if (value[0]?.confirmationStatus === 'confirmed') return sig;
  }
  throw new Error(`${sig} not confirmed`);
}

async function getTransaction(sig: string) {
  const tx = await rpc.getTransaction(toSignature(sig), { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  expect(tx).not.toBeNull();
  return tx!;
}

/** Token balance change per account, from getTransaction's pre/post token balances. */
function tokenDeltas(meta: { preTokenBalances?: readonly { accountIndex: number; uiTokenAmount: { amount: string } }[]; postTokenBalances?: readonly { accountIndex: number; uiTokenAmount: { amount: string } }[] }, keys: readonly string[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const b of meta.postTokenBalances ?? []) out.set(keys[b.accountIndex]!, BigInt(b.uiTokenAmount.amount));
  for (const b of meta.preTokenBalances ?? []) out.set(keys[b.accountIndex]!, (out.get(keys[b.accountIndex]!) ?? 0n) - BigInt(b.uiTokenAmount.amount));
  return out;
}

function allKeys(tx: Awaited<ReturnType<typeof getTransaction>>): string[] {
  const t = tx.transaction as unknown as { message: { accountKeys: string[] } };
  const loaded = (tx.meta as { loadedAddresses?: { writable: string[]; readonly: string[] } }).loadedAddresses;
  return [...t.message.accountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
}

async function checkLanded(plan: SwapRoutePlan, bytes: Uint8Array): Promise<void> {
  const who = trader();
  const sol = who.tokenAccounts.get(WSOL_MINT)!;
  const usdc = who.tokenAccounts.get(USDC_MINT)!;
  const before = [await tokenBalance(sol), await tokenBalance(usdc)];
  // The pre-trade check predicts the outcome: no error, and the wallet's accounts after it.
  const simulated = await rpc
    .simulateTransaction(wire(bytes), { encoding: 'base64', commitment: 'processed', sigVerify: true, accounts: { encoding: 'base64', addresses: [address(sol), address(usdc)] } })
    .send();
  expect(simulated.value.err).toBeNull();
  const sig = await sendAndConfirm(bytes);
  const after = [await tokenBalance(sol), await tokenBalance(usdc)];
  // Exactly the engine's quotes: every hop's output, and what the route leaves of each token.
  const delta = new Map<string, bigint>([[WSOL_MINT, 0n], [USDC_MINT, 0n]]);
  for (const hop of plan.hops) {
    delta.set(hop.inputMint, delta.get(hop.inputMint)! - (plan.mode === SwapMode.ExactIn ? hop.amount : hop.quote.amountIn));
    delta.set(hop.outputMint, delta.get(hop.outputMint)! + hop.quote.amountOut);
  }
  expect(after[0]! - before[0]!).toBe(delta.get(WSOL_MINT));
  expect(after[1]! - before[1]!).toBe(delta.get(USDC_MINT));
  // simulateTransaction's accounts were the post-trade accounts.
  expect(simulated.value.accounts!.map((a) => Buffer.from(a!.data[0], 'base64').readBigUInt64LE(64))).toEqual(after);
  // getTransaction's meta shows the same changes.
  const tx = await getTransaction(sig);
  expect(tx.meta!.err).toBeNull();
  const deltas = tokenDeltas(tx.meta!, allKeys(tx));
  expect(deltas.get(sol)).toBe(delta.get(WSOL_MINT));
  expect(deltas.get(usdc)).toBe(delta.get(USDC_MINT));
  expect(tx.meta!.computeUnitsConsumed).toBe(simulated.value.unitsConsumed);
}

describe('real swap transactions over JSON-RPC', () => {
  for (const dex of DEX_KINDS) {
    it(`${dex}: a one-hop swap lands and moves the wallet's tokens by exactly the engine's quote`, async () => {
      const who = trader();
      const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [await pool(dex)], mode: SwapMode.ExactIn, amount: SOL, slippageBps: 50 });
      const tx = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: await blockhash(), computeUnitPrice: 2_000n });
      await checkLanded(plan, tx.bytes);
    });
  }

  it('a two-hop route (SOL → USDC on the AMM → SOL on the Whirlpool) as one transaction', async () => {
    const who = trader();
    const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [await pool(Dex.Amm), await pool(Dex.Whirlpool)], mode: SwapMode.ExactIn, amount: 2n * SOL, slippageBps: 50 });
    const tx = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: await blockhash() });
    await checkLanded(plan, tx.bytes);
  });

  it('a four-hop route through every kind is v0 with a lookup table, and its meta lists the loaded addresses', async () => {
    const who = trader();
    const hops = [await pool(Dex.Amm), await pool(Dex.Clmm), await pool(Dex.Whirlpool), await pool(Dex.Dlmm)];
    const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops, mode: SwapMode.ExactIn, amount: SOL, slippageBps: 100 });
    const legacy = () => buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG', version: 'legacy' });
    expect(legacy).toThrow(/does not fit/);
    // The table an executor keeps: every non-signer account of the route, added (as its authority
    // would extend it) and read back over RPC.
    const table = sim.chain.lookupTableAddresses()[0]!;
    const wanted = new Set<string>();
    for (const ix of [...plan.setupInstructions, ...plan.swapInstructions]) for (const a of ix.accounts) if (!a.isSigner) wanted.add(String(a.pubkey));
    const { value: before } = await rpc.getAccountInfo(address(table), { encoding: 'base64', commitment: 'processed' }).send();
    const existing = new Set(readLookupTable(new Uint8Array(Buffer.from(before!.data[0], 'base64')))!.addresses);
    sim.chain.extendLookupTable(table, [...wanted].filter((a) => !existing.has(a)));
    sim.chain.advanceSlot();
    const { value: account } = await rpc.getAccountInfo(address(table), { encoding: 'base64', commitment: 'processed' }).send();
    const addresses = readLookupTable(new Uint8Array(Buffer.from(account!.data[0], 'base64')))!.addresses;
    const fresh = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [await pool(Dex.Amm), await pool(Dex.Clmm), await pool(Dex.Whirlpool), await pool(Dex.Dlmm)], mode: SwapMode.ExactIn, amount: SOL, slippageBps: 100 });
    const tx = buildSwapRouteTransaction(fresh, { payer: who.keypair, recentBlockhash: await blockhash(), lookupTables: [{ address: table, addresses }] });
    expect(tx.version).toBe(0);
    expect(tx.size).toBeLessThanOrEqual(1232);
    await checkLanded(fresh, tx.bytes);
    const sig = tx.signature;
    const got = await getTransaction(sig);
    expect(got.version).toBe(0);
    const loaded = (got.meta as unknown as { loadedAddresses: { writable: string[]; readonly: string[] } }).loadedAddresses;
    expect(loaded.writable.length + loaded.readonly.length).toBe(tx.message.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0));
    // Without maxSupportedTransactionVersion a node refuses a v0 transaction.
    await expect(rpc.getTransaction(toSignature(sig), { commitment: 'confirmed', encoding: 'json' }).send()).rejects.toThrow(/maxSupportedTransactionVersion/);
    // base64 gives the wire bytes back.
    const raw = await rpc.getTransaction(toSignature(sig), { commitment: 'confirmed', encoding: 'base64', maxSupportedTransactionVersion: 0 }).send();
    expect(Buffer.from(raw!.transaction[0], 'base64').equals(Buffer.from(tx.bytes))).toBe(true);
  });

  it("slippage exceeded: preflight refuses with the program's error; sent anyway it fails, changes nothing but the fee, and simulation predicted it", async () => {
    const who = trader();
    for (const dex of DEX_KINDS) {
      const p = await pool(dex);
      const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [p], mode: SwapMode.ExactIn, amount: SOL, slippageBps: 0 });
      const hop = plan.hops[0]!;
      const ix = swapInstructionFor({
        pool: p,
        aToB: hop.aToB,
        mode: SwapMode.ExactIn,
        amount: hop.amount,
        otherAmountThreshold: hop.quote.amountOut + 1n,
        owner: who.keypair.address,
        tokenAccountA: who.tokenAccounts.get(p.state.pool.tokenA)!,
        tokenAccountB: who.tokenAccounts.get(p.state.pool.tokenB)!,
      });
      const tx = buildFittedTransaction({ payer: who.keypair, recentBlockhash: await blockhash(), instructions: [ix] });
      const simulated = await rpc.simulateTransaction(wire(tx.bytes), { encoding: 'base64', commitment: 'processed' }).send();
      // kit parses the numbers in an error as bigints.
      const err = simulated.value.err as unknown as { InstructionError: [bigint, { Custom: bigint }] };
      expect(err.InstructionError[0]).toBe(0n);
      expect(err.InstructionError[1].Custom).toBe(BigInt(SLIPPAGE_ERROR[dex]));
      // Preflight (the default) refuses it with the same error.
      const refused = await rpc.sendTransaction(wire(tx.bytes), { encoding: 'base64', preflightCommitment: 'processed' }).send().then(
        () => null,
        (e: unknown) => e,
      );
      expect(String((refused as { context?: { __code?: number } })?.context?.__code ?? refused)).toMatch(/-32002|Transaction simulation failed/);
      const solBefore = await tokenBalance(who.tokenAccounts.get(WSOL_MINT)!);
      const usdcBefore = await tokenBalance(who.tokenAccounts.get(USDC_MINT)!);
      const { value: lamportsBefore } = await rpc.getBalance(address(who.keypair.address), { commitment: 'processed' }).send();
      const sig = await sendAndConfirm(tx.bytes, true);
      const got = await getTransaction(sig);
      expect(got.meta!.err).toEqual(simulated.value.err);
      expect(got.meta!.logMessages).toEqual(simulated.value.logs);
      expect(got.meta!.fee).toBe(5000n);
      expect(await tokenBalance(who.tokenAccounts.get(WSOL_MINT)!)).toBe(solBefore);
      expect(await tokenBalance(who.tokenAccounts.get(USDC_MINT)!)).toBe(usdcBefore);
      const { value: lamportsAfter } = await rpc.getBalance(address(who.keypair.address), { commitment: 'processed' }).send();
      expect(lamportsBefore - lamportsAfter).toBe(5000n);
    }
  });

  it('simulateTransaction honours replaceRecentBlockhash; getSignatureStatuses counts confirmations', async () => {
    const who = trader();
    const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [await pool(Dex.Amm)], mode: SwapMode.ExactIn, amount: SOL / 10n, slippageBps: 50 });
    const stale = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG' });
    const plain = await rpc.simulateTransaction(wire(stale.bytes), { encoding: 'base64', commitment: 'processed' }).send();
    expect(plain.value.err).toBe('BlockhashNotFound');
    const replaced = await rpc.simulateTransaction(wire(stale.bytes), { encoding: 'base64', commitment: 'processed', replaceRecentBlockhash: true }).send();
    expect(replaced.value.err).toBeNull();
    expect(replaced.value.replacementBlockhash?.blockhash).toBe(await blockhash());
    // Both flags at once is refused, as a node refuses it (kit's types forbid it: a raw request).
    const both = await fetch(endpoints.rpc, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'simulateTransaction', params: [wire(stale.bytes), { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true }] }),
    });
    expect(((await both.json()) as { error: { code: number; message: string } }).error).toEqual({ code: -32602, message: 'sigVerify may not be used with replaceRecentBlockhash' });
    const tx = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: await blockhash() });
    const sig = await rpc.sendTransaction(wire(tx.bytes), { encoding: 'base64', preflightCommitment: 'processed' }).send();
    const landedIn = sim.chain.advanceSlot();
    sim.chain.advanceSlot(2);
    const { value } = await rpc.getSignatureStatuses([sig]).send();
    expect(value[0]).toMatchObject({ slot: landedIn, confirmations: 2n, err: null, confirmationStatus: 'confirmed' });
  });

  it('answers getRecentPrioritizationFees and getMinimumBalanceForRentExemption', async () => {
    const fees = await rpc.getRecentPrioritizationFees().send();
    expect(fees.length).toBeGreaterThan(0);
    expect(fees.map((f) => f.slot)).toEqual([...fees.map((f) => f.slot)].sort((a, b) => Number(a - b)));
    // The one-hop swaps above paid 2,000 micro-lamports per unit for the pools they wrote.
    const pools = DEX_KINDS.map(solUsdcPool);
    const forPools = await rpc.getRecentPrioritizationFees(pools.map((p) => address(p))).send();
    expect(forPools.some((f) => f.prioritizationFee === 2_000n)).toBe(true);
    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(2_039_280n);
    expect(await rpc.getMinimumBalanceForRentExemption(0n).send()).toBe(890_880n);
  });
});
