import bs58 from 'bs58';

import { rpcError, type RpcError, RpcErrorCode, type Commitment } from '../chain-backend.js';
import { rustDebugList, rustDebugMap, writeF64 } from './json-text.js';

/**
 * Reading JSON-RPC parameters with the real node's rules and error messages.
 *
 * The node (agave) parses parameters with serde through jsonrpc-core and jsonrpc-derive; clients
 * and their tests match on the resulting messages, so these readers reproduce them:
 * `Invalid params: invalid type: integer \`5\`, expected a string.`, `\`params\` should have at
 * least 1 argument(s)`, `Invalid param: WrongSize`, ... Every reader throws RpcError(-32602).
 */

export function invalidParams(message: string, data?: unknown): RpcError {
  return rpcError(RpcErrorCode.InvalidParams, message, data);
}

/** A serde deserialization failure, worded as jsonrpc-core reports it. */
export function serdeError(detail: string): RpcError {
  return invalidParams(`Invalid params: ${detail}.`);
}

/** serde's words for a value it did not expect (serde_json says `null`, not `unit value`). */
export function describeUnexpected(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'boolean':
      return `boolean \`${v}\``;
    case 'number':
      return Number.isSafeInteger(v) ? `integer \`${v}\`` : `floating point \`${writeF64(v)}\``;
    case 'string':
      return `string ${JSON.stringify(v)}`;
    default:
      return Array.isArray(v) ? 'sequence' : 'map';
  }
}

export function invalidType(v: unknown, expected: string): RpcError {
  return serdeError(`invalid type: ${describeUnexpected(v)}, expected ${expected}`);
}

/** serde's `unknown variant` message with its one-of list. */
export function unknownVariant(variant: string, names: readonly string[]): RpcError {
  const list =
    names.length === 1
      ? `\`${names[0]}\``
      : names.length === 2
        ? `\`${names[0]}\` or \`${names[1]}\``
        : `one of ${names.map((n) => `\`${n}\``).join(', ')}`;
  return serdeError(`unknown variant \`${variant}\`, expected ${list}`);
}

export const NO_ARGS: readonly unknown[] = Object.freeze([]);

/**
 * jsonrpc-derive's check for a method whose last `optional` parameters are `Option`s: params must
 * be absent or an array holding from `required` to `required + optional` items.
 */
export function trailingArgs(params: unknown, required: number, optional: number): readonly unknown[] {
  const total = required + optional;
  if (params === undefined || params === null) {
    if (required > 0) throw invalidParams(`\`params\` should have at least ${required} argument(s)`);
    return NO_ARGS;
  }
  if (!Array.isArray(params)) {
    if (total === 0) throw noParamsExpected(params);
    throw invalidParams('`params` should be an array');
  }
  const n = params.length;
  if (total === 0) {
    if (n === 0) return params;
    throw noParamsExpected(params);
  }
  if (n < required) throw invalidParams(`\`params\` should have at least ${required} argument(s)`);
  if (n > total) {
    throw invalidParams(`Invalid parameters: Expected from ${required} to ${total} parameters.`, `"Got: ${n}"`);
  }
  return params;
}

function noParamsExpected(params: unknown): RpcError {
  const debug = Array.isArray(params) ? `Array(${rustDebugList(params)})` : `Map(${rustDebugMap(params as Record<string, unknown>)})`;
  return invalidParams('Invalid parameters: No parameters were expected', debug);
}

/** serde's rule for a method whose parameters are a fixed tuple with no optional tail. */
export function tupleArgs(params: unknown, size: number): readonly unknown[] {
  if (!Array.isArray(params)) throw invalidType(params, `a tuple of size ${size}`);
  if (params.length < size) throw serdeError(`invalid length ${params.length}, expected a tuple of size ${size}`);
  if (params.length > size) throw serdeError(`invalid length ${params.length}, expected fewer elements in array`);
  return params;
}

export function readString(v: unknown): string {
  if (typeof v !== 'string') throw invalidType(v, 'a string');
  return v;
}

export function readStringList(v: unknown): readonly string[] {
  if (!Array.isArray(v)) throw invalidType(v, 'a sequence');
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') throw invalidType(v[i], 'a string');
  }
  return v as string[];
}

export function readBool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw invalidType(v, 'a boolean');
  return v;
}

/** A u64 (or usize): a non-negative integer. */
export function readU64(v: unknown, expected = 'u64'): bigint {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidType(v, expected);
  if (v < 0) throw serdeError(`invalid value: integer \`${v}\`, expected ${expected}`);
  return BigInt(v);
}

export function readUsize(v: unknown): number {
  return Number(readU64(v, 'usize'));
}

/** A config object: absent and null mean "none". Arrays and scalars are refused with serde's words. */
export function readStruct(v: unknown, name: string): Record<string, unknown> | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidType(v, `struct ${name}`);
  return v as Record<string, unknown>;
}

const COMMITMENTS: readonly Commitment[] = ['processed', 'confirmed', 'finalized'];

/** A `CommitmentLevel` enum field of a struct without flatten: errors are reported. */
export function readCommitmentLevel(v: unknown): Commitment {
  if (typeof v !== 'string') throw invalidType(v, 'string or map');
  if (!(COMMITMENTS as readonly string[]).includes(v)) throw unknownVariant(v, COMMITMENTS);
  return v as Commitment;
}

/**
 * The `commitment` of a config that flattens `Option<CommitmentConfig>`: serde swallows a bad
 * value there and the node falls back to its default, so this never throws.
 */
export function flattenedCommitment(v: unknown): Commitment | undefined {
  return typeof v === 'string' && (COMMITMENTS as readonly string[]).includes(v) ? (v as Commitment) : undefined;
}

/** An enum field: a string naming one of `names`. */
export function readVariant<T extends string>(v: unknown, names: readonly T[]): T {
  if (typeof v !== 'string') throw invalidType(v, 'string or map');
  if (!(names as readonly string[]).includes(v)) throw unknownVariant(v, names);
  return v as T;
}

export function missingField(name: string): RpcError {
  return serdeError(`missing field \`${name}\``);
}

// --- base58 keys, signatures and hashes, verified as the node's FromStr impls do ---

const PUBKEY_BYTES = 32;
const SIGNATURE_BYTES = 64;
const MAX_BASE58_PUBKEY_LEN = 44;
const MAX_BASE58_SIGNATURE_LEN = 88;

/**
 * Addresses already seen valid. The scanner asks for the same pool accounts on every batch, so a
 * set lookup replaces a base58 decode on the hot path; the set is dropped whole when full.
 */
const knownPubkeys = new Set<string>();
const KNOWN_PUBKEYS_MAX = 65_536;

/** Why a base58 value is refused, as the node's `ParsePubkeyError` / `ParseHashError` Debug: or null. */
function base58Problem(text: string, bytes: number, maxLen: number): 'WrongSize' | 'Invalid' | null {
  if (text.length > maxLen) return 'WrongSize';
  const decoded = bs58.decodeUnsafe(text);
  // Decoding onto a fixed-size buffer: too many bytes is a decode failure, too few a size error.
  if (decoded === undefined || decoded.length > bytes) return 'Invalid';
  return decoded.length === bytes ? null : 'WrongSize';
}

/** `verify_pubkey`: -32602 `Invalid param: WrongSize` or `Invalid param: Invalid`. */
export function verifyPubkey(text: string): string {
  if (knownPubkeys.has(text)) return text;
  const problem = base58Problem(text, PUBKEY_BYTES, MAX_BASE58_PUBKEY_LEN);
  if (problem !== null) throw invalidParams(`Invalid param: ${problem}`);
  if (knownPubkeys.size >= KNOWN_PUBKEYS_MAX) knownPubkeys.clear();
  knownPubkeys.add(text);
  return text;
}

export function isPubkey(text: string): boolean {
  return knownPubkeys.has(text) || base58Problem(text, PUBKEY_BYTES, MAX_BASE58_PUBKEY_LEN) === null;
}

/** `verify_signature`: -32602 `Invalid param: WrongSize` or `Invalid param: Invalid`. */
export function verifySignature(text: string): string {
  const problem = base58Problem(text, SIGNATURE_BYTES, MAX_BASE58_SIGNATURE_LEN);
  if (problem !== null) throw invalidParams(`Invalid param: ${problem}`);
  return text;
}

export function isSignature(text: string): boolean {
  return base58Problem(text, SIGNATURE_BYTES, MAX_BASE58_SIGNATURE_LEN) === null;
}

/** `Hash::from_str` as isBlockhashValid reports it: the bare Debug name, no prefix. */
export function verifyHash(text: string): string {
  const problem = base58Problem(text, PUBKEY_BYTES, MAX_BASE58_PUBKEY_LEN);
  if (problem !== null) throw invalidParams(problem);
  return text;
}
