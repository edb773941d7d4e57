import bs58 from 'bs58';

import { rpcError, RpcErrorCode, type AccountRecord } from '../chain-backend.js';
import { zstdRawFrame } from './zstd-raw-frame.js';

/**
 * Accounts as the node encodes them (`UiAccount`): `{lamports, data, owner, executable, rentEpoch,
 * space}` with u64s as exact integers and `data` in the requested encoding. HTTP results come out
 * with sorted keys (they pass through serde_json's `Value`); WebSocket notifications in struct order.
 */

export const ACCOUNT_ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'] as const;
export type AccountEncoding = (typeof ACCOUNT_ENCODINGS)[number];

/** Base58 account data is refused above this size (`MAX_BASE58_BYTES`). */
export const MAX_BASE58_BYTES = 128;

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** What a subscription reports for an account that no longer exists: `AccountSharedData::default()`. */
export const EMPTY_ACCOUNT: AccountRecord = Object.freeze({
  lamports: 0n,
  owner: SYSTEM_PROGRAM,
  data: new Uint8Array(0),
  executable: false,
  rentEpoch: 0n,
});

/** `dataSlice`; `length` < 0 means no slice. */
export interface DataSlice {
  offset: number;
  length: number;
}

export const NO_SLICE: DataSlice = Object.freeze({ offset: 0, length: -1 });

/** The node's `slice_data`: out-of-range offsets give no bytes, long lengths are cut. */
export function sliceData(data: Uint8Array, slice: DataSlice): Uint8Array {
  if (slice.length < 0) return data;
  if (slice.offset >= data.length) return data.subarray(0, 0);
  return data.subarray(slice.offset, Math.min(data.length, slice.offset + slice.length));
}

export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * getAccountInfo / getMultipleAccounts refuse base58 data over 128 bytes with -32600 (InvalidRequest,
 * not InvalidParams), before encoding anything.
 */
export function checkBase58Size(dataLength: number, encoding: AccountEncoding, slice: DataSlice): void {
  if (encoding !== 'binary' && encoding !== 'base58') return;
  const length = slice.length < 0 ? dataLength : Math.min(slice.length, Math.max(0, dataLength - slice.offset));
  if (length > MAX_BASE58_BYTES) {
    throw rpcError(
      RpcErrorCode.InvalidRequest,
      `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`,
    );
  }
}

/**
 * JSON text of the `data` field. `jsonParsed` falls back to base64, as the node does for accounts
 * of programs it has no parser for.
 */
export function writeAccountData(data: Uint8Array, encoding: AccountEncoding, slice: DataSlice): string {
  const bytes = sliceData(data, slice);
  switch (encoding) {
    case 'base64':
    case 'jsonParsed':
      return '["' + base64(bytes) + '","base64"]';
    case 'binary':
      return '"' + bs58.encode(bytes) + '"';
    case 'base58':
      return '["' + bs58.encode(bytes) + '","base58"]';
    case 'base64+zstd':
      return '["' + base64(zstdRawFrame(bytes)) + '","base64+zstd"]';
  }
}

/** An account in an HTTP result: keys sorted. */
export function writeUiAccountSorted(account: AccountRecord, encoding: AccountEncoding, slice: DataSlice): string {
  return (
    '{"data":' +
    writeAccountData(account.data, encoding, slice) +
    ',"executable":' +
    (account.executable ? 'true' : 'false') +
    ',"lamports":' +
    account.lamports.toString() +
    ',"owner":"' +
    account.owner +
    '","rentEpoch":' +
    account.rentEpoch.toString() +
    ',"space":' +
    account.data.length +
    '}'
  );
}

/** An account in a notification: `UiAccount`'s field order. */
export function writeUiAccount(account: AccountRecord, encoding: AccountEncoding, slice: DataSlice): string {
  return (
    '{"lamports":' +
    account.lamports.toString() +
    ',"data":' +
    writeAccountData(account.data, encoding, slice) +
    ',"owner":"' +
    account.owner +
    '","executable":' +
    (account.executable ? 'true' : 'false') +
    ',"rentEpoch":' +
    account.rentEpoch.toString() +
    ',"space":' +
    account.data.length +
    '}'
  );
}
