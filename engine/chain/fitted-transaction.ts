import { ErrorCode, TpError, isTpError } from '../errors.js';
import * as base58 from './base58.js';
import { compactU16Size } from './compact-u16.js';
import { SIGNATURE_BYTES } from './parse-layout.js';
import {
  MAX_TRANSACTION_BYTES,
  assembleTransaction,
  compileMessage,
  missingSigner,
  serializeMessage,
  signBytes,
  type CompiledMessage,
  type Keypair,
  type TransactionInput,
} from './transaction-builder.js';

/**
 * A transaction in the smallest form that the network accepts: legacy when it fits in a packet
 * (1232 bytes serialized, signatures included), otherwise v0, loading every account it can
 * (non-signers that are not invoked programs) through the address lookup tables given. Legacy is
 * preferred when both fit because it needs no table to be active, so it cannot fail on a table
 * that was just extended or deactivated.
 */

export interface FittedTransactionInput extends Omit<TransactionInput, 'version'> {
  /** 'auto' (default): legacy if it fits, else v0; or force one form. */
  version?: 'auto' | 'legacy' | 0;
  /**
   * Leave every signature empty (64 zero bytes) for the signers to fill in: the form a swap API
   * hands a wallet to sign. No keypair is needed then; `signature` is ''.
   */
  unsigned?: boolean;
}

export interface FittedTransaction {
  /** The signed wire bytes. */
  bytes: Uint8Array;
  version: 'legacy' | 0;
  /** bytes.length. */
  size: number;
  message: CompiledMessage;
  /** base58 of the first signature: the transaction id. */
  signature: string;
}

/** Serialized size of a compiled message once signed: signature count, signatures, message. */
export function signedTransactionSize(message: CompiledMessage, messageBytes: number): number {
  const signatures = message.header.numRequiredSignatures;
  return compactU16Size(signatures) + signatures * SIGNATURE_BYTES + messageBytes;
}

interface Attempt {
  message: CompiledMessage;
  bytes: Uint8Array;
  size: number;
}

function attempt(input: FittedTransactionInput, version: 'legacy' | 0): Attempt | Error {
  try {
    const base: TransactionInput = { ...input, version };
    if (version === 'legacy') delete base.lookupTables;
    const message = compileMessage(base);
    const bytes = serializeMessage(message);
    return { message, bytes, size: signedTransactionSize(message, bytes.length) };
  } catch (err) {
    return err as Error;
  }
}

/**
 * Compiles, sizes and signs. Throws TpError TransactionTooLarge when no allowed form fits (the
 * context gives each form's size), TpError TransactionInvalid for a missing signer or an invalid
 * message (one with more accounts than a legacy message indexes counts as a form that does not fit).
 */
export function buildFittedTransaction(input: FittedTransactionInput): FittedTransaction {
  const mode = input.version ?? 'auto';
  const tried: Record<string, number | string> = {};
  let chosen: Attempt | undefined;
  let version: 'legacy' | 0 = 'legacy';
  for (const v of mode === 'auto' ? (['legacy', 0] as const) : [mode]) {
    if (v === 0 && mode === 'auto' && (input.lookupTables === undefined || input.lookupTables.length === 0)) continue;
    const a = attempt(input, v);
    if (isTpError(a, ErrorCode.TransactionInvalid) && a.context.reason !== 'too-many-accounts') throw a;
    if (a instanceof Error) {
      tried[String(v)] = a.message;
      continue;
    }
    tried[String(v)] = a.size;
    if (a.size <= MAX_TRANSACTION_BYTES) {
      chosen = a;
      version = v;
      break;
    }
  }
  if (chosen === undefined) {
    throw new TpError(ErrorCode.TransactionTooLarge, `transaction does not fit in ${MAX_TRANSACTION_BYTES} bytes`, { context: { tried } });
  }
  if (input.unsigned === true) {
    const empty = Array.from({ length: chosen.message.header.numRequiredSignatures }, () => new Uint8Array(SIGNATURE_BYTES));
    const unsignedBytes = assembleTransaction(chosen.bytes, empty);
    return { bytes: unsignedBytes, version, size: unsignedBytes.length, message: chosen.message, signature: '' };
  }
  const keypairs = new Map<string, Keypair>();
  const payer = input.payer;
  if (typeof payer === 'object' && !(payer instanceof Uint8Array)) keypairs.set(payer.address, payer);
  for (const k of input.signers ?? []) keypairs.set(k.address, k);
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < chosen.message.header.numRequiredSignatures; i++) {
    const address = chosen.message.staticAccountAddresses[i]!;
    const keypair = keypairs.get(address);
    if (keypair === undefined) throw missingSigner(address);
    signatures.push(signBytes(chosen.bytes, keypair));
  }
  const bytes = assembleTransaction(chosen.bytes, signatures);
  return { bytes, version, size: bytes.length, message: chosen.message, signature: base58.encode(signatures[0]!) };
}
