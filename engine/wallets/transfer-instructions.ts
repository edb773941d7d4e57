import { ASSOCIATED_TOKEN_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, base58, findProgramAddress, type InstructionInput } from '../chain/index.js';

/**
 * The three instructions a wallet transfer needs, in the real programs' encodings:
 * System Program Transfer (u32 tag 2, u64 lamports), SPL Token Transfer (u8 tag 3, u64 amount;
 * source, destination, owner) and the Associated Token Account program's CreateIdempotent ([1];
 * funder, account, wallet, mint, System program, Token program).
 */


const U64_MAX = (1n << 64n) - 1n;

function u64(value: bigint, what: string): bigint {
  if (value < 0n || value > U64_MAX) throw new RangeError(`${what} ${value} is not a u64`);
  return value;
}

export function systemTransferInstruction(from: string, to: string, lamports: bigint): InstructionInput {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, u64(lamports, 'lamports'), true);
  return {
    programId: SYSTEM_PROGRAM_ID,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true },
    ],
    data,
  };
}

export function tokenTransferInstruction(source: string, destination: string, owner: string, amount: bigint): InstructionInput {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, u64(amount, 'amount'), true);
  return {
    programId: TOKEN_PROGRAM_ID,
    accounts: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data,
  };
}

/** The associated token account of `owner` for `mint`. */
export function associatedTokenAddress(owner: string, mint: string): string {
  return findProgramAddress(
    [base58.decodePubkey(owner), base58.decodePubkey(TOKEN_PROGRAM_ID), base58.decodePubkey(mint)],
    ASSOCIATED_TOKEN_PROGRAM_ID,
  ).address;
}

export function createAssociatedTokenIdempotentInstruction(funder: string, owner: string, mint: string): InstructionInput {
  return {
    programId: ASSOCIATED_TOKEN_PROGRAM_ID,
    accounts: [
      { pubkey: funder, isSigner: true, isWritable: true },
      { pubkey: associatedTokenAddress(owner, mint), isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SYSTEM_PROGRAM_ID, isSigner: false, isWritable: false },
      { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
    ],
    data: new Uint8Array([1]),
  };
}
