import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  USDC_MINT,
  WSOL_MINT,
  associatedTokenAddress,
  buildFittedTransaction,
  closeAccountInstruction,
  createAssociatedTokenIdempotentInstruction,
  syncNativeInstruction,
  systemTransferInstruction,
  type InstructionInput,
  type Keypair,
} from '../chain/index.js';
import { Dex, SwapMode, planSwapRoute } from '../dex/index.js';
import { manualSimulator } from '../quote/testing.js';
import { ChainClient } from '../rpc/index.js';
import type { Simulator } from '../sim/index.js';
import { strangerKeypair } from '../sim/testing/chain-fixtures.js';
import { chainSwapPool } from '../sim/testing/real-swaps.js';
import { filledAmountsOf, sumBalanceChanges } from './landed-balance-changes.js';

/**
 * Fills of swaps that wrap native SOL for the swap (and unwrap what they buy), landed on the
 * simulator and read back with getTransaction as the executor reads a landed trade.
 */

let sim: Simulator;
let chain: ChainClient;
let pool: string;
let user: Keypair;
const SOL_FUNDING = 5_000_000_000n;

beforeAll(async () => {
  sim = manualSimulator(61);
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  chain = new ChainClient({ url: endpoints.rpc, commitment: 'processed' });
  pool = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).find((p) => p.dex === Dex.Amm && p.transferFees === undefined)!.address;
  // A wallet of its own, with native SOL only: no wSOL and no USDC account.
  user = strangerKeypair(300);
  const funder = sim.chain.genesis.actors.traders[0]!;
  land([systemTransferInstruction(funder.keypair.address, user.address, SOL_FUNDING)], funder.keypair);
}, 60_000);

afterAll(async () => {
  await chain?.close();
  await sim?.close();
});

function land(instructions: InstructionInput[], payer: Keypair): string {
  const tx = buildFittedTransaction({ payer, recentBlockhash: sim.chain.latestBlockhash().blockhash, instructions });
  sim.chain.sendTransaction(tx.bytes);
  sim.chain.advanceSlot();
  sim.chain.advanceSlot();
  return tx.signature;
}

const lamportsOf = (address: string): bigint => sim.chain.getAccount(address)?.lamports ?? 0n;
const tokensOf = (mint: string): bigint => sim.chain.getTokenBalance(associatedTokenAddress(user.address, mint))?.amount ?? 0n;

/** `amount` of `inputMint` sold on the SOL/USDC pool, SOL wrapped into a temporary wSOL account and unwrapped after. */
function swapNative(inputMint: string, amount: bigint): { signature: string; minimumOutput: bigint } {
  const wsol = associatedTokenAddress(user.address, WSOL_MINT);
  const plan = planSwapRoute({ owner: user.address, inputMint, hops: [chainSwapPool(sim.chain, pool)], mode: SwapMode.ExactIn, amount, slippageBps: 100 });
  const wrap = inputMint === WSOL_MINT ? [createAssociatedTokenIdempotentInstruction({ payer: user.address, owner: user.address, mint: WSOL_MINT }), systemTransferInstruction(user.address, wsol, amount), syncNativeInstruction(wsol)] : [];
  const signature = land([...wrap, ...plan.setupInstructions, ...plan.swapInstructions, closeAccountInstruction(wsol, user.address, user.address)], user);
  return { signature, minimumOutput: plan.otherAmountThreshold };
}

async function changesOf(signature: string) {
  const landed = await chain.getTransaction(signature, user.address);
  expect(landed?.err).toBeNull();
  return { landed: landed!, changes: sumBalanceChanges([landed!], [WSOL_MINT, USDC_MINT]) };
}

describe('fills of native SOL swaps (filledAmountsOf over getTransaction)', () => {
  it('SOL in: the lamports wrapped for the swap, not the fee nor the new USDC account\'s rent', async () => {
    const before = lamportsOf(user.address);
    const { signature, minimumOutput } = swapNative(WSOL_MINT, 100_000_000n);
    const { landed, changes } = await changesOf(signature);
    // the wSOL account was created and closed in the transaction: no token change shows
    expect(changes.tokens.get(WSOL_MINT)).toBe(0n);
    expect(sim.chain.getAccount(associatedTokenAddress(user.address, WSOL_MINT))).toBeNull();
    // the USDC account was created: its rent is in the lamport change, and counted apart
    const usdcAccount = associatedTokenAddress(user.address, USDC_MINT);
    expect(landed.rent).toBe(lamportsOf(usdcAccount));
    expect(changes.lamports).toBe(lamportsOf(user.address) - before);
    expect(changes.lamports).toBe(-(100_000_000n + landed.fee + landed.rent));
    const fill = filledAmountsOf(WSOL_MINT, USDC_MINT, changes);
    expect(fill).toEqual({ filledInput: 100_000_000n, filledOutput: tokensOf(USDC_MINT) });
    expect(fill.filledOutput).toBeGreaterThanOrEqual(minimumOutput);
  });

  it('SOL out: the lamports unwrapped to the wallet, with the fee added back', async () => {
    const usdcBefore = tokensOf(USDC_MINT);
    const before = lamportsOf(user.address);
    const { signature, minimumOutput } = swapNative(USDC_MINT, usdcBefore / 2n);
    const { landed, changes } = await changesOf(signature);
    expect(changes.tokens.get(WSOL_MINT)).toBe(0n);
    // a wSOL account created for the output and closed: its rent came back, none is counted
    expect(landed.rent).toBe(0n);
    const fill = filledAmountsOf(USDC_MINT, WSOL_MINT, changes);
    expect(fill.filledInput).toBe(usdcBefore - tokensOf(USDC_MINT));
    expect(fill.filledOutput).toBe(lamportsOf(user.address) - before + landed.fee);
    expect(fill.filledOutput).toBeGreaterThanOrEqual(minimumOutput);
  });

  it('a bundle\'s tip and a paper fill\'s costs are not counted as SOL the order moved', () => {
    const tokens = new Map([[WSOL_MINT, -1_000_000n], [USDC_MINT, 150_000n]]);
    expect(filledAmountsOf(WSOL_MINT, USDC_MINT, { lamports: -(10_000n + 5_000n), tokens, fee: 10_000n, tip: 5_000n })).toEqual({ filledInput: 1_000_000n, filledOutput: 150_000n });
    // token accounts only for any other mint: lamports never count toward USDC
    expect(filledAmountsOf(USDC_MINT, WSOL_MINT, { lamports: 2_000_000n - 5_000n, tokens: new Map([[USDC_MINT, -300_000n]]), fee: 5_000n })).toEqual({ filledInput: 300_000n, filledOutput: 2_000_000n });
  });
});
