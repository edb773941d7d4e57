import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import { Prng } from '../prng.js';
import {
  associatedTokenAddress,
  createAssociatedTokenIdempotentInstruction,
  createAssociatedTokenInstruction,
} from './associated-token.js';
import * as base58 from './base58.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-addresses.js';

// @solana/spl-token (installed with the DEX SDKs) is the reference builder.
const require = createRequire(import.meta.url);
interface PublicKeyLike {
  toBase58(): string;
}
type Ix = { programId: PublicKeyLike; data: Buffer; keys: { pubkey: PublicKeyLike; isSigner: boolean; isWritable: boolean }[] };
const spl = require('@solana/spl-token') as {
  ASSOCIATED_TOKEN_PROGRAM_ID: PublicKeyLike;
  getAssociatedTokenAddressSync(mint: unknown, owner: unknown, allowOwnerOffCurve: boolean, programId: unknown): PublicKeyLike;
  createAssociatedTokenAccountIdempotentInstruction(payer: unknown, ata: unknown, owner: unknown, mint: unknown, programId: unknown): Ix;
  createAssociatedTokenAccountInstruction(payer: unknown, ata: unknown, owner: unknown, mint: unknown, programId: unknown): Ix;
};
const { PublicKey } = require('@solana/web3.js') as { PublicKey: new (v: string) => PublicKeyLike };

function plain(ix: Ix) {
  return {
    programId: ix.programId.toBase58(),
    data: ix.data.toString('hex'),
    accounts: ix.keys.map((k) => ({ pubkey: k.pubkey.toBase58(), isSigner: k.isSigner, isWritable: k.isWritable })),
  };
}

describe('associated token accounts', () => {
  it('derive the address and build Create / CreateIdempotent exactly as @solana/spl-token does', () => {
    expect(ASSOCIATED_TOKEN_PROGRAM_ID).toBe(spl.ASSOCIATED_TOKEN_PROGRAM_ID.toBase58());
    const rng = new Prng(5);
    for (let i = 0; i < 16; i++) {
      const [payer, owner, mint] = [0, 1, 2].map(() => base58.encode(rng.bytes(32)));
      const tokenProgram = i % 2 === 0 ? TOKEN_PROGRAM_ID : TOKEN_2022_PROGRAM_ID;
      const address = associatedTokenAddress(owner!, mint!, tokenProgram);
      const ref = spl.getAssociatedTokenAddressSync(new PublicKey(mint!), new PublicKey(owner!), true, new PublicKey(tokenProgram));
      expect(address).toBe(ref.toBase58());
      const args = [new PublicKey(payer!), new PublicKey(address), new PublicKey(owner!), new PublicKey(mint!), new PublicKey(tokenProgram)] as const;
      const idem = createAssociatedTokenIdempotentInstruction({ payer: payer!, owner: owner!, mint: mint!, tokenProgram });
      expect({ programId: idem.programId, data: Buffer.from(idem.data!).toString('hex'), accounts: idem.accounts }).toEqual(
        plain(spl.createAssociatedTokenAccountIdempotentInstruction(...args)),
      );
      const create = createAssociatedTokenInstruction({ payer: payer!, owner: owner!, mint: mint!, tokenProgram });
      const refCreate = plain(spl.createAssociatedTokenAccountInstruction(...args));
      // spl-token sends Create with empty data; the program reads empty data and [0] alike.
      expect(create.accounts).toEqual(refCreate.accounts);
      expect(Buffer.from(create.data!).toString('hex')).toBe('00');
      expect(['', '00']).toContain(refCreate.data);
    }
  });

  it('defaults to the SPL Token program', () => {
    const owner = base58.encode(new Uint8Array(32).fill(3));
    const mint = base58.encode(new Uint8Array(32).fill(4));
    expect(associatedTokenAddress(owner, mint)).toBe(associatedTokenAddress(owner, mint, TOKEN_PROGRAM_ID));
    expect(associatedTokenAddress(owner, mint)).not.toBe(associatedTokenAddress(owner, mint, TOKEN_2022_PROGRAM_ID));
  });
});
