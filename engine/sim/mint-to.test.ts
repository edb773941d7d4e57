import { describe, expect, it } from 'vitest';

import { associatedTokenAddress, buildTransaction, mintToCheckedInstruction, type InstructionInput, type Keypair } from '../chain/index.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { mintAuthorityKeypair } from './market.js';
import { TokenInstruction, mintSupply } from './spl-token.js';
import { strangerKeypair, testChain, trader } from './testing/chain-fixtures.js';

/** The token programs' MintTo and MintToChecked, which the token faucet signs (faucet.ts). */

describe('MintTo and MintToChecked', () => {
  it('credit the account and the supply when the mint authority signs; refuse everything else as the program does', () => {
    const chain = testChain();
    const owner = trader(chain);
    const me = owner.keypair.address;
    const authority = mintAuthorityKeypair(chain.settings.seed, USDC_MINT);
    const usdc = associatedTokenAddress(me, USDC_MINT);
    const simulate = (instructions: InstructionInput[], signers: Keypair[] = []) =>
      chain.simulateTransaction(buildTransaction({ payer: owner.keypair, signers, instructions, recentBlockhash: chain.latestBlockhash().blockhash })).err;
    const mintTo = (amount: bigint, signer: string, decimals?: number): InstructionInput => {
      if (decimals !== undefined) return mintToCheckedInstruction(USDC_MINT, usdc, signer, amount, decimals);
      const data = new Uint8Array(9);
      data[0] = TokenInstruction.MintTo;
      new DataView(data.buffer).setBigUint64(1, amount, true);
      return { ...mintToCheckedInstruction(USDC_MINT, usdc, signer, amount, 6), data };
    };

    const stranger = strangerKeypair(7);
    expect(simulate([mintTo(5n, stranger.address)], [stranger])).toEqual({ InstructionError: [0, { Custom: 4 }] }); // OwnerMismatch
    expect(simulate([mintTo(5n, authority.address, 9)], [authority])).toEqual({ InstructionError: [0, { Custom: 18 }] }); // MintDecimalsMismatch
    expect(simulate([mintTo(2n ** 64n - 1n, authority.address)], [authority])).toEqual({ InstructionError: [0, { Custom: 14 }] }); // Overflow
    const wsol = associatedTokenAddress(me, WSOL_MINT);
    expect(simulate([mintToCheckedInstruction(WSOL_MINT, wsol, authority.address, 5n, 9)], [authority])).toEqual({ InstructionError: [0, { Custom: 10 }] }); // NativeNotSupported

    const before = chain.getTokenBalance(usdc)!.amount;
    const supply = mintSupply(chain.getAccount(USDC_MINT)!.data);
    const tx = buildTransaction({ payer: owner.keypair, signers: [authority], instructions: [mintTo(7n, authority.address), mintTo(3n, authority.address, 6)], recentBlockhash: chain.latestBlockhash().blockhash });
    expect(chain.simulateTransaction(tx).err).toBeNull();
    chain.sendTransaction(tx);
    chain.advanceSlot();
    expect(chain.getTokenBalance(usdc)!.amount).toBe(before + 10n);
    expect(mintSupply(chain.getAccount(USDC_MINT)!.data)).toBe(supply + 10n);
  });
});
