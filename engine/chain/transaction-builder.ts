/**
 * Builds signed Solana transactions (legacy and v0 with address-table lookups), compiled the way
 * @solana/kit compiles them, so the bytes equal kit's for the same message:
 * - accounts: fee payer first, then static keys (writable signers, readonly signers, writable
 *   non-signers, readonly non-signers), then looked-up keys (writable first); ties are broken by
 *   kit's address collation (Intl.Collator 'en', lower case first) on the base58 text, looked-up
 *   keys by table address first;
 * - program ids are readonly non-signers and are never loaded through a table;
 * - a v0 account is loaded through the first table (in the order given) holding it unless it
 *   signs or is invoked as a program;
 * - each lookup lists its writable and readonly indexes in account order, tables sorted by address.
 * Signatures are ed25519 through node:crypto.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import * as base58 from './base58.js';
import { compactU16Size, writeCompactU16 } from './compact-u16.js';
import { HASH_BYTES, MAX_TX_ACCOUNTS, PUBKEY_BYTES, SIGNATURE_BYTES } from './parse-layout.js';

/** Largest serialized transaction Solana accepts (PACKET_DATA_SIZE, sdk/src/packet.rs). */
export const MAX_TRANSACTION_BYTES = 1232;

export interface Keypair {
  readonly publicKey: Uint8Array;
  /** base58 of publicKey. */
  readonly address: string;
  readonly privateKey: KeyObject;
}

export type PubkeyInput = string | Uint8Array;

export interface AccountMetaInput {
  pubkey: PubkeyInput;
  isSigner: boolean;
  isWritable: boolean;
}

export interface InstructionInput {
  programId: PubkeyInput;
  accounts: readonly AccountMetaInput[];
  data?: Uint8Array;
}

export interface LookupTableInput {
  address: PubkeyInput;
  addresses: readonly PubkeyInput[];
}

export interface TransactionInput {
  /** The fee payer; a Keypair here also signs. */
  payer: PubkeyInput | Keypair;
  instructions: readonly InstructionInput[];
  /** 32 bytes or base58. */
  recentBlockhash: PubkeyInput;
  /** Address lookup tables (v0 only), in order of preference. */
  lookupTables?: readonly LookupTableInput[];
  /** Defaults to 0 when lookupTables is given, else 'legacy'. */
  version?: 'legacy' | 0;
  /** Keypairs of every required signer (extra ones are ignored). */
  signers?: readonly Keypair[];
}

export interface CompiledMessage {
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySigned: number; numReadonlyUnsigned: number };
  staticAccountKeys: Uint8Array[];
  /** base58 of staticAccountKeys, same order. */
  staticAccountAddresses: string[];
  recentBlockhash: Uint8Array;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
  addressTableLookups: { accountKey: Uint8Array; writableIndexes: number[]; readonlyIndexes: number[] }[];
}

// ---- keys


function keypairFromPrivateKey(privateKey: KeyObject): Keypair {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const publicKey = new Uint8Array(Buffer.from(jwk.x!, 'base64url'));
  return { publicKey, address: base58.encode(publicKey), privateKey };
}

export function generateKeypair(): Keypair {
  return keypairFromPrivateKey(generateKeyPairSync('ed25519').privateKey);
}

/** The keypair of a 32-byte ed25519 seed (the first half of Solana's 64-byte secret key). */
export function keypairFromSeed(seed: Uint8Array): Keypair {
  if (seed.length !== 32) throw invalidArgument('seed', seed.length, `ed25519 seed must be 32 bytes, got ${seed.length}`);
  // JWK import is ~10x faster than PKCS#8 DER under OpenSSL 3. The private key is `d` alone;
  // `x` must be present but is not used to build the key (the public key is derived below, and
  // the tests check it against @solana/kit's derivation).
  const d = Buffer.from(seed.buffer, seed.byteOffset, seed.length).toString('base64url');
  return keypairFromPrivateKey(createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d, x: d }, format: 'jwk' }));
}

/** The 32-byte seed of a keypair. */
export function keypairSeed(keypair: Keypair): Uint8Array {
  return new Uint8Array(Buffer.from(keypair.privateKey.export({ format: 'jwk' }).d!, 'base64url'));
}

/** TpError(TransactionInvalid, missing-signer): `address` must sign but no keypair for it was given. */
export function missingSigner(address: string): TpError<typeof ErrorCode.TransactionInvalid> {
  return new TpError(ErrorCode.TransactionInvalid, `missing signer ${address}`, { context: { reason: 'missing-signer', address } });
}

export function signBytes(message: Uint8Array, keypair: Keypair): Uint8Array {
  return new Uint8Array(sign(null, message, keypair.privateKey));
}

export function verifySignature(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES || publicKey.length !== PUBKEY_BYTES) return false;
  const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, PUBKEY_BYTES).toString('base64url');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  return verify(null, message, key, signature);
}

// ---- addresses (both forms are needed: bytes for the wire, text for kit's ordering)

interface Address {
  text: string;
  bytes: Uint8Array;
}

const ADDRESS_CACHE_LIMIT = 8192;
const bytesByText = new Map<string, Uint8Array>();
/** base58 by the key's bytes read as latin1 (cheap to make, unlike base58). */
const textByBinary = new Map<string, string>();

function toAddress(input: PubkeyInput): Address {
  if (typeof input === 'string') {
    let bytes = bytesByText.get(input);
    if (bytes === undefined) {
      bytes = base58.decodePubkey(input);
      if (bytesByText.size >= ADDRESS_CACHE_LIMIT) bytesByText.clear();
      bytesByText.set(input, bytes);
    }
    return { text: input, bytes };
  }
  if (input.length !== PUBKEY_BYTES) throw invalidArgument('publicKey', input.length, `public key must be 32 bytes, got ${input.length}`);
  const binary = Buffer.from(input.buffer, input.byteOffset, PUBKEY_BYTES).toString('latin1');
  let text = textByBinary.get(binary);
  if (text === undefined) {
    text = base58.encode(input);
    if (textByBinary.size >= ADDRESS_CACHE_LIMIT) textByBinary.clear();
    textByBinary.set(binary, text);
  }
  return { text, bytes: input };
}

function isKeypair(value: PubkeyInput | Keypair): value is Keypair {
  return typeof value === 'object' && !(value instanceof Uint8Array);
}

/**
 * kit's address order: @solana/addresses getAddressComparator, an Intl.Collator('en', case
 * first lower, variant sensitivity). On base58 text (digits and ASCII letters only) that
 * collation is: compare case-folded characters (digits before letters) with a shorter prefix
 * first; if equal, the first position whose case differs decides, lower case first. Written out
 * because the collator is ~50x slower; the tests check both agree.
 */
export function compareAddresses(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    // `| 0x20` folds ASCII letters to lower case and leaves '1'-'9' unchanged.
    const x = a.charCodeAt(i) | 0x20;
    const y = b.charCodeAt(i) | 0x20;
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (x & 0x20) !== 0 ? -1 : 1;
  }
  return 0;
}

// ---- compile

const WRITABLE = 1;
const SIGNER = 2;
const KIND_PAYER = 0;
const KIND_STATIC = 1;
const KIND_LOOKUP = 2;

interface AccountEntry {
  address: Address;
  role: number;
  kind: number;
  table: string; // lookup table address (KIND_LOOKUP)
  tableIndex: number;
}

/** Compiles the message as kit does (see the file comment). Throws on an invalid message. */
export function compileMessage(input: TransactionInput): CompiledMessage {
  const version = input.version ?? (input.lookupTables !== undefined ? 0 : 'legacy');
  if (version === 'legacy' && input.lookupTables !== undefined && input.lookupTables.length > 0) {
    throw new TpError(ErrorCode.TransactionInvalid, 'address lookup tables need a v0 transaction', { context: { reason: 'lookup-tables-need-v0' } });
  }
  const payer = toAddress(isKeypair(input.payer) ? input.payer.publicKey : input.payer);
  const instructions = input.instructions.map((ix) => ({
    program: toAddress(ix.programId),
    accounts: ix.accounts.map((a) => ({ address: toAddress(a.pubkey), role: (a.isWritable ? WRITABLE : 0) | (a.isSigner ? SIGNER : 0) })),
    data: ix.data ?? new Uint8Array(0),
  }));

  // Where each table-eligible address would be loaded from: first table, first index.
  const programs = new Set(instructions.map((ix) => ix.program.text));
  const lookupOf = new Map<string, { table: string; index: number }>();
  if (version === 0) {
    for (const table of input.lookupTables ?? []) {
      const tableAddress = toAddress(table.address).text;
      table.addresses.forEach((a, index) => {
        const text = toAddress(a).text;
        if (!programs.has(text) && !lookupOf.has(text)) lookupOf.set(text, { table: tableAddress, index });
      });
    }
  }

  const entries = new Map<string, AccountEntry>();
  entries.set(payer.text, { address: payer, role: WRITABLE | SIGNER, kind: KIND_PAYER, table: '', tableIndex: 0 });
  const invoked = new Set<string>();
  for (const ix of instructions) {
    const programText = ix.program.text;
    invoked.add(programText);
    const existing = entries.get(programText);
    if (existing !== undefined && (existing.role & WRITABLE) !== 0) {
      throw new TpError(
        ErrorCode.TransactionInvalid,
        existing.kind === KIND_PAYER
          ? `invoked program ${programText} cannot pay fees`
          : `invoked program ${programText} must not be writable`,
        { context: { reason: 'writable-program', address: programText } },
      );
    }
    if (existing === undefined || existing.kind !== KIND_STATIC) {
      entries.set(programText, { address: ix.program, role: 0, kind: KIND_STATIC, table: '', tableIndex: 0 });
    }
    for (const meta of ix.accounts) {
      const text = meta.address.text;
      const lookup = (meta.role & SIGNER) === 0 ? lookupOf.get(text) : undefined;
      const entry = entries.get(text);
      if (entry === undefined) {
        entries.set(text, {
          address: meta.address,
          role: meta.role,
          kind: lookup !== undefined ? KIND_LOOKUP : KIND_STATIC,
          table: lookup?.table ?? '',
          tableIndex: lookup?.index ?? 0,
        });
        continue;
      }
      if (entry.kind === KIND_PAYER) continue;
      const role = entry.role | meta.role;
      if (entry.kind === KIND_LOOKUP) {
        // A signer must be static.
        if (lookup === undefined && (meta.role & SIGNER) !== 0) entry.kind = KIND_STATIC;
      } else if (invoked.has(text)) {
        if ((meta.role & WRITABLE) !== 0) {
          throw new TpError(ErrorCode.TransactionInvalid, `invoked program ${text} must not be writable`, { context: { reason: 'writable-program', address: text } });
        }
      } else if (lookup !== undefined && (entry.role & SIGNER) === 0) {
        entry.kind = KIND_LOOKUP;
        entry.table = lookup.table;
        entry.tableIndex = lookup.index;
      }
      entry.role = role;
    }
  }

  const ordered = [...entries.values()].sort(compareEntries);
  if (ordered.length > MAX_TX_ACCOUNTS) {
    throw new TpError(ErrorCode.TransactionInvalid, `transaction references ${ordered.length} accounts, more than ${MAX_TX_ACCOUNTS}`, {
      context: { reason: 'too-many-accounts', accounts: ordered.length },
    });
  }
  const position = new Map<string, number>();
  ordered.forEach((e, i) => position.set(e.address.text, i));

  const staticEntries = ordered.filter((e) => e.kind !== KIND_LOOKUP);
  let numRequiredSignatures = 0;
  let numReadonlySigned = 0;
  let numReadonlyUnsigned = 0;
  for (const e of staticEntries) {
    if ((e.role & SIGNER) !== 0) {
      numRequiredSignatures++;
      if ((e.role & WRITABLE) === 0) numReadonlySigned++;
    } else if ((e.role & WRITABLE) === 0) {
      numReadonlyUnsigned++;
    }
  }

  const tables = new Map<string, { writableIndexes: number[]; readonlyIndexes: number[] }>();
  for (const e of ordered) {
    if (e.kind !== KIND_LOOKUP) continue;
    let t = tables.get(e.table);
    if (t === undefined) tables.set(e.table, (t = { writableIndexes: [], readonlyIndexes: [] }));
    ((e.role & WRITABLE) !== 0 ? t.writableIndexes : t.readonlyIndexes).push(e.tableIndex);
  }
  const addressTableLookups = [...tables.keys()]
    .sort(compareAddresses)
    .map((table) => ({ accountKey: toAddress(table).bytes, ...tables.get(table)! }));

  return {
    version,
    header: { numRequiredSignatures, numReadonlySigned, numReadonlyUnsigned },
    staticAccountKeys: staticEntries.map((e) => e.address.bytes),
    staticAccountAddresses: staticEntries.map((e) => e.address.text),
    recentBlockhash: toAddress(input.recentBlockhash).bytes,
    instructions: instructions.map((ix) => ({
      programIdIndex: position.get(ix.program.text)!,
      accounts: ix.accounts.map((a) => position.get(a.address.text)!),
      data: ix.data,
    })),
    addressTableLookups,
  };
}

function compareEntries(a: AccountEntry, b: AccountEntry): number {
  if (a.kind !== b.kind) {
    if (a.kind === KIND_PAYER) return -1;
    if (b.kind === KIND_PAYER) return 1;
    return a.kind === KIND_STATIC ? -1 : 1;
  }
  const aSigner = (a.role & SIGNER) !== 0;
  if (aSigner !== ((b.role & SIGNER) !== 0)) return aSigner ? -1 : 1;
  const aWritable = (a.role & WRITABLE) !== 0;
  if (aWritable !== ((b.role & WRITABLE) !== 0)) return aWritable ? -1 : 1;
  if (a.kind === KIND_LOOKUP && a.table !== b.table) return compareAddresses(a.table, b.table);
  return compareAddresses(a.address.text, b.address.text);
}

// ---- serialize and sign

export function messageSize(m: CompiledMessage): number {
  let size = (m.version === 0 ? 1 : 0) + 3;
  size += compactU16Size(m.staticAccountKeys.length) + m.staticAccountKeys.length * PUBKEY_BYTES + HASH_BYTES;
  size += compactU16Size(m.instructions.length);
  for (const ix of m.instructions) {
    size += 1 + compactU16Size(ix.accounts.length) + ix.accounts.length + compactU16Size(ix.data.length) + ix.data.length;
  }
  if (m.version === 0) {
    size += compactU16Size(m.addressTableLookups.length);
    for (const l of m.addressTableLookups) {
      size += PUBKEY_BYTES + compactU16Size(l.writableIndexes.length) + l.writableIndexes.length;
      size += compactU16Size(l.readonlyIndexes.length) + l.readonlyIndexes.length;
    }
  }
  return size;
}

/** The message bytes that the signatures cover (v0: starting with the 0x80 version byte). */
export function serializeMessage(m: CompiledMessage): Uint8Array {
  const out = new Uint8Array(messageSize(m));
  let p = 0;
  if (m.version === 0) out[p++] = 0x80;
  out[p++] = m.header.numRequiredSignatures;
  out[p++] = m.header.numReadonlySigned;
  out[p++] = m.header.numReadonlyUnsigned;
  p = writeCompactU16(out, p, m.staticAccountKeys.length);
  for (const key of m.staticAccountKeys) {
    out.set(key, p);
    p += PUBKEY_BYTES;
  }
  out.set(m.recentBlockhash, p);
  p += HASH_BYTES;
  p = writeCompactU16(out, p, m.instructions.length);
  for (const ix of m.instructions) {
    out[p++] = ix.programIdIndex;
    p = writeCompactU16(out, p, ix.accounts.length);
    for (const a of ix.accounts) out[p++] = a;
    p = writeCompactU16(out, p, ix.data.length);
    out.set(ix.data, p);
    p += ix.data.length;
  }
  if (m.version === 0) {
    p = writeCompactU16(out, p, m.addressTableLookups.length);
    for (const l of m.addressTableLookups) {
      out.set(l.accountKey, p);
      p += PUBKEY_BYTES;
      p = writeCompactU16(out, p, l.writableIndexes.length);
      for (const i of l.writableIndexes) out[p++] = i;
      p = writeCompactU16(out, p, l.readonlyIndexes.length);
      for (const i of l.readonlyIndexes) out[p++] = i;
    }
  }
  return out;
}

/** Wire bytes of a transaction: compact-u16 signature count, the signatures, the message. */
export function assembleTransaction(message: Uint8Array, signatures: readonly Uint8Array[]): Uint8Array {
  const head = compactU16Size(signatures.length);
  const out = new Uint8Array(head + signatures.length * SIGNATURE_BYTES + message.length);
  let p = writeCompactU16(out, 0, signatures.length);
  for (const s of signatures) {
    if (s.length !== SIGNATURE_BYTES) throw invalidArgument('signatures', s.length, `signature must be 64 bytes, got ${s.length}`);
    out.set(s, p);
    p += SIGNATURE_BYTES;
  }
  out.set(message, p);
  return out;
}

/**
 * Compiles, serializes and signs a transaction. Every required signer's keypair must be in
 * `signers` (or be the payer): TpError TransactionInvalid (missing-signer) otherwise. Throws
 * TpError TransactionTooLarge when the result exceeds 1232 bytes.
 */
export function buildTransaction(input: TransactionInput): Uint8Array {
  const compiled = compileMessage(input);
  const message = serializeMessage(compiled);
  const keypairs = new Map<string, Keypair>();
  if (isKeypair(input.payer)) keypairs.set(input.payer.address, input.payer);
  for (const k of input.signers ?? []) keypairs.set(k.address, k);
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < compiled.header.numRequiredSignatures; i++) {
    const address = compiled.staticAccountAddresses[i]!;
    const keypair = keypairs.get(address);
    if (keypair === undefined) throw missingSigner(address);
    signatures.push(signBytes(message, keypair));
  }
  const tx = assembleTransaction(message, signatures);
  if (tx.length > MAX_TRANSACTION_BYTES) {
    throw new TpError(ErrorCode.TransactionTooLarge, `transaction is ${tx.length} bytes, more than ${MAX_TRANSACTION_BYTES}`, {
      context: { size: tx.length, limit: MAX_TRANSACTION_BYTES },
    });
  }
  return tx;
}
