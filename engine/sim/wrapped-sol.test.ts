import { describe, expect, it } from 'vitest';

import {
  associatedTokenAddress,
  buildFittedTransaction,
  closeAccountInstruction,
  createAssociatedTokenIdempotentInstruction,
  syncNativeInstruction,
  systemTransferInstruction,
  type InstructionInput,
} from '../chain/index.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { strangerKeypair, testChain, trader } from './testing/chain-fixtures.js';

/** Wrapping and unwrapping SOL as wallets do it: SyncNative and CloseAccount of the token program. */

describe('wrapped SOL: SyncNative and CloseAccount', () => {
  it('wraps lamports sent to a wSOL account with SyncNative, and unwraps every lamport with CloseAccount', () => {
    const chain = testChain();
    const owner = trader(chain);
    const me = owner.keypair.address;
    const run = (instructions: InstructionInput[]) => {
      const bytes = buildFittedTransaction({ payer: owner.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions }).bytes;
      const simulated = chain.simulateTransaction(bytes);
      if (simulated.err === null) {
        chain.sendTransaction(bytes);
        chain.advanceSlot();
      }
      return simulated.err;
    };
    const fresh = strangerKeypair(41).address;
    const wsol = associatedTokenAddress(me, WSOL_MINT);
    // A fresh wallet's wSOL account: the rent reserve only, amount 0.
    expect(run([createAssociatedTokenIdempotentInstruction({ payer: me, owner: me, mint: WSOL_MINT })])).toBeNull();
    const before = chain.getTokenBalance(wsol)!.amount;
    expect(run([systemTransferInstruction(me, wsol, 1_000_000_000n), syncNativeInstruction(wsol)])).toBeNull();
    expect(chain.getTokenBalance(wsol)!.amount).toBe(before + 1_000_000_000n);

    // CloseAccount sends the reserve and the balance to the destination and deletes the account.
    const lamports = chain.getAccount(wsol)!.lamports;
    expect(run([closeAccountInstruction(wsol, fresh, me)])).toBeNull();
    expect(chain.getAccount(wsol)).toBeNull();
    expect(chain.getAccount(fresh)!.lamports).toBe(lamports);
  });

  it('refuses SyncNative of a non-native account, CloseAccount of a token account with a balance, and a close by another owner', () => {
    const chain = testChain();
    const owner = trader(chain);
    const me = owner.keypair.address;
    const simulate = (instructions: InstructionInput[], payer = owner.keypair) =>
      chain.simulateTransaction(buildFittedTransaction({ payer, recentBlockhash: chain.latestBlockhash().blockhash, instructions }).bytes).err;
    const usdc = associatedTokenAddress(me, USDC_MINT);
    expect(chain.getTokenBalance(usdc)!.amount).toBeGreaterThan(0n);
    expect(simulate([syncNativeInstruction(usdc)])).toEqual({ InstructionError: [0, { Custom: 19 }] }); // NonNativeNotSupported
    expect(simulate([closeAccountInstruction(usdc, me, me)])).toEqual({ InstructionError: [0, { Custom: 11 }] }); // NonNativeHasBalance
    const other = trader(chain, 1);
    expect(simulate([closeAccountInstruction(associatedTokenAddress(me, WSOL_MINT), other.keypair.address, other.keypair.address)], other.keypair)).toEqual({
      InstructionError: [0, { Custom: 4 }], // OwnerMismatch
    });
  });
});
