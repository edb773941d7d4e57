import { describe, expect, it } from 'vitest';

import { associatedTokenAddress, createAssociatedTokenIdempotentInstruction } from '../../chain/associated-token.js';
import { buildFittedTransaction } from '../../chain/fitted-transaction.js';
import {
  AmmV4Error,
  ClmmError,
  DEX_KINDS,
  Dex,
  DlmmError,
  SwapMode,
  WhirlpoolError,
  buildSwapRouteTransaction,
  planSwapRoute,
  swapInstructionFor,
  type SwapPool,
} from '../../dex/index.js';
import type { SimChain } from '../chain.js';
import { USDC_MINT, WSOL_MINT } from '../known-accounts.js';
import { solUsdcPool, strangerKeypair, testChain, trader } from '../testing/chain-fixtures.js';
import { chainSwapPool } from '../testing/real-swaps.js';

/**
 * The real swap instructions (engine/dex builders) executed by the simulated DEX programs: the
 * wallet's balances move by exactly the engine's quote, and the programs' checks fail as the real
 * programs fail, changing nothing but the fee.
 */

const SOL = 1_000_000_000n;

function balance(chain: SimChain, account: string): bigint {
  return chain.getTokenBalance(account)?.amount ?? 0n;
}

function land(chain: SimChain, tx: Uint8Array): unknown {
  const signature = chain.sendTransaction(tx, { skipPreflight: true });
  chain.advanceSlot();
  const status = chain.signatureStatus(signature);
  expect(status).not.toBeNull();
  return status!.err;
}

const expectedError: Record<Dex, number> = {
  [Dex.Amm]: AmmV4Error.ExceededSlippage,
  [Dex.Clmm]: ClmmError.TooLittleOutputReceived,
  [Dex.Whirlpool]: WhirlpoolError.AmountOutBelowMinimum,
  [Dex.Dlmm]: DlmmError.ExceededAmountSlippageTolerance,
};
const expectedErrorOut: Record<Dex, number> = {
  [Dex.Amm]: AmmV4Error.ExceededSlippage,
  [Dex.Clmm]: ClmmError.TooMuchInputPaid,
  [Dex.Whirlpool]: WhirlpoolError.AmountInAboveMaximum,
  [Dex.Dlmm]: DlmmError.ExceededAmountSlippageTolerance,
};

describe('real swap instructions on the simulated DEX programs', () => {
  for (const dex of DEX_KINDS) {
    it(`${dex}: exact in and exact out move the wallet's tokens by exactly the engine's quote`, () => {
      const chain = testChain();
      const who = trader(chain);
      const info = solUsdcPool(chain, dex);
      const sol = who.tokenAccounts.get(WSOL_MINT)!;
      const usdc = who.tokenAccounts.get(USDC_MINT)!;
      for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
        const pool = chainSwapPool(chain, info.address);
        const amount = mode === SwapMode.ExactIn ? 2n * SOL : 150_000_000n; // 2 SOL in, or 150 USDC out
        const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [pool], mode, amount, slippageBps: 50 });
        const tx = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: chain.latestBlockhash().blockhash, computeUnitPrice: 1000n });
        expect(tx.version).toBe('legacy');
        const [solBefore, usdcBefore] = [balance(chain, sol), balance(chain, usdc)];
        const simulated = chain.simulateTransaction(tx.bytes);
        expect(simulated.err).toBeNull();
        expect(land(chain, tx.bytes)).toBeNull();
        const quote = plan.hops[0]!.quote;
        expect(solBefore - balance(chain, sol)).toBe(quote.amountIn);
        expect(balance(chain, usdc) - usdcBefore).toBe(quote.amountOut);
        if (mode === SwapMode.ExactOut) expect(quote.amountOut).toBe(amount);
        // The pool account now decodes to the state the quote predicted.
        const after = chainSwapPool(chain, info.address).state.pool;
        if (after.dex === Dex.Amm) expect(after.reserveB).toBe((pool.state.pool as typeof after).reserveB - quote.amountOut);
        else if (after.dex === Dex.Dlmm) expect(after.activeId).toBe(quote.activeIdAfter ?? (pool.state.pool as typeof after).activeId);
        else expect(after.sqrtPrice).toBe(quote.sqrtPriceAfter);
      }
    });

    it(`${dex}: slippage beyond the threshold fails with the program's error and changes nothing but the fee`, () => {
      const chain = testChain();
      const who = trader(chain);
      const info = solUsdcPool(chain, dex);
      const pool = chainSwapPool(chain, info.address);
      for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
        const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops: [pool], mode, amount: mode === SwapMode.ExactIn ? SOL : 50_000_000n, slippageBps: 0 });
        const quote = plan.hops[0]!.quote;
        const ix = swapInstructionFor({
          pool,
          aToB: plan.hops[0]!.aToB,
          mode,
          amount: plan.hops[0]!.amount,
          // One atom more than the quote gives / one less than it takes.
          otherAmountThreshold: mode === SwapMode.ExactIn ? quote.amountOut + 1n : quote.amountIn - 1n,
          owner: who.keypair.address,
          tokenAccountA: who.tokenAccounts.get(info.tokenA.mint)!,
          tokenAccountB: who.tokenAccounts.get(info.tokenB.mint)!,
        });
        const tx = buildFittedTransaction({ payer: who.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions: [ix] });
        const code = mode === SwapMode.ExactIn ? expectedError[dex] : expectedErrorOut[dex];
        const simulated = chain.simulateTransaction(tx.bytes);
        expect(simulated.err).toEqual({ InstructionError: [0, { Custom: code }] });
        expect(simulated.logs.some((l) => l.includes(`custom program error: 0x${code.toString(16)}`))).toBe(true);
        const poolBefore = chain.getAccount(info.address)!.data;
        const lamportsBefore = chain.getAccount(who.keypair.address)!.lamports;
        const tokensBefore = [...who.tokenAccounts.values()].map((a) => balance(chain, a));
        expect(land(chain, tx.bytes)).toEqual({ InstructionError: [0, { Custom: code }] });
        expect(Buffer.from(chain.getAccount(info.address)!.data).equals(Buffer.from(poolBefore))).toBe(true);
        expect([...who.tokenAccounts.values()].map((a) => balance(chain, a))).toEqual(tokensBefore);
        expect(chain.getAccount(who.keypair.address)!.lamports).toBe(lamportsBefore - 5000n);
      }
    });
  }

  it("fails a wrong vault or another wallet's token account as the programs do", () => {
    const chain = testChain();
    const who = trader(chain);
    const other = trader(chain, 1);
    const blockhash = chain.latestBlockhash().blockhash;
    const leg = (dex: Dex, change: (pool: SwapPool) => SwapPool, accounts = who) => {
      const info = solUsdcPool(chain, dex);
      const pool = change(chainSwapPool(chain, info.address));
      const aToB = info.tokenA.mint === WSOL_MINT;
      return swapInstructionFor({
        pool,
        aToB,
        mode: SwapMode.ExactIn,
        amount: SOL / 10n,
        otherAmountThreshold: 0n,
        owner: who.keypair.address,
        tokenAccountA: accounts.tokenAccounts.get(info.tokenA.mint)!,
        tokenAccountB: accounts.tokenAccounts.get(info.tokenB.mint)!,
      });
    };
    const simulate = (ix: ReturnType<typeof leg>) => chain.simulateTransaction(buildFittedTransaction({ payer: who.keypair, recentBlockhash: blockhash, instructions: [ix] }).bytes).err;
    const otherVault = (dex: Dex) => solUsdcPool(chain, dex === Dex.Amm ? Dex.Whirlpool : Dex.Amm).vaultA;
    // AMM v4: the coin vault must be AmmInfo's.
    expect(simulate(leg(Dex.Amm, (p) => ({ ...p, ammKeys: { ...p.ammKeys!, coinVault: otherVault(Dex.Amm) } })))).toEqual({ InstructionError: [0, { Custom: AmmV4Error.InvalidCoinVault }] });
    // Whirlpool: vault A is an address constraint (Anchor 2012).
    const wp = (p: SwapPool): SwapPool => ({ ...p, state: { ...p.state, pool: { ...p.state.pool, vaultA: otherVault(Dex.Whirlpool) } as SwapPool['state']['pool'] } });
    expect(simulate(leg(Dex.Whirlpool, wp))).toEqual({ InstructionError: [0, { Custom: 2012 }] });
    // Raydium CLMM: a vault of another pool is InvalidInputPoolVault.
    expect(simulate(leg(Dex.Clmm, wp))).toEqual({ InstructionError: [0, { Custom: ClmmError.InvalidInputPoolVault }] });
    // DLMM: reserves belong to the pair (has_one, Anchor 2001).
    const dl = (p: SwapPool): SwapPool => ({ ...p, state: { ...p.state, pool: { ...p.state.pool, reserveX: otherVault(Dex.Dlmm) } as SwapPool['state']['pool'] } });
    expect(simulate(leg(Dex.Dlmm, dl))).toEqual({ InstructionError: [0, { Custom: 2001 }] });
    // Another wallet's token accounts: the token program's OwnerMismatch (4) on the input transfer.
    for (const dex of DEX_KINDS) expect(simulate(leg(dex, (p) => p, other))).toEqual({ InstructionError: [0, { Custom: 4 }] });
  });

  it('runs a two-hop arbitrage (SOL → USDC → SOL) as one transaction; the intermediate surplus stays in the wallet', () => {
    const chain = testChain();
    const who = trader(chain);
    const sol = who.tokenAccounts.get(WSOL_MINT)!;
    const usdc = who.tokenAccounts.get(USDC_MINT)!;
    const hops = [chainSwapPool(chain, solUsdcPool(chain, Dex.Whirlpool).address), chainSwapPool(chain, solUsdcPool(chain, Dex.Dlmm).address)];
    const plan = planSwapRoute({ owner: who.keypair.address, inputMint: WSOL_MINT, hops, mode: SwapMode.ExactIn, amount: 3n * SOL, slippageBps: 30 });
    expect(plan.outputMint).toBe(WSOL_MINT);
    expect(plan.hops[1]!.amount).toBe(plan.hops[0]!.otherAmountThreshold);
    const tx = buildSwapRouteTransaction(plan, { payer: who.keypair, recentBlockhash: chain.latestBlockhash().blockhash });
    const [solBefore, usdcBefore] = [balance(chain, sol), balance(chain, usdc)];
    expect(land(chain, tx.bytes)).toBeNull();
    expect(balance(chain, sol) - solBefore).toBe(plan.hops[1]!.quote.amountOut - 3n * SOL);
    expect(balance(chain, usdc) - usdcBefore).toBe(plan.hops[0]!.quote.amountOut - plan.hops[0]!.otherAmountThreshold);
  });

  it('creates the associated token accounts a fresh wallet receives, idempotently, and pays their rent', () => {
    const chain = testChain();
    const funder = trader(chain);
    const fresh = strangerKeypair(77);
    const blockhash = () => chain.latestBlockhash().blockhash;
    const freshSol = associatedTokenAddress(fresh.address, WSOL_MINT);
    // Fund the fresh wallet: SOL for fees and rent, and wrapped SOL into its new account.
    const fund = buildFittedTransaction({
      payer: funder.keypair,
      recentBlockhash: blockhash(),
      instructions: [
        { programId: '11111111111111111111111111111111', accounts: [{ pubkey: funder.keypair.address, isSigner: true, isWritable: true }, { pubkey: fresh.address, isSigner: false, isWritable: true }], data: Uint8Array.of(2, 0, 0, 0, 0, 0x94, 0x35, 0x77, 0, 0, 0, 0) },
        createAssociatedTokenIdempotentInstruction({ payer: funder.keypair.address, owner: fresh.address, mint: WSOL_MINT }),
        { programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', accounts: [{ pubkey: funder.tokenAccounts.get(WSOL_MINT)!, isSigner: false, isWritable: true }, { pubkey: freshSol, isSigner: false, isWritable: true }, { pubkey: funder.keypair.address, isSigner: true, isWritable: false }], data: Uint8Array.of(3, 0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0) },
      ],
    });
    expect(land(chain, fund.bytes)).toBeNull();
    expect(balance(chain, freshSol)).toBe(SOL);
    // The fresh wallet sells 0.5 SOL for USDC; its USDC account is created in the same transaction.
    const freshUsdc = associatedTokenAddress(fresh.address, USDC_MINT);
    expect(chain.getAccount(freshUsdc)).toBeNull();
    const plan = planSwapRoute({ owner: fresh.address, inputMint: WSOL_MINT, hops: [chainSwapPool(chain, solUsdcPool(chain, Dex.Clmm).address)], mode: SwapMode.ExactIn, amount: SOL / 2n, slippageBps: 100 });
    expect(plan.setupInstructions).toHaveLength(1);
    const lamportsBefore = chain.getAccount(fresh.address)!.lamports;
    const tx = buildSwapRouteTransaction(plan, { payer: fresh, recentBlockhash: blockhash() });
    expect(land(chain, tx.bytes)).toBeNull();
    expect(balance(chain, freshUsdc)).toBe(plan.hops[0]!.quote.amountOut);
    expect(lamportsBefore - chain.getAccount(fresh.address)!.lamports).toBe(5000n + 2_039_280n);
    // Again: the account exists, CreateIdempotent is a no-op.
    const again = planSwapRoute({ owner: fresh.address, inputMint: WSOL_MINT, hops: [chainSwapPool(chain, solUsdcPool(chain, Dex.Clmm).address)], mode: SwapMode.ExactIn, amount: SOL / 4n, slippageBps: 100 });
    expect(land(chain, buildSwapRouteTransaction(again, { payer: fresh, recentBlockhash: blockhash() }).bytes)).toBeNull();
    expect(balance(chain, freshUsdc)).toBe(plan.hops[0]!.quote.amountOut + again.hops[0]!.quote.amountOut);
  });
});
