import type { InstructionInput } from '../../chain/transaction-builder.js';

/**
 * Test support: web3.js / kit instructions from the protocols' SDKs in the plain form our
 * builders produce, so the two compare with one toEqual (program, every account with its flags in
 * order, the data bytes in hex).
 */

export interface PlainInstruction {
  programId: string;
  accounts: { pubkey: string; isSigner: boolean; isWritable: boolean }[];
  data: string;
}

interface KeyLike {
  toBase58(): string;
}

/** A web3.js TransactionInstruction (Raydium and Meteora SDKs). */
export function plainWeb3(ix: { programId: KeyLike; keys: { pubkey: KeyLike; isSigner: boolean; isWritable: boolean }[]; data: Uint8Array }): PlainInstruction {
  return {
    programId: ix.programId.toBase58(),
    accounts: ix.keys.map((k) => ({ pubkey: k.pubkey.toBase58(), isSigner: k.isSigner, isWritable: k.isWritable })),
    data: Buffer.from(ix.data).toString('hex'),
  };
}

/** A @solana/kit Instruction (Orca's whirlpools-client); roles: 0 readonly, 1 writable, 2 signer, 3 both. */
export function plainKit(ix: { programAddress: string; accounts?: readonly { address: string; role: number }[]; data?: ArrayLike<number> }): PlainInstruction {
  return {
    programId: ix.programAddress,
    accounts: (ix.accounts ?? []).map((a) => ({ pubkey: a.address, isSigner: (a.role & 2) !== 0, isWritable: (a.role & 1) !== 0 })),
    data: Buffer.from(ix.data ?? new Uint8Array(0)).toString('hex'),
  };
}

export function plainOurs(ix: InstructionInput): PlainInstruction {
  return {
    programId: String(ix.programId),
    accounts: ix.accounts.map((a) => ({ pubkey: String(a.pubkey), isSigner: a.isSigner, isWritable: a.isWritable })),
    data: Buffer.from(ix.data ?? new Uint8Array(0)).toString('hex'),
  };
}
