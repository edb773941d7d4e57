import { invalidArgument } from '../errors.js';
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-addresses.js';
import type { InstructionInput } from './transaction-builder.js';

/**
 * The System and SPL Token instructions that move and wrap SOL and tokens, in the real programs'
 * encodings (solana-program system_instruction.rs; spl-token instruction.rs):
 *
 * | instruction                | program   | data                         | accounts                                  |
 * |----------------------------|-----------|------------------------------|-------------------------------------------|
 * | System Transfer            | System    | u32 2, u64 lamports          | from (signer, w), to (w)                  |
 * | Token Transfer             | token     | u8 3, u64 amount             | source (w), destination (w), owner (signer)|
 * | Token MintToChecked        | token     | u8 14, u64 amount, u8 decimals | mint (w), destination (w), authority (signer)|
 * | Token CloseAccount         | token     | u8 9                         | account (w), destination (w), owner (signer)|
 * | Token SyncNative           | token     | u8 17                        | account (w)                               |
 *
 * SyncNative sets a wrapped SOL account's token amount to its lamports above the rent reserve, so
 * lamports sent to it (a System Transfer) become wSOL; CloseAccount of a wrapped SOL account sends
 * all its lamports to the destination, which unwraps it. The token program is a parameter where
 * Token-2022 encodes the instruction the same way.
 */

export const TokenInstructionTag = { Transfer: 3, CloseAccount: 9, MintToChecked: 14, SyncNative: 17 } as const;
const SYSTEM_TRANSFER = 2;
const U64_MAX = (1n << 64n) - 1n;

function u64(value: bigint, what: string): bigint {
  if (value < 0n || value > U64_MAX) throw invalidArgument(what, value.toString(), `${what} ${value} is not a u64`);
  return value;
}

export function systemTransferInstruction(from: string, to: string, lamports: bigint): InstructionInput {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, SYSTEM_TRANSFER, true);
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

export function tokenTransferInstruction(source: string, destination: string, owner: string, amount: bigint, tokenProgram: string = TOKEN_PROGRAM_ID): InstructionInput {
  const data = new Uint8Array(9);
  data[0] = TokenInstructionTag.Transfer;
  new DataView(data.buffer).setBigUint64(1, u64(amount, 'amount'), true);
  return {
    programId: tokenProgram,
    accounts: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data,
  };
}

/** Mints `amount` into `destination`, signed by the mint's authority; the program checks `decimals`. */
export function mintToCheckedInstruction(mint: string, destination: string, authority: string, amount: bigint, decimals: number, tokenProgram: string = TOKEN_PROGRAM_ID): InstructionInput {
  const data = new Uint8Array(10);
  data[0] = TokenInstructionTag.MintToChecked;
  new DataView(data.buffer).setBigUint64(1, u64(amount, 'amount'), true);
  data[9] = decimals;
  return {
    programId: tokenProgram,
    accounts: [
      { pubkey: mint, isSigner: false, isWritable: true },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: authority, isSigner: true, isWritable: false },
    ],
    data,
  };
}

export function closeAccountInstruction(account: string, destination: string, owner: string, tokenProgram: string = TOKEN_PROGRAM_ID): InstructionInput {
  return {
    programId: tokenProgram,
    accounts: [
      { pubkey: account, isSigner: false, isWritable: true },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data: Uint8Array.of(TokenInstructionTag.CloseAccount),
  };
}

export function syncNativeInstruction(account: string, tokenProgram: string = TOKEN_PROGRAM_ID): InstructionInput {
  return { programId: tokenProgram, accounts: [{ pubkey: account, isSigner: false, isWritable: true }], data: Uint8Array.of(TokenInstructionTag.SyncNative) };
}
