/**
 * The simulator's Token-2022 mint TOLL and the two pools that trade it: swaps (swap_v2) move the
 * balances exactly as the engine's quote with transfer fees says, the fee withheld at each
 * destination; the fee follows the epoch; the token program withholds on TransferChecked and
 * refuses a plain Transfer; the v1 swap and wrong mints are refused.
 */
import { describe, expect, it } from 'vitest';

import { buildTransaction } from '../chain/transaction-builder.js';
import {
  SwapMode,
  calculateEpochFee,
  decodeMint,
  quoteSwap,
  withheldAmount,
  type PoolTransferFees,
  type SwapQuote,
} from '../dex/index.js';
import { isRpcError, type RpcError } from './chain-backend.js';
import type { SimChain } from './chain.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './known-accounts.js';
import { TOLL_SYMBOL } from './market.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { SwapProgramError, swapAccountsOf, swapArrays, swapInstruction } from './swap-program.js';
import { swapTransaction, testChain, trader } from './testing/chain-fixtures.js';

const SLOTS_PER_EPOCH = 4;

function tollPools(chain: SimChain): SimPoolInfo[] {
  return chain.genesis.market.pools.filter((p) => p.tokenA.programId === TOKEN_2022_PROGRAM_ID || p.tokenB.programId === TOKEN_2022_PROGRAM_ID);
}

/**
 * The quote a client makes from what it can read: the pool's view, both mints decoded from their
 * accounts, and the epoch of the next slot from getEpochInfo.
 */
function clientQuote(chain: SimChain, info: SimPoolInfo, aToB: boolean, exactIn: boolean, amount: bigint): SwapQuote {
  const view = chain.pool(info.address)!;
  const mintA = chain.getAccount(info.tokenA.mint)!;
  const mintB = chain.getAccount(info.tokenB.mint)!;
  const epochInfo = chain.epochInfo();
  const nextEpoch = epochInfo.slotIndex + 1n < epochInfo.slotsInEpoch ? epochInfo.epoch : epochInfo.epoch + 1n;
  const fees: PoolTransferFees = {
    epoch: nextEpoch,
    tokenA: decodeMint(mintA.owner, mintA.data).transferFeeConfig,
    tokenB: decodeMint(mintB.owner, mintB.data).transferFeeConfig,
  };
  const quote = quoteSwap(view.pool, { aToB, mode: exactIn ? SwapMode.ExactIn : SwapMode.ExactOut, amount }, view.ctx, fees);
  if (!quote.ok) throw new Error(quote.message);
  expect(quote.transferFees).toBeDefined();
  return quote;
}

interface Snapshot {
  traderA: bigint;
  traderB: bigint;
  vaultA: bigint;
  vaultB: bigint;
  withheld: Map<string, bigint>;
}

function snapshot(chain: SimChain, info: SimPoolInfo, who = trader(chain)): Snapshot {
  const accounts = [who.tokenAccounts.get(info.tokenA.mint)!, who.tokenAccounts.get(info.tokenB.mint)!, info.vaultA, info.vaultB];
  const withheld = new Map<string, bigint>();
  for (const a of accounts) withheld.set(a, withheldAmount(chain.getAccount(a)!.data) ?? 0n);
  const [traderA, traderB, vaultA, vaultB] = accounts.map((a) => chain.getTokenBalance(a)!.amount) as [bigint, bigint, bigint, bigint];
  return { traderA, traderB, vaultA, vaultB, withheld };
}

/** Sends the swap, lands it, and checks every balance and withheld amount against the quote. */
function swapAndCheck(chain: SimChain, info: SimPoolInfo, aToB: boolean, exactIn: boolean, amount: bigint): SwapQuote {
  const who = trader(chain);
  const quote = clientQuote(chain, info, aToB, exactIn, amount);
  const fees = quote.transferFees!;
  const before = snapshot(chain, info);
  const threshold = exactIn ? quote.amountOut : quote.amountIn;
  const signature = chain.sendTransaction(swapTransaction(chain, who, info, { aToB, exactIn, amount, threshold }));
  chain.advanceSlot();
  expect(chain.signatureStatus(signature)!.err).toBeNull();
  const after = snapshot(chain, info);
  const [traderIn, traderOut, vaultIn, vaultOut] = aToB ? (['traderA', 'traderB', 'vaultA', 'vaultB'] as const) : (['traderB', 'traderA', 'vaultB', 'vaultA'] as const);
  // What left and reached the trader is the quote's amountIn / amountOut.
  expect(before[traderIn] - after[traderIn]).toBe(quote.amountIn);
  expect(after[traderOut] - before[traderOut]).toBe(quote.amountOut);
  // The pool took and paid its own amounts.
  expect(after[vaultIn] - before[vaultIn]).toBe(fees.poolAmountIn);
  expect(before[vaultOut] - after[vaultOut]).toBe(fees.poolAmountOut);
  // The fees are withheld where each transfer landed.
  const vaultInKey = aToB ? info.vaultA : info.vaultB;
  const traderOutKey = who.tokenAccounts.get((aToB ? info.tokenB : info.tokenA).mint)!;
  expect(after.withheld.get(vaultInKey)! - before.withheld.get(vaultInKey)!).toBe(fees.input);
  expect(after.withheld.get(traderOutKey)! - before.withheld.get(traderOutKey)!).toBe(fees.output);
  if (exactIn) expect(quote.amountIn).toBe(amount);
  else expect(quote.amountOut).toBe(amount);
  return quote;
}

describe('TOLL, the simulator\'s Token-2022 mint with a transfer fee', () => {
  it('is served over the chain as a Token-2022 mint, and its pools are a dexa_amm and a dexc_whirlpool', () => {
    const chain = testChain();
    const toll = chain.tokens().find((t) => t.symbol === TOLL_SYMBOL)!;
    const account = chain.getAccount(toll.mint)!;
    expect(account.owner).toBe(TOKEN_2022_PROGRAM_ID);
    expect(decodeMint(account.owner, account.data).transferFeeConfig?.olderTransferFee.transferFeeBasisPoints).toBe(100);
    expect(tollPools(chain).map((p) => p.dex)).toEqual(['dexa_amm', 'dexc_whirlpool']);
    const ata = trader(chain).tokenAccounts.get(toll.mint)!;
    expect(chain.getAccount(ata)!.owner).toBe(TOKEN_2022_PROGRAM_ID);
    expect(chain.getAccount(ata)!.data).toHaveLength(182);
    expect(chain.getTokenBalance(ata)!.decimals).toBe(6);
  });

  it.each(['dexa_amm', 'dexc_whirlpool'])('swaps on the %s TOLL pool move every balance exactly as the quote with transfer fees says', (dex) => {
    const chain = testChain({ slotsPerEpoch: SLOTS_PER_EPOCH });
    chain.advanceSlot();
    const info = tollPools(chain).find((p) => p.dex === dex)!;
    const tollIsA = info.tokenA.programId === TOKEN_2022_PROGRAM_ID;
    const tollAtoms = (whole: bigint): bigint => whole * 1_000_000n;
    const otherAtoms = (usd: number): bigint => {
      const other = tollIsA ? info.tokenB : info.tokenA;
      return BigInt(Math.floor((usd / other.referencePriceUsd) * 10 ** other.decimals));
    };
    // Sell TOLL, buy TOLL, exact in and exact out, small and large (the large ones hit the 5,000 TOLL cap).
    const sellToll = tollIsA;
    const cases: [boolean, boolean, bigint][] = [
      [sellToll, true, tollAtoms(1_000n)],
      [!sellToll, true, otherAtoms(2_000)],
      [sellToll, false, otherAtoms(500)],
      [!sellToll, false, tollAtoms(3_000n)],
      [sellToll, true, tollAtoms(600_000n)],
    ];
    let capped = 0;
    for (const [aToB, exactIn, amount] of cases) {
      const quote = swapAndCheck(chain, info, aToB, exactIn, amount);
      const tollFee = aToB === tollIsA ? quote.transferFees!.input : quote.transferFees!.output;
      expect(tollFee).toBeGreaterThan(0n);
      if (tollFee === 5_000_000_000n) capped++;
    }
    expect(capped).toBe(1);
  });

  it('charges the older fee before epoch 2 and the newer one from it on, on chain and in the quote', () => {
    const chain = testChain({ slotsPerEpoch: SLOTS_PER_EPOCH });
    const info = tollPools(chain).find((p) => p.dex === 'dexa_amm')!;
    const aToB = info.tokenA.programId === TOKEN_2022_PROGRAM_ID;
    const amount = 10_000_000_000n; // 10,000 TOLL
    const early = swapAndCheck(chain, info, aToB, true, amount);
    expect(chain.epochInfo().epoch).toBe(0n);
    expect(early.transferFees!.input).toBe(100_000_000n); // 1 %
    chain.advanceSlot(2 * SLOTS_PER_EPOCH - 1 - Number(chain.slot()));
    expect(chain.epochInfo().epoch).toBe(1n);
    // The next slot is the first of epoch 2.
    const late = swapAndCheck(chain, info, aToB, true, amount);
    expect(chain.epochInfo().epoch).toBe(2n);
    expect(late.transferFees!.input).toBe(150_000_000n); // 1.5 %
    const toll = chain.getAccount(aToB ? info.tokenA.mint : info.tokenB.mint)!;
    const config = decodeMint(toll.owner, toll.data).transferFeeConfig!;
    expect(calculateEpochFee(config, 1n, amount)).toBe(100_000_000n);
    expect(calculateEpochFee(config, 2n, amount)).toBe(150_000_000n);
  });

  it('fails on its limits after the fees: exact in below the minimum received, exact out above the maximum sent', () => {
    const chain = testChain();
    const info = tollPools(chain).find((p) => p.dex === 'dexc_whirlpool')!;
    const who = trader(chain);
    const exactIn = clientQuote(chain, info, true, true, 50_000_000n);
    const exactOut = clientQuote(chain, info, false, false, 50_000_000n);
    for (const args of [
      { aToB: true, exactIn: true, amount: 50_000_000n, threshold: exactIn.amountOut + 1n },
      { aToB: false, exactIn: false, amount: 50_000_000n, threshold: exactOut.amountIn - 1n },
    ]) {
      let error: unknown;
      try {
        chain.sendTransaction(swapTransaction(chain, who, info, args));
      } catch (err) {
        error = err;
      }
      expect(isRpcError(error)).toBe(true);
      expect(((error as RpcError).context.data as { err: unknown }).err).toEqual({ InstructionError: [0, { Custom: SwapProgramError.SlippageExceeded }] });
    }
  });

  it('refuses the v1 swap on a TOLL pool, and swap_v2 with a mint that is not the pool\'s', () => {
    const chain = testChain();
    const info = tollPools(chain).find((p) => p.dex === 'dexa_amm')!;
    const who = trader(chain);
    const pool = chain.pool(info.address)!.pool;
    const accounts = swapAccountsOf(info, who.keypair.address, who.tokenAccounts.get(info.tokenA.mint)!, who.tokenAccounts.get(info.tokenB.mint)!, swapArrays(info, pool, true));
    const send = (ix: ReturnType<typeof swapInstruction>): unknown => {
      try {
        chain.sendTransaction(buildTransaction({ payer: who.keypair, instructions: [ix], recentBlockhash: chain.latestBlockhash().blockhash }));
      } catch (err) {
        return ((err as RpcError).context.data as { err: unknown }).err;
      }
      return null;
    };
    const args = { amount: 1_000_000n, otherAmountThreshold: 0n, aToB: true, exactIn: true };
    const { v2, ...v1 } = accounts;
    expect(send(swapInstruction(v1, args))).toEqual({ InstructionError: [0, 'IncorrectProgramId'] });
    const wrongMint = { ...accounts, v2: { ...v2!, mintB: chain.tokens()[0]!.mint === v2!.mintB ? chain.tokens()[1]!.mint : chain.tokens()[0]!.mint } };
    expect(send(swapInstruction(wrongMint, args))).toEqual({ InstructionError: [0, { Custom: SwapProgramError.InvalidMint }] });
    const wrongProgram = { ...accounts, v2: { ...v2!, tokenProgramA: v2!.tokenProgramA === TOKEN_PROGRAM_ID ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID } };
    expect(send(swapInstruction(wrongProgram, args))).toEqual({ InstructionError: [0, 'IncorrectProgramId'] });
    expect(send(swapInstruction(accounts, args))).toBeNull();
  });

  it('withholds the fee on a Token-2022 TransferChecked and refuses a plain Transfer of TOLL', () => {
    const chain = testChain();
    const toll = chain.tokens().find((t) => t.symbol === TOLL_SYMBOL)!;
    const from = trader(chain, 0);
    const to = trader(chain, 1);
    const source = from.tokenAccounts.get(toll.mint)!;
    const destination = to.tokenAccounts.get(toll.mint)!;
    const amount = 1_234_567n;
    const checked = new Uint8Array(10);
    checked[0] = 12;
    new DataView(checked.buffer).setBigUint64(1, amount, true);
    checked[9] = 6;
    const plain = checked.slice(0, 9);
    plain[0] = 3;
    const tx = (data: Uint8Array, withMint: boolean) =>
      buildTransaction({
        payer: from.keypair,
        instructions: [
          {
            programId: TOKEN_2022_PROGRAM_ID,
            accounts: [
              { pubkey: source, isSigner: false, isWritable: true },
              ...(withMint ? [{ pubkey: toll.mint, isSigner: false, isWritable: false }] : []),
              { pubkey: destination, isSigner: false, isWritable: true },
              { pubkey: from.keypair.address, isSigner: true, isWritable: false },
            ],
            data,
          },
        ],
        recentBlockhash: chain.latestBlockhash().blockhash,
      });
    const before = [chain.getTokenBalance(source)!.amount, chain.getTokenBalance(destination)!.amount];
    let refused: unknown;
    try {
      chain.sendTransaction(tx(plain, false));
    } catch (err) {
      refused = ((err as RpcError).context.data as { err: unknown }).err;
    }
    expect(refused).toEqual({ InstructionError: [0, { Custom: 31 }] }); // MintRequiredForTransfer
    const signature = chain.sendTransaction(tx(checked, true));
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)!.err).toBeNull();
    const fee = (amount * 100n + 9_999n) / 10_000n;
    expect(chain.getTokenBalance(source)!.amount).toBe(before[0]! - amount);
    expect(chain.getTokenBalance(destination)!.amount).toBe(before[1]! + amount - fee);
    expect(withheldAmount(chain.getAccount(destination)!.data)).toBe(fee);
  });
});
