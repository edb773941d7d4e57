import { describe, expect, it } from 'vitest';

import { associatedTokenAddress, buildFittedTransaction, systemTransferInstruction, type Keypair } from '../chain/index.js';
import { SwapMode, buildSwapRouteTransaction, planSwapRoute } from '../dex/index.js';
import { KLEND_PROGRAM_ID, KlendError, flashBorrowInstruction, flashLoanFee, flashRepayInstruction, type FlashLoanReserve } from '../lending/index.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { openPriceGap } from './price-gap.js';
import { currentLookupTables, poolLookupTables, strangerKeypair, testChain, trader } from './testing/chain-fixtures.js';
import { chainSwapPool } from './testing/real-swaps.js';

/**
 * An arbitrage paid for by a flash loan, as the executor sends it: compute budget, the accounts the
 * route buys into, borrow, the swaps, repay, in one transaction from a wallet that holds no wrapped
 * SOL at all. With a gap it lands and the wallet keeps the profit; when it loses the repay cannot
 * be paid and the whole transaction fails: nothing moves but the fee.
 */

const SOL = 1_000_000_000n;

function setup() {
  const chain = testChain({ tokens: 2 });
  const [gapped, other] = chain.pools().filter((p) => p.transferFees === undefined && new Set([p.pool.tokenA, p.pool.tokenB]).has(WSOL_MINT) && new Set([p.pool.tokenA, p.pool.tokenB]).has(USDC_MINT));
  const sim = chain.genesis.lending.reserves.find((r) => r.liquidityMint === WSOL_MINT)!;
  const reserve: FlashLoanReserve = { programId: KLEND_PROGRAM_ID, lendingMarket: chain.genesis.lending.lendingMarket, ...sim };
  // Two wallets with lamports for fees and nothing else.
  const [user, user2] = [strangerKeypair(77), strangerKeypair(78)];
  const funder = trader(chain).keypair;
  const fundTx = buildFittedTransaction({ payer: funder, recentBlockhash: chain.latestBlockhash().blockhash, instructions: [user, user2].map((u) => systemTransferInstruction(funder.address, u.address, SOL)) }).bytes;
  chain.sendTransaction(fundTx);
  chain.advanceSlot();
  const wsol = associatedTokenAddress(user.address, WSOL_MINT);
  return { chain, gapped: gapped!, other: other!, reserve, user, user2: user2!, wsol };
}

/** The shared table (mints, the lending market's accounts) and each pool's own. */
function tablesOf(chain: ReturnType<typeof testChain>, pools: readonly string[]) {
  return currentLookupTables(chain, [...new Set(pools.flatMap((p) => poolLookupTables(chain, p)))]);
}

function send(chain: ReturnType<typeof testChain>, user: Keypair, reserve: FlashLoanReserve, wsol: string, route: [string, string], amount: bigint) {
  const plan = planSwapRoute({ owner: user.address, inputMint: WSOL_MINT, hops: route.map((a) => chainSwapPool(chain, a)), mode: SwapMode.ExactIn, amount, slippageBps: 0, createInputTokenAccount: true });
  const bytes = buildSwapRouteTransaction(plan, {
    payer: user,
    lookupTables: tablesOf(chain, route),
    recentBlockhash: chain.latestBlockhash().blockhash,
    computeUnitLimit: plan.computeUnits + 80_000,
    loan: { borrow: flashBorrowInstruction(reserve, user.address, wsol, amount), repay: (i) => flashRepayInstruction(reserve, user.address, wsol, amount, i) },
  }).bytes;
  const signature = chain.sendTransaction(bytes, { skipPreflight: true });
  chain.advanceSlot();
  return { plan, status: chain.signatureStatus(signature)! };
}

describe('a flash-loan arbitrage on the simulated chain', () => {
  it('lands with a gap (the wallet keeps output − input − fee) and is refused whole when it loses', () => {
    const { chain, gapped, other, reserve, user, user2, wsol } = setup();
    const balance = (a: string) => chain.getTokenBalance(a)?.amount ?? 0n;
    openPriceGap(chain, { pool: gapped.address, reference: other.address, gapBps: 150, direction: gapped.pool.tokenA === WSOL_MINT ? 'up' : 'down' });
    chain.advanceSlot();
    const amount = 20n * SOL;
    const [supply, feeVault] = [balance(reserve.supplyVault), balance(reserve.feeVault)];
    const lamportsBefore = chain.getAccount(user.address)!.lamports;

    // WSOL → USDC where WSOL is dear, USDC → WSOL on the other pool
    const { plan, status } = send(chain, user, reserve, wsol, [gapped.address, other.address], amount);
    expect(status.err).toBeNull();
    const fee = flashLoanFee(amount, reserve.feeSf);
    expect(plan.expectedAmount).toBeGreaterThan(amount + fee);
    expect(balance(wsol)).toBe(plan.expectedAmount - amount - fee);
    expect(balance(reserve.supplyVault)).toBe(supply);
    expect(balance(reserve.feeVault)).toBe(feeVault + fee);

    // The cycle the wrong way round, from the second wallet: it returns less than it borrowed plus
    // the fee; the repay fails (the token program's InsufficientFunds), so the swaps are undone with it.
    const wsol2 = associatedTokenAddress(user2.address, WSOL_MINT);
    const lamports2 = chain.getAccount(user2.address)!.lamports;
    const again = send(chain, user2, reserve, wsol2, [other.address, gapped.address], amount);
    expect(again.plan.expectedAmount).toBeLessThan(amount + fee);
    const repayIndex = 1 + again.plan.setupInstructions.length + 1 + again.plan.swapInstructions.length;
    expect(again.status.err).toEqual({ InstructionError: [repayIndex, { Custom: 1 }] });
    expect(chain.getAccount(wsol2)).toBeNull(); // not even the account the route would have created
    expect(balance(reserve.supplyVault)).toBe(supply);
    expect(balance(reserve.feeVault)).toBe(feeVault + fee);
    expect(chain.getAccount(user2.address)!.lamports).toBe(lamports2 - 5_000n); // the signature fee, nothing else
    expect(chain.getAccount(user.address)!.lamports).toBeLessThan(lamportsBefore);
  });

  it('refuses a borrow whose repay is left out of the transaction', () => {
    const { chain, gapped, other, reserve, user, wsol } = setup();
    const plan = planSwapRoute({ owner: user.address, inputMint: WSOL_MINT, hops: [gapped.address, other.address].map((a) => chainSwapPool(chain, a)), mode: SwapMode.ExactIn, amount: SOL, slippageBps: 0, createInputTokenAccount: true });
    const instructions = [...plan.setupInstructions, flashBorrowInstruction(reserve, user.address, wsol, SOL), ...plan.swapInstructions];
    const bytes = buildFittedTransaction({ payer: user, instructions, lookupTables: tablesOf(chain, [gapped.address, other.address]), recentBlockhash: chain.latestBlockhash().blockhash }).bytes;
    expect(chain.simulateTransaction(bytes).err).toEqual({ InstructionError: [plan.setupInstructions.length, { Custom: KlendError.NoFlashRepayFound }] });
  });
});
