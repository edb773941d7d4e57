import * as base58 from './base58.js';
import { findProgramAddress } from './pda.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-addresses.js';
import type { InstructionInput } from './transaction-builder.js';

/**
 * Associated token accounts (the SPL Associated Token Account program): the address of a wallet's
 * account for a mint, and the instructions that create it.
 *
 * Address: PDA of the ATA program with seeds [owner, token program, mint]; the token program is
 * SPL Token or Token-2022, whichever owns the mint.
 *
 * Create (data empty or [0]) and CreateIdempotent (data [1]); accounts:
 *   0 funding account   signer, writable (pays the rent-exempt balance)
 *   1 associated account writable
 *   2 wallet            readonly
 *   3 mint              readonly
 *   4 System program    readonly
 *   5 token program     readonly
 * CreateIdempotent succeeds without change when the account already exists with that owner and
 * mint; Create fails then.
 */

export const AssociatedTokenInstruction = { Create: 0, CreateIdempotent: 1, RecoverNested: 2 } as const;

export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM_ID): string {
  return findProgramAddress(
    [base58.decodePubkey(owner), base58.decodePubkey(tokenProgram), base58.decodePubkey(mint)],
    ASSOCIATED_TOKEN_PROGRAM_ID,
  ).address;
}

export interface CreateAssociatedTokenInput {
  /** Pays the rent; signs. */
  payer: string;
  owner: string;
  mint: string;
  /** Default SPL Token. */
  tokenProgram?: string;
  /** Default: derived from owner, mint and token program. */
  associatedAccount?: string;
}

function createInstruction(input: CreateAssociatedTokenInput, tag: number): InstructionInput {
  const tokenProgram = input.tokenProgram ?? TOKEN_PROGRAM_ID;
  const account = input.associatedAccount ?? associatedTokenAddress(input.owner, input.mint, tokenProgram);
  return {
    programId: ASSOCIATED_TOKEN_PROGRAM_ID,
    accounts: [
      { pubkey: input.payer, isSigner: true, isWritable: true },
      { pubkey: account, isSigner: false, isWritable: true },
      { pubkey: input.owner, isSigner: false, isWritable: false },
      { pubkey: input.mint, isSigner: false, isWritable: false },
      { pubkey: SYSTEM_PROGRAM_ID, isSigner: false, isWritable: false },
      { pubkey: tokenProgram, isSigner: false, isWritable: false },
    ],
    data: Uint8Array.of(tag),
  };
}

/** CreateIdempotent: creates the owner's associated account for the mint unless it exists. */
export function createAssociatedTokenIdempotentInstruction(input: CreateAssociatedTokenInput): InstructionInput {
  return createInstruction(input, AssociatedTokenInstruction.CreateIdempotent);
}

/** Create: fails when the account exists. */
export function createAssociatedTokenInstruction(input: CreateAssociatedTokenInput): InstructionInput {
  return createInstruction(input, AssociatedTokenInstruction.Create);
}
