import { describe, expect, it } from 'vitest';

import { associatedTokenAddress, buildFittedTransaction, createAssociatedTokenIdempotentInstruction, createAssociatedTokenInstruction } from '../chain/index.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { strangerKeypair, testChain, trader } from './testing/chain-fixtures.js';

/** The Associated Token Account program of the simulated chain, its failures included. */

describe('associated token account program', () => {
  it('Create makes the account once (rent from the payer); again it fails, CreateIdempotent does not', () => {
    const chain = testChain();
    const payer = trader(chain);
    const owner = strangerKeypair(5).address;
    const tx = (ix: ReturnType<typeof createAssociatedTokenInstruction>) =>
      buildFittedTransaction({ payer: payer.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions: [ix] }).bytes;
    const create = createAssociatedTokenInstruction({ payer: payer.keypair.address, owner, mint: USDC_MINT });
    expect(chain.simulateTransaction(tx(create)).err).toBeNull();
    chain.sendTransaction(tx(create));
    chain.advanceSlot();
    const account = associatedTokenAddress(owner, USDC_MINT);
    expect(chain.getTokenBalance(account)).toEqual({ amount: 0n, decimals: 6 });
    expect(chain.getAccount(account)!.lamports).toBe(2_039_280n);
    // Create on an existing account: the System program's AccountAlreadyInUse (Custom 0).
    const again = chain.simulateTransaction(tx(createAssociatedTokenInstruction({ payer: payer.keypair.address, owner, mint: USDC_MINT })));
    expect(again.err).toEqual({ InstructionError: [0, { Custom: 0 }] });
    expect(again.logs.some((l) => l.includes('already in use'))).toBe(true);
    expect(chain.simulateTransaction(tx(createAssociatedTokenIdempotentInstruction({ payer: payer.keypair.address, owner, mint: USDC_MINT }))).err).toBeNull();
  });

  it('refuses an address that is not the derivation of (owner, token program, mint)', () => {
    const chain = testChain();
    const payer = trader(chain);
    const owner = strangerKeypair(6).address;
    const wrong = createAssociatedTokenIdempotentInstruction({ payer: payer.keypair.address, owner, mint: USDC_MINT, associatedAccount: associatedTokenAddress(owner, WSOL_MINT) });
    const tx = buildFittedTransaction({ payer: payer.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions: [wrong] }).bytes;
    expect(chain.simulateTransaction(tx).err).toEqual({ InstructionError: [0, 'InvalidSeeds'] });
  });
});
