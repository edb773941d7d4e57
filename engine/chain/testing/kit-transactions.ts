/**
 * Test support: the same transaction descriptions as transaction-builder.ts, built, compiled,
 * signed and encoded by @solana/kit (a dev dependency), to check our parser and builder against
 * a real Solana serializer. Not for production code.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createKeyPairFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressFromPublicKey,
  getTransactionEncoder,
  partiallySignTransaction,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type AddressesByLookupTableAddress,
  type Instruction,
} from '@solana/kit';

import * as base58 from '../base58.js';

export interface KitAccountMeta {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface KitInstruction {
  programId: string;
  accounts: KitAccountMeta[];
  data: Uint8Array;
}

export interface KitTransactionInput {
  version: 'legacy' | 0;
  payer: string;
  instructions: KitInstruction[];
  recentBlockhash: string;
  lookupTables?: { address: string; addresses: string[] }[];
  /** 32-byte ed25519 seeds of the signers (the fee payer included). */
  signerSeeds: Uint8Array[];
}

export interface KitSigner {
  seed: Uint8Array;
  address: string;
  keyPair: Awaited<ReturnType<typeof createKeyPairFromPrivateKeyBytes>>;
}

/** A kit (WebCrypto) keypair from a 32-byte seed. */
export async function kitSigner(seed: Uint8Array): Promise<KitSigner> {
  const keyPair = await createKeyPairFromPrivateKeyBytes(seed);
  const addr = await getAddressFromPublicKey(keyPair.publicKey);
  return { seed, address: addr, keyPair };
}

function role(meta: KitAccountMeta): AccountRole {
  if (meta.isSigner) return meta.isWritable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER;
  return meta.isWritable ? AccountRole.WRITABLE : AccountRole.READONLY;
}

/** Compiles, signs (with every seed given) and encodes a transaction with kit. */
export async function kitTransaction(input: KitTransactionInput): Promise<Uint8Array> {
  const instructions: Instruction[] = input.instructions.map((ix) => ({
    programAddress: address(ix.programId),
    accounts: ix.accounts.map((a) => ({ address: address(a.pubkey), role: role(a) })),
    data: ix.data,
  }));
  const base = setTransactionMessageLifetimeUsingBlockhash(
    { blockhash: blockhash(input.recentBlockhash), lastValidBlockHeight: 0n },
    setTransactionMessageFeePayer(address(input.payer), createTransactionMessage({ version: input.version })),
  );
  let message = appendTransactionMessageInstructions(instructions, base);
  if (input.version === 0 && input.lookupTables !== undefined) {
    const tables: AddressesByLookupTableAddress = {};
    for (const t of input.lookupTables) tables[address(t.address)] = t.addresses.map((a) => address(a)) as Address[];
    message = compressTransactionMessageUsingAddressLookupTables(
      message as Parameters<typeof compressTransactionMessageUsingAddressLookupTables>[0],
      tables,
    ) as typeof message;
  }
  const compiled = compileTransaction(message);
  // kit refuses keys that are not signers of the message: sign only with the required ones.
  const signers = await Promise.all(input.signerSeeds.map((s) => kitSigner(s)));
  const required = signers.filter((s) => s.address in compiled.signatures).map((s) => s.keyPair);
  const signed = await partiallySignTransaction(required, compiled);
  return new Uint8Array(getTransactionEncoder().encode(signed));
}

/** A deterministic pseudo-random 32-byte key and its base58 text. */
export function testKey(seed: number): { bytes: Uint8Array; address: string } {
  const bytes = new Uint8Array(32);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < 32; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return { bytes, address: base58.encode(bytes) };
}
