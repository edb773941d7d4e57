import bs58 from 'bs58';
import { base58 } from '../../chain/index.js';
import { firstSignatureBytes } from '../../chain/index.js';

import { invalidParams, readVariant } from './rpc-params.js';

/**
 * Signed transactions as sendTransaction and simulateTransaction receive them: encoded text,
 * checked and decoded with the node's limits and messages (`decode_and_deserialize`). Parsing the
 * transaction itself is the chain's job.
 */

/** Largest serialized transaction (`PACKET_DATA_SIZE`). */
export const PACKET_DATA_SIZE = 1232;
/** Golden sizes of the encoded text of a 1232-byte transaction. */
const MAX_BASE58_SIZE = 1683;
const MAX_BASE64_SIZE = 1644;
const TYPE_NAME = 'solana_transaction::versioned::VersionedTransaction';

export const TRANSACTION_ENCODINGS = ['binary', 'base64', 'base58', 'json', 'jsonParsed'] as const;
export type TransactionEncoding = (typeof TRANSACTION_ENCODINGS)[number];

export function readTransactionEncoding(v: unknown): TransactionEncoding {
  return readVariant(v, TRANSACTION_ENCODINGS);
}

/** `into_binary_encoding`: base58 by default (deprecated), base64; json forms are refused. */
export function binaryEncoding(encoding: TransactionEncoding | undefined): 'base58' | 'base64' {
  switch (encoding) {
    case undefined:
    case 'binary':
    case 'base58':
      return 'base58';
    case 'base64':
      return 'base64';
    default:
      throw invalidParams(`unsupported encoding: ${encoding}. Supported encodings: base58, base64`);
  }
}

export function decodeWireTransaction(encoded: string, encoding: 'base58' | 'base64'): Uint8Array {
  let bytes: Uint8Array;
  if (encoding === 'base58') {
    if (encoded.length > MAX_BASE58_SIZE) {
      throw invalidParams(
        `base58 encoded ${TYPE_NAME} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE58_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    const decoded = bs58.decodeUnsafe(encoded);
    if (decoded === undefined) throw invalidParams(`invalid base58 encoding: ${base58Error(encoded)}`);
    bytes = decoded;
  } else {
    if (encoded.length > MAX_BASE64_SIZE) {
      throw invalidParams(
        `base64 encoded ${TYPE_NAME} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE64_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    const problem = base64Error(encoded);
    if (problem !== null) throw invalidParams(`invalid base64 encoding: ${problem}`);
    bytes = Buffer.from(encoded, 'base64');
  }
  if (bytes.length > PACKET_DATA_SIZE) {
    throw invalidParams(`decoded ${TYPE_NAME} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
  }
  return bytes;
}

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** The bs58 crate's `DecodeError` Debug text for the first bad character. */
function base58Error(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return `NonAsciiCharacter { index: ${i} }`;
    if (!BASE58_ALPHABET.includes(text[i] as string)) return `InvalidCharacter { character: '${text[i]}', index: ${i} }`;
  }
  return 'InvalidCharacter { character: \'?\', index: 0 }';
}

/** Standard-alphabet sextet value of a character code, or -1. */
function base64Value(code: number): number {
  if (code >= 65 && code <= 90) return code - 65;
  if (code >= 97 && code <= 122) return code - 71;
  if (code >= 48 && code <= 57) return code + 4;
  if (code === 43) return 62;
  if (code === 47) return 63;
  return -1;
}

const PAD = 61;

/**
 * The base64 crate's `DecodeError` Debug text for text the STANDARD engine (canonical padding)
 * refuses, or null. Node's own decoder skips bad characters, so the check is done here.
 */
function base64Error(text: string): string | null {
  let symbols = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === PAD) {
      if (symbols === text.length) symbols = i;
      continue;
    }
    if (base64Value(code) < 0 || symbols !== text.length) return `InvalidByte(${i}, ${code})`;
  }
  if (symbols % 4 === 1) return `InvalidLength(${symbols})`;
  if (text.length % 4 !== 0 || text.length - symbols > 2) return 'InvalidPadding';
  // The unused low bits of the last symbol must be zero.
  const last = symbols - 1;
  const unusedMask = symbols % 4 === 2 ? 0x0f : symbols % 4 === 3 ? 0x03 : 0;
  if (unusedMask !== 0 && (base64Value(text.charCodeAt(last)) & unusedMask) !== 0) {
    return `InvalidLastSymbol(${last}, ${text.charCodeAt(last)})`;
  }
  return null;
}

/** The first signature of a wire transaction, base58 (compact-u16 count, then 64-byte signatures). */
export function firstSignature(tx: Uint8Array): string | null {
  const signature = firstSignatureBytes(tx);
  return signature === undefined ? null : base58.encode(signature);
}
