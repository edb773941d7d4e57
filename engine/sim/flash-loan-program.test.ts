import { describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT, associatedTokenAddress, buildFittedTransaction, tokenTransferInstruction, type InstructionInput } from '../chain/index.js';
import { KLEND_PROGRAM_ID, KlendError, flashBorrowInstruction, flashLoanFee, flashRepayInstruction, loadFlashLoanReserves, type FlashLoanReserve, type ReadAccounts } from '../lending/index.js';
import { strangerKeypair, testChain, trader } from './testing/chain-fixtures.js';

/** Kamino Lending's flash loans on the simulated chain: the pair lands, anything else fails whole. */

function setup() {
  const chain = testChain();
  const user = trader(chain);
  const sim = chain.genesis.lending.reserves.find((r) => r.liquidityMint === USDC_MINT)!;
  const reserve: FlashLoanReserve = { programId: KLEND_PROGRAM_ID, lendingMarket: chain.genesis.lending.lendingMarket, ...sim };
  const account = associatedTokenAddress(user.keypair.address, USDC_MINT);
  const run = (instructions: InstructionInput[]) => {
    const bytes = buildFittedTransaction({ payer: user.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions }).bytes;
    const simulated = chain.simulateTransaction(bytes);
    if (simulated.err === null) {
      chain.sendTransaction(bytes);
      chain.advanceSlot();
    }
    return simulated.err;
  };
  const balance = (address: string) => chain.getTokenBalance(address)!.amount;
  return { chain, user, reserve, account, run, balance };
}

describe('klend flash loans on the simulator', () => {
  it('borrows and repays in one transaction: the user pays the fee, the reserve keeps its liquidity and gains the fee', () => {
    const { user, reserve, account, run, balance } = setup();
    const amount = 1_000_000_000n; // 1,000 USDC
    const [userBefore, supplyBefore] = [balance(account), balance(reserve.supplyVault)];
    const me = user.keypair.address;
    expect(run([flashBorrowInstruction(reserve, me, account, amount), flashRepayInstruction(reserve, me, account, amount, 0)])).toBeNull();
    const fee = flashLoanFee(amount, reserve.feeSf);
    expect(fee).toBe(500_000n); // 0.05 %
    expect(balance(account)).toBe(userBefore - fee);
    expect(balance(reserve.supplyVault)).toBe(supplyBefore);
    expect(balance(reserve.feeVault)).toBe(fee);
  });

  it('refuses a borrow with no repay, a repay of another amount, two borrows, and a repay the user cannot pay', () => {
    const { chain, user, reserve, account, run, balance } = setup();
    const me = user.keypair.address;
    const before = balance(account);
    expect(run([flashBorrowInstruction(reserve, me, account, 10n)])).toEqual({ InstructionError: [0, { Custom: KlendError.NoFlashRepayFound }] });
    expect(run([flashBorrowInstruction(reserve, me, account, 10n), flashRepayInstruction(reserve, me, account, 9n, 0)])).toEqual({ InstructionError: [0, { Custom: KlendError.InvalidFlashRepay }] });
    expect(run([flashBorrowInstruction(reserve, me, account, 10n), flashBorrowInstruction(reserve, me, account, 10n), flashRepayInstruction(reserve, me, account, 10n, 0)])).toEqual({
      InstructionError: [0, { Custom: KlendError.MultipleFlashBorrows }],
    });
    // Everything sent away, the borrowed USDC included: the repay cannot be paid (the token
    // program's InsufficientFunds), and the borrow is undone with the rest.
    const other = associatedTokenAddress(trader(chain, 1).keypair.address, USDC_MINT);
    const lent = 5_000_000n;
    const err = run([flashBorrowInstruction(reserve, me, account, lent), tokenTransferInstruction(account, other, me, before + lent), flashRepayInstruction(reserve, me, account, lent, 0)]);
    expect(err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    expect(balance(account)).toBe(before);
  });
});

describe('klend reserves read as the executor reads them', () => {
  it('gives the market, vaults, fee and available liquidity of each configured reserve, and refuses what is not one', async () => {
    const chain = testChain();
    const read: ReadAccounts = (addresses) => Promise.resolve(addresses.map((a) => chain.getAccount(a)));
    const sims = chain.genesis.lending.reserves;
    const loaded = await loadFlashLoanReserves(read, sims.map((r) => r.reserve));
    expect(loaded.map((r) => r.liquidityMint).sort()).toEqual([USDC_MINT, WSOL_MINT].sort());
    for (const [i, r] of loaded.entries()) {
      expect(r).toMatchObject({ reserve: sims[i]!.reserve, supplyVault: sims[i]!.supplyVault, feeVault: sims[i]!.feeVault, feeSf: sims[i]!.feeSf, lendingMarket: chain.genesis.lending.lendingMarket });
      expect(r.availableAmount).toBe(chain.getTokenBalance(r.supplyVault)!.amount);
    }
    const refused = (addresses: string[]) => loadFlashLoanReserves(read, addresses).then(() => 'loaded', (e: Error) => e.message);
    expect(await refused([sims[0]!.supplyVault])).toMatch(/owned by .* not Kamino Lending/);
    expect(await refused([sims[0]!.reserve, sims[0]!.reserve])).toMatch(/as another configured reserve does/);
    expect(await refused([strangerKeypair().address])).toMatch(/holds no account/);
  });
});
