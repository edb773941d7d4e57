import { readCompactU16 } from '../chain/index.js';
import { readInstructions, readLookups } from '../chain/index.js';
import { EntryBatchIndex } from '../chain/index.js';
import { parseEntries } from '../chain/index.js';
import {
  MIN_ENTRY_BYTES,
  ParseStatus,
  PUBKEY_BYTES,
  SIGNATURE_BYTES,
  TX_BLOCKHASH_OFFSET,
  TX_END,
  TX_HEADER,
  TX_IX_COUNT,
  TX_IX_OFFSET,
  TX_KEY_COUNT,
  TX_KEYS_OFFSET,
  TX_LOOKUP_COUNT,
  TX_LOOKUP_OFFSET,
  TX_SIG_COUNT,
  TX_SIG_OFFSET,
  TX_START,
  TX_VERSION,
  VERSION_LEGACY,
} from '../chain/index.js';
import { verifySignature } from '../chain/index.js';
import { type KeyCache } from './key-cache.js';

/**
 * A transaction as the simulated runtime reads it: parsed once with the engine's entry parser
 * (native when loaded), with its static keys in base58, its instructions as index lists and data
 * views. Address-table lookups stay unresolved until execution, when the tables are read.
 */

export interface SimInstruction {
  programIdIndex: number;
  /** Indexes into the transaction's account keys (static, then looked up). */
  accounts: Uint8Array;
  data: Uint8Array;
}

export interface SimLookup {
  table: string;
  writableIndexes: Uint8Array;
  readonlyIndexes: Uint8Array;
}

export interface SimTransaction {
  /** The wire bytes (owned by this object). */
  readonly bytes: Uint8Array;
  /** Status-cache key of the first signature (see signatureKey). */
  readonly signatureKey: string;
  readonly signatureCount: number;
  /** Offset of signature 0 in `bytes`. */
  readonly signaturesOffset: number;
  /** The signed message: bytes[messageOffset, end). */
  readonly messageOffset: number;
  readonly end: number;
  readonly version: 'legacy' | 0;
  readonly numRequiredSignatures: number;
  readonly numReadonlySigned: number;
  readonly numReadonlyUnsigned: number;
  readonly staticKeys: readonly string[];
  readonly recentBlockhash: string;
  readonly instructions: readonly SimInstruction[];
  readonly lookups: readonly SimLookup[];
}

/** Why bytes are not a transaction: the node's deserialize error, or its sanitize error. */
export interface TransactionParseError {
  kind: 'deserialize' | 'sanitize' | 'duplicate';
  message: string;
}

/**
 * Bytes of the first signature the status cache keys by: agave's StatusCache keys transactions
 * by a 20-byte slice (`CACHED_KEY_SIZE`); the simulator takes the first 20 bytes of signature 0.
 */
export const SIGNATURE_KEY_BYTES = 20;

export function signatureKeyOf(signature: Uint8Array, offset = 0): string {
  return Buffer.from(signature.buffer, signature.byteOffset + offset, SIGNATURE_KEY_BYTES).toString('latin1');
}

/** Room for one entry header and the u64 entry count before the transaction. */
const PAYLOAD_HEAD = 8 + MIN_ENTRY_BYTES;
const DESERIALIZE_PREFIX = 'failed to deserialize solana_transaction::versioned::VersionedTransaction: ';

export class TransactionParser {
  private readonly index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 64 });

  constructor(private readonly keys: KeyCache) {}

  /**
   * Parses one wire transaction (trailing bytes allowed, as the node's bincode reader allows them).
   * The transaction is copied.
   */
  parse(tx: Uint8Array): SimTransaction | TransactionParseError {
    // One entry holding one transaction: the entry parser's checks are the node's sanitize rules.
    const payload = new Uint8Array(PAYLOAD_HEAD + tx.length);
    const view = new DataView(payload.buffer);
    view.setUint32(0, 1, true);
    view.setUint32(8 + 40, 1, true);
    payload.set(tx, PAYLOAD_HEAD);
    const status = this.index.parse(payload, parseEntries);
    if (status !== ParseStatus.Ok) return parseError(status);
    const r = this.index.txs;
    const start = r[TX_START]!;
    const bytes = payload.slice(start, r[TX_END]!);
    const at = (offset: number): number => offset - start;
    const header = r[TX_HEADER]!;
    const numRequiredSignatures = header & 0xff;
    const keyCount = r[TX_KEY_COUNT]!;
    const keysOffset = at(r[TX_KEYS_OFFSET]!);
    const staticKeys: string[] = new Array<string>(keyCount);
    for (let k = 0; k < keyCount; k++) staticKeys[k] = this.keys.keyAt(bytes, keysOffset + k * PUBKEY_BYTES);
    for (let i = 1; i < keyCount; i++) {
      for (let j = 0; j < i; j++) {
        if (staticKeys[i] === staticKeys[j]) return { kind: 'duplicate', message: 'Account loaded twice' };
      }
    }

    const instructions: SimInstruction[] = readInstructions(bytes, at(r[TX_IX_OFFSET]!), r[TX_IX_COUNT]!);
    // Message::sanitize: the fee payer cannot be invoked as a program.
    if (instructions.some((ix) => ix.programIdIndex === 0)) return { kind: 'sanitize', message: SANITIZE_FAILURE };
    const lookups: SimLookup[] = readLookups(bytes, at(r[TX_LOOKUP_OFFSET]!), r[TX_LOOKUP_COUNT]!).map((l) => ({
      table: this.keys.keyAt(bytes, l.tableOffset),
      writableIndexes: l.writableIndexes,
      readonlyIndexes: l.readonlyIndexes,
    }));
    const end = bytes.length;
    const signatureCount = r[TX_SIG_COUNT]!;
    const signaturesOffset = at(r[TX_SIG_OFFSET]!);
    return {
      bytes,
      signatureKey: signatureKeyOf(bytes, signaturesOffset),
      signatureCount,
      signaturesOffset,
      messageOffset: signaturesOffset + signatureCount * SIGNATURE_BYTES,
      end,
      version: r[TX_VERSION] === VERSION_LEGACY ? 'legacy' : 0,
      numRequiredSignatures,
      numReadonlySigned: (header >>> 8) & 0xff,
      numReadonlyUnsigned: (header >>> 16) & 0xff,
      staticKeys,
      recentBlockhash: this.keys.keyAt(bytes, at(r[TX_BLOCKHASH_OFFSET]!)),
      instructions,
      lookups,
    };
  }
}

export function isParseError(x: SimTransaction | TransactionParseError): x is TransactionParseError {
  return (x as TransactionParseError).kind !== undefined;
}

/** TransactionError::SanitizeFailure's text. */
const SANITIZE_FAILURE = 'Transaction failed to sanitize accounts offsets correctly';

function parseError(status: ParseStatus): TransactionParseError {
  switch (status) {
    case ParseStatus.Header:
    case ParseStatus.AccountIndex:
      return { kind: 'sanitize', message: SANITIZE_FAILURE };
    case ParseStatus.Version:
      return { kind: 'deserialize', message: DESERIALIZE_PREFIX + 'invalid value: integer `127`, expected a valid transaction message version' };
    case ParseStatus.CompactU16:
      return { kind: 'deserialize', message: DESERIALIZE_PREFIX + 'invalid value: integer, expected a compact-u16 length' };
    default:
      return { kind: 'deserialize', message: DESERIALIZE_PREFIX + 'io error: unexpected end of file' };
  }
}

/** Whether static key `k` is writable by the header rule (docs/wire-formats.md §2). */
export function isStaticWritable(tx: SimTransaction, k: number): boolean {
  const r = tx.numRequiredSignatures;
  if (k < r) return k < r - tx.numReadonlySigned;
  return k - r < tx.staticKeys.length - r - tx.numReadonlyUnsigned;
}

/** Checks every signature against its static key over the message bytes. */
export function verifyTransactionSignatures(tx: SimTransaction, keyBytes: (k: number) => Uint8Array): boolean {
  const message = tx.bytes.subarray(tx.messageOffset, tx.end);
  for (let i = 0; i < tx.signatureCount; i++) {
    const at = tx.signaturesOffset + i * SIGNATURE_BYTES;
    if (!verifySignature(message, tx.bytes.subarray(at, at + SIGNATURE_BYTES), keyBytes(i))) return false;
  }
  return true;
}

/** Static key `k` of a parsed transaction as bytes (a view). */
export function staticKeyBytes(tx: SimTransaction, k: number): Uint8Array {
  // Keys follow the header: 1 version byte (v0), 3 header bytes, the compact-u16 key count.
  const headerStart = tx.messageOffset + (tx.version === 0 ? 1 : 0) + 3;
  const count = readCompactU16(tx.bytes, headerStart, tx.end);
  const at = headerStart + (count >>> 16) + k * PUBKEY_BYTES;
  return tx.bytes.subarray(at, at + PUBKEY_BYTES);
}
