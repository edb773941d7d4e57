import { describe, expect, it } from 'vitest';

import {
  DEX_KINDS,
  Dex,
  createDecoderRegistry,
  withAmmVaultAccounts,
  type BinArray,
  type DlmmLbPair,
  type SwapQuote,
} from '../dex/index.js';
import { isRpcError, type RpcError, RpcErrorCode } from './chain-backend.js';
import type { SimChain } from './chain.js';
import { computeUnitPrice } from './flow.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { SWAP_DATA_SIZE, SwapProgramError, decodeSwapData, encodeSwapData } from './swap-program.js';
import { quoteOnChain, solUsdcPool, swapTransaction, testChain, trader } from './testing/chain-fixtures.js';

const registry = createDecoderRegistry();

/** The pool as the engine's decoders read it from the chain's bytes now. */
/** The pool as the chain holds it (an AMM v4 pool with its vault balances: AmmInfo holds no reserves). */
function decodedPool(chain: SimChain, info: SimPoolInfo) {
  const account = chain.getAccount(info.address)!;
  const decoded = registry.decodeAccount(account.owner, account.data, info.address);
  if (decoded.kind !== 'pool') throw new Error('not a pool');
  if (decoded.pool.dex !== Dex.Amm) return decoded.pool;
  const pool = withAmmVaultAccounts(decoded.pool, chain.getAccount(info.vaultA), chain.getAccount(info.vaultB));
  if (typeof pool === 'string') throw new Error(pool);
  return pool;
}

function balance(chain: SimChain, address: string): bigint {
  return chain.getTokenBalance(address)!.amount;
}

function lamports(chain: SimChain, address: string): bigint {
  return chain.getAccount(address)!.lamports;
}

/** Atoms of the pool's token A or B worth about `usd` at the reference price. */
function atomsWorth(info: SimPoolInfo, side: 'A' | 'B', usd: number): bigint {
  const token = side === 'A' ? info.tokenA : info.tokenB;
  return BigInt(Math.floor((usd / token.referencePriceUsd) * 10 ** token.decimals));
}

/** An exact-in A→B amount (from $40k, doubling) whose quote crosses a tick or several bins. */
function crossingSize(chain: SimChain, info: SimPoolInfo): bigint {
  for (let usd = 40_000; usd < 20_000_000; usd *= 2) {
    const amount = atomsWorth(info, 'A', usd);
    const quote = quoteOnChain(chain, info, true, true, amount) as SwapQuote & { bins?: unknown[] };
    if (!quote.ok) break;
    const pool = chain.pool(info.address)!.pool;
    if (pool.dex === Dex.Amm) return amount;
    if (pool.dex === Dex.Dlmm ? quote.bins!.length >= 3 : quote.liquidityAfter !== pool.liquidity) return amount;
  }
  throw new Error(`no crossing swap found on ${info.dex}`);
}

/** Checks that the pool account now holds exactly the state the quote says the swap leaves. */
function expectPoolMovedAsQuoted(chain: SimChain, info: SimPoolInfo, before: ReturnType<typeof decodedPool>, quote: SwapQuote, aToB: boolean): void {
  const after = decodedPool(chain, info);
  switch (after.dex) {
    case Dex.Amm: {
      const b = before as typeof after;
      expect([after.reserveA, after.reserveB]).toEqual(
        aToB ? [b.reserveA + quote.amountIn, b.reserveB - quote.amountOut] : [b.reserveA - quote.amountOut, b.reserveB + quote.amountIn],
      );
      break;
    }
    case Dex.Whirlpool:
    case Dex.Clmm:
      expect({ sqrtPrice: after.sqrtPrice, tick: after.tick, liquidity: after.liquidity }).toEqual({
        sqrtPrice: quote.sqrtPriceAfter,
        tick: quote.tickAfter,
        liquidity: quote.liquidityAfter,
      });
      break;
    case Dex.Dlmm: {
      const q = quote as SwapQuote & { bins: { id: number; amountX: bigint; amountY: bigint }[]; vParametersAfter: DlmmLbPair['vParameters'] };
      expect(after.activeId).toBe(q.activeIdAfter);
      expect(after.vParameters).toEqual(q.vParametersAfter);
      const bins = new Map<number, { amountX: bigint; amountY: bigint }>();
      for (const a of info.arrays) {
        const account = chain.getAccount(a.address)!;
        const decoded = registry.decodeAccount(account.owner, account.data, a.address) as { binArray: BinArray };
        for (const bin of decoded.binArray.bins) bins.set(bin.id, bin);
      }
      expect(q.bins.length).toBeGreaterThan(0);
      for (const bin of q.bins) expect({ amountX: bins.get(bin.id)!.amountX, amountY: bins.get(bin.id)!.amountY }).toEqual({ amountX: bin.amountX, amountY: bin.amountY });
      break;
    }
  }
  // The chain's own view is what the decoders read.
  const view = chain.pool(info.address)!.pool;
  expect(info.dex === Dex.Clmm ? { ...view, feeRate: undefined } : view).toEqual(after);
}

describe('the swap instruction data', () => {
  it('round-trips the documented 19-byte layout', () => {
    const args = { amount: 123_456_789n, otherAmountThreshold: (1n << 64n) - 1n, aToB: true, exactIn: false };
    const data = encodeSwapData(args);
    expect(data).toHaveLength(SWAP_DATA_SIZE);
    expect(Array.from(data.subarray(0, 1))).toEqual([9]);
    expect(decodeSwapData(data)).toEqual(args);
    expect(decodeSwapData(data.subarray(0, 18))).toBeNull();
  });
});

describe.each(DEX_KINDS)('a swap on a %s pool', (dex) => {
  it('moves the pool exactly as quoteSwap predicted, moves the tokens, charges the fee and is confirmed', () => {
    const chain = testChain();
    const info = solUsdcPool(chain, dex);
    const who = trader(chain);
    const tokenA = who.tokenAccounts.get(info.tokenA.mint)!;
    const tokenB = who.tokenAccounts.get(info.tokenB.mint)!;

    // Sell enough token A to cross initialized ticks (CL) or bins (DLMM), then buy A back exact-out.
    const sell = crossingSize(chain, info);
    for (const [aToB, exactIn, amount] of [
      [true, true, sell],
      [false, false, sell / 2n],
    ] as const) {
      const before = decodedPool(chain, info);
      const quote = quoteOnChain(chain, info, aToB, exactIn, amount);
      if (!quote.ok) throw new Error(quote.message);
      const balances = [tokenA, tokenB, info.vaultA, info.vaultB].map((a) => balance(chain, a));
      const sol = lamports(chain, who.keypair.address);
      const threshold = exactIn ? quote.amountOut : quote.amountIn;
      const signature = chain.sendTransaction(swapTransaction(chain, who, info, { aToB, exactIn, amount, threshold }));
      chain.advanceSlot();
      expect(chain.signatureStatus(signature)).toMatchObject({ err: null, confirmationStatus: 'processed', confirmations: 0 });
      expectPoolMovedAsQuoted(chain, info, before, quote, aToB);
      const [inAccount, outAccount, inVault, outVault] = aToB ? [0, 1, 2, 3] : [1, 0, 3, 2];
      const now = [tokenA, tokenB, info.vaultA, info.vaultB].map((a) => balance(chain, a));
      expect(now[inAccount]! - balances[inAccount]!).toBe(-quote.amountIn);
      expect(now[outAccount]! - balances[outAccount]!).toBe(quote.amountOut);
      expect(now[inVault]! - balances[inVault]!).toBe(quote.amountIn);
      expect(now[outVault]! - balances[outVault]!).toBe(-quote.amountOut);
      // One signature, no priority fee: 5000 lamports (wrapped SOL moves in the token account).
      expect(sol - lamports(chain, who.keypair.address)).toBe(5000n);
      chain.advanceSlot();
      expect(chain.signatureStatus(signature)).toMatchObject({ err: null, confirmationStatus: 'confirmed', confirmations: 1 });
    }
  });

  it('fails with SlippageExceeded when the threshold is not met and changes nothing but the fee', () => {
    const chain = testChain();
    const info = solUsdcPool(chain, dex);
    const who = trader(chain);
    const amount = atomsWorth(info, 'B', 5_000);
    const quote = quoteOnChain(chain, info, false, true, amount);
    if (!quote.ok) throw new Error(quote.message);
    const tx = swapTransaction(chain, who, info, { aToB: false, exactIn: true, amount, threshold: quote.amountOut + 1n, before: [computeUnitPrice(1_000_000n)] });

    // With preflight, the node refuses it with the simulation's error.
    let refusal: unknown;
    try {
      chain.sendTransaction(tx);
    } catch (err) {
      refusal = err;
    }
    expect(isRpcError(refusal)).toBe(true);
    expect(refusal).toMatchObject({
      message: 'Transaction simulation failed: Error processing Instruction 1: custom program error: 0x1771',
      context: { rpcCode: RpcErrorCode.SendTransactionPreflightFailure, data: { err: { InstructionError: [1, { Custom: SwapProgramError.SlippageExceeded }] } } },
    });
    expect(((refusal as RpcError).context.data as { logs: string[] }).logs.join('\n')).toContain('failed: custom program error: 0x1771');

    // Without preflight it lands and fails: fee (5000 + 200_000 units × 1 lamport) only.
    const poolBytes = Buffer.from(chain.getAccount(info.address)!.data);
    const tokens = [info.tokenA.mint, info.tokenB.mint].map((m) => balance(chain, who.tokenAccounts.get(m)!));
    const sol = lamports(chain, who.keypair.address);
    const signature = chain.sendTransaction(tx, { skipPreflight: true });
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toMatchObject({ err: { InstructionError: [1, { Custom: 6001 }] } });
    expect(Buffer.from(chain.getAccount(info.address)!.data).equals(poolBytes)).toBe(true);
    expect([info.tokenA.mint, info.tokenB.mint].map((m) => balance(chain, who.tokenAccounts.get(m)!))).toEqual(tokens);
    expect(sol - lamports(chain, who.keypair.address)).toBe(5000n + 200_000n);
  });

  if (dex !== Dex.Amm) {
    it('fails with MissingSwapAccounts when the swap needs arrays it was not given', () => {
      const chain = testChain();
      const info = solUsdcPool(chain, dex);
      const amount = atomsWorth(info, 'A', 400_000);
      const tx = swapTransaction(chain, trader(chain), info, { aToB: true, exactIn: true, amount, threshold: 0n, arrays: [] });
      const result = chain.simulateTransaction(tx);
      expect(result.err).toEqual({ InstructionError: [0, { Custom: SwapProgramError.MissingSwapAccounts }] });
    });
  }
});

describe('the swap program', () => {
  it('refuses vaults that are not the pool\'s and a trader account of another mint', () => {
    const chain = testChain();
    const info = solUsdcPool(chain, Dex.Whirlpool);
    const other = solUsdcPool(chain, Dex.Clmm);
    const who = trader(chain);
    const amount = atomsWorth(info, 'A', 100);
    const wrongVault = swapTransaction(chain, who, { ...info, vaultA: other.vaultA }, { aToB: true, exactIn: true, amount, threshold: 0n });
    expect(chain.simulateTransaction(wrongVault).err).toEqual({ InstructionError: [0, { Custom: SwapProgramError.InvalidVault }] });
    const swapped = { ...who, tokenAccounts: new Map([[info.tokenA.mint, who.tokenAccounts.get(info.tokenB.mint)!], [info.tokenB.mint, who.tokenAccounts.get(info.tokenA.mint)!]]) };
    const wrongAccount = swapTransaction(chain, swapped, info, { aToB: true, exactIn: true, amount, threshold: 0n });
    expect(chain.simulateTransaction(wrongAccount).err).toEqual({ InstructionError: [0, { Custom: SwapProgramError.InvalidTokenAccount }] });
  });

  it('fails like the token program when the trader holds less than the input', () => {
    const chain = testChain();
    const info = solUsdcPool(chain, Dex.Amm);
    const who = trader(chain);
    const held = balance(chain, who.tokenAccounts.get(info.tokenB.mint)!);
    const quote = quoteOnChain(chain, info, false, true, held + 1n);
    expect(quote.ok).toBe(true);
    const tx = swapTransaction(chain, who, info, { aToB: false, exactIn: true, amount: held + 1n, threshold: 0n });
    expect(chain.simulateTransaction(tx).err).toEqual({ InstructionError: [0, { Custom: 1 }] });
  });
});

/** A sanity check of the fixture itself. */
describe('the test chain', () => {
  it('makes no transactions of its own', () => {
    const chain = testChain();
    chain.advanceSlot(2);
    expect(chain.stats().transactions).toBe(0);
  });
});
