/**
 * The records the main thread and the RPC worker exchange (layouts in rpc-ring-layout.ts):
 * encodeRequest / decodeRequest for a getMultipleAccounts call, AnswerEncoder (worker) and
 * AnswerDecoder (main thread) for its answer. Decoding walks the record with an offset and checks
 * every length against what remains: a corrupt record is a TpError EntryMalformed, never an allocation.
 */
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import type { AccountData } from './rpc-client.js';
import { isRpcFailure, rpcFailure, type RpcFailureKind } from './rpc-errors.js';
import {
  ACC_DATA_LENGTH,
  ACC_FLAGS,
  ACC_HEADER_BYTES,
  ACC_LAMPORTS,
  ACC_MAX_OWNER_BYTES,
  ACC_OWNER_LENGTH,
  ACCOUNT_EXECUTABLE,
  ACCOUNT_PRESENT,
  ANS_CALL_ID,
  ANS_COUNT,
  ANS_FIRST,
  ANS_FLAGS,
  ANS_HEADER_BYTES,
  ANS_TOTAL,
  ANS_TYPE,
  ANSWER_ACCOUNTS,
  ANSWER_ERROR,
  ANSWER_LAST,
  ERR_ENDPOINT_LENGTH,
  ERR_FLAGS,
  ERR_HEADER_BYTES,
  ERR_HTTP_STATUS,
  ERR_KIND,
  ERR_MESSAGE_LENGTH,
  ERR_METHOD_LENGTH,
  ERR_RPC_CODE,
  ERROR_HAS_HTTP_STATUS,
  ERROR_HAS_RPC_CODE,
  ERROR_KIND_HTTP,
  ERROR_KIND_MALFORMED,
  ERROR_KIND_NETWORK,
  ERROR_KIND_OTHER,
  ERROR_KIND_RPC,
  ERROR_KIND_TIMEOUT,
  REQ_CALL_ID,
  REQ_COUNT,
  REQ_HEADER_BYTES,
  REQ_KEY_LENGTH_BYTES,
  REQ_MAX_KEY_BYTES,
} from './rpc-ring-layout.js';

const MAX_U16 = 0xffff;
/** Endpoint and method strings of an error record are cut to this many bytes. */
const MAX_ERROR_FIELD_BYTES = 4096;

const KIND_CODES: Readonly<Record<RpcFailureKind, number>> = {
  rpc: ERROR_KIND_RPC,
  timeout: ERROR_KIND_TIMEOUT,
  http: ERROR_KIND_HTTP,
  network: ERROR_KIND_NETWORK,
  malformed: ERROR_KIND_MALFORMED,
};
const KINDS = new Map<number, RpcFailureKind>(Object.entries(KIND_CODES).map(([kind, code]) => [code, kind as RpcFailureKind]));

function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A plain (unshared) copy of `length` bytes of `bytes` from `offset`. */
function copyOf(bytes: Uint8Array, offset: number, length: number): Uint8Array {
  const copy = new Uint8Array(length);
  copy.set(bytes.subarray(offset, offset + length));
  return copy;
}

function corrupt(what: string): TpError {
  return new TpError(ErrorCode.EntryMalformed, `corrupt rpc ring record: ${what}`, { context: { record: 'rpc-ring', problem: what } });
}

/**
 * Writes the request record of one call into `into`. Returns its length, or -1 when it does not
 * fit in `into`. TpError ArgumentInvalid for more than 65,535 keys or a key over 65,535 UTF-8 bytes.
 */
export function encodeRequest(into: Buffer, callId: number, addresses: readonly string[]): number {
  if (addresses.length > MAX_U16) throw invalidArgument('addresses', addresses.length, `a request holds at most ${MAX_U16} keys, got ${addresses.length}`);
  if (into.length < REQ_HEADER_BYTES) return -1;
  into.writeUInt32LE(callId >>> 0, REQ_CALL_ID);
  into.writeUInt16LE(addresses.length, REQ_COUNT);
  into.writeUInt16LE(0, REQ_COUNT + 2);
  let pos = REQ_HEADER_BYTES;
  for (const address of addresses) {
    const n = Buffer.byteLength(address, 'utf8');
    if (n > REQ_MAX_KEY_BYTES) throw invalidArgument('addresses', n, `a key is at most ${REQ_MAX_KEY_BYTES} bytes, got ${n}`);
    if (pos + REQ_KEY_LENGTH_BYTES + n > into.length) return -1;
    into.writeUInt16LE(n, pos);
    into.write(address, pos + REQ_KEY_LENGTH_BYTES, n, 'utf8');
    pos += REQ_KEY_LENGTH_BYTES + n;
  }
  return pos;
}

export interface DecodedRequest {
  callId: number;
  addresses: string[];
}

/** Reads a request record (the strings are copies: the record can be released at once). */
export function decodeRequest(payload: Uint8Array): DecodedRequest {
  if (payload.length < REQ_HEADER_BYTES) throw corrupt(`request of ${payload.length} bytes`);
  const buf = bufferOf(payload);
  const callId = buf.readUInt32LE(REQ_CALL_ID);
  const count = buf.readUInt16LE(REQ_COUNT);
  const addresses = new Array<string>(count);
  let pos = REQ_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (pos + REQ_KEY_LENGTH_BYTES > buf.length) throw corrupt(`key ${i} of ${count} past the end`);
    const n = buf.readUInt16LE(pos);
    pos += REQ_KEY_LENGTH_BYTES;
    if (pos + n > buf.length) throw corrupt(`key ${i} of ${n} bytes past the end`);
    addresses[i] = buf.toString('utf8', pos, pos + n);
    pos += n;
  }
  return { callId, addresses };
}

/** Bytes of one account's entry in an answer record. */
function entryBytes(account: AccountData | null): number {
  return account === null ? ACC_HEADER_BYTES : ACC_HEADER_BYTES + Buffer.byteLength(account.owner, 'utf8') + account.data.length;
}

/**
 * The worker's side: builds answer records in one scratch buffer, grown in steps up to
 * `maxRecordBytes` (the answer ring's largest record). A returned record is a view of the scratch,
 * valid until the next call.
 */
export class AnswerEncoder {
  private scratch: Buffer;

  constructor(readonly maxRecordBytes: number) {
    if (maxRecordBytes < ERR_HEADER_BYTES + 64) throw invalidArgument('maxRecordBytes', maxRecordBytes, `answer records need at least ${ERR_HEADER_BYTES + 64} bytes, got ${maxRecordBytes}`);
    this.scratch = Buffer.allocUnsafeSlow(Math.min(maxRecordBytes, 1 << 16));
  }

  /**
   * Why these accounts cannot be carried (an owner over 255 bytes, or an account whose entry
   * alone is larger than a record), or null when they can.
   */
  problem(accounts: readonly (AccountData | null)[]): string | null {
    for (let i = 0; i < accounts.length; i++) {
      const account = accounts[i]!;
      if (account === null) continue;
      const ownerBytes = Buffer.byteLength(account.owner, 'utf8');
      if (ownerBytes > ACC_MAX_OWNER_BYTES) return `account ${i} has an owner of ${ownerBytes} bytes`;
      if (ANS_HEADER_BYTES + ACC_HEADER_BYTES + ownerBytes + account.data.length > this.maxRecordBytes) {
        return `account ${i} holds ${account.data.length} bytes, more than the RPC worker's answer ring carries (${this.maxRecordBytes - ANS_HEADER_BYTES - ACC_HEADER_BYTES - ownerBytes})`;
      }
    }
    return null;
  }

  /** End (exclusive) of the part that starts at `first`: as many accounts as one record holds. */
  partEnd(accounts: readonly (AccountData | null)[], first: number): number {
    let bytes = ANS_HEADER_BYTES;
    let i = first;
    while (i < accounts.length && i - first < MAX_U16) {
      const n = entryBytes(accounts[i]!);
      if (bytes + n > this.maxRecordBytes) break;
      bytes += n;
      i++;
    }
    return i;
  }

  /** The record of accounts [first, end) of a call of `accounts.length`, last when end is the length. */
  accounts(callId: number, accounts: readonly (AccountData | null)[], first: number, end: number): Uint8Array {
    if (accounts.length > MAX_U16) throw invalidArgument('accounts', accounts.length, `an answer holds at most ${MAX_U16} accounts, got ${accounts.length}`);
    let size = ANS_HEADER_BYTES;
    for (let i = first; i < end; i++) size += entryBytes(accounts[i]!);
    const buf = this.room(size);
    this.header(buf, callId, ANSWER_ACCOUNTS, end === accounts.length, accounts.length, first, end - first);
    let pos = ANS_HEADER_BYTES;
    for (let i = first; i < end; i++) {
      const account = accounts[i]!;
      if (account === null) {
        buf.fill(0, pos, pos + ACC_HEADER_BYTES);
        pos += ACC_HEADER_BYTES;
        continue;
      }
      const ownerBytes = buf.write(account.owner, pos + ACC_HEADER_BYTES, 'utf8');
      buf[pos + ACC_FLAGS] = ACCOUNT_PRESENT | (account.executable ? ACCOUNT_EXECUTABLE : 0);
      buf[pos + ACC_OWNER_LENGTH] = ownerBytes;
      buf.writeUInt16LE(0, pos + 2);
      buf.writeBigUInt64LE(account.lamports, pos + ACC_LAMPORTS);
      buf.writeUInt32LE(account.data.length, pos + ACC_DATA_LENGTH);
      pos += ACC_HEADER_BYTES + ownerBytes;
      buf.set(account.data, pos);
      pos += account.data.length;
    }
    return buf.subarray(0, pos);
  }

  /** The error record of a call: an RpcFailure keeps its kind, message, endpoint, method and codes. */
  error(callId: number, err: unknown): Uint8Array {
    const failure = isRpcFailure(err) ? err.context : undefined;
    const message = err instanceof Error ? err.message : String(err);
    const endpoint = failure?.endpoint ?? '';
    const method = failure?.method ?? '';
    const size = ERR_HEADER_BYTES + 2 * MAX_ERROR_FIELD_BYTES + Buffer.byteLength(message, 'utf8');
    const buf = this.room(Math.min(size, this.maxRecordBytes));
    this.header(buf, callId, ANSWER_ERROR, true, 0, 0, 0);
    let flags = 0;
    if (failure?.rpcCode !== undefined) flags |= ERROR_HAS_RPC_CODE;
    if (failure?.httpStatus !== undefined) flags |= ERROR_HAS_HTTP_STATUS;
    buf[ERR_KIND] = failure === undefined ? ERROR_KIND_OTHER : KIND_CODES[failure.kind];
    buf[ERR_FLAGS] = flags;
    buf.writeUInt16LE(0, ERR_FLAGS + 1);
    buf.writeInt32LE(failure?.rpcCode ?? 0, ERR_RPC_CODE);
    buf.writeUInt32LE(failure?.httpStatus ?? 0, ERR_HTTP_STATUS);
    let pos = ERR_HEADER_BYTES;
    const endpointBytes = buf.write(endpoint, pos, Math.min(MAX_ERROR_FIELD_BYTES, (buf.length - pos) >> 2), 'utf8');
    pos += endpointBytes;
    const methodBytes = buf.write(method, pos, Math.min(MAX_ERROR_FIELD_BYTES, (buf.length - pos) >> 2), 'utf8');
    pos += methodBytes;
    // Buffer.write never writes part of a character: a message cut to the record stays valid UTF-8.
    const messageBytes = buf.write(message, pos, buf.length - pos, 'utf8');
    pos += messageBytes;
    buf.writeUInt16LE(endpointBytes, ERR_ENDPOINT_LENGTH);
    buf.writeUInt16LE(methodBytes, ERR_METHOD_LENGTH);
    buf.writeUInt32LE(messageBytes, ERR_MESSAGE_LENGTH);
    return buf.subarray(0, pos);
  }

  private header(buf: Buffer, callId: number, type: number, last: boolean, total: number, first: number, count: number): void {
    buf.writeUInt32LE(callId >>> 0, ANS_CALL_ID);
    buf[ANS_TYPE] = type;
    buf[ANS_FLAGS] = last ? ANSWER_LAST : 0;
    buf.writeUInt16LE(total, ANS_TOTAL);
    buf.writeUInt16LE(first, ANS_FIRST);
    buf.writeUInt16LE(count, ANS_COUNT);
  }

  /** The scratch, at least `size` bytes (at most maxRecordBytes). */
  private room(size: number): Buffer {
    if (size > this.maxRecordBytes) throw invalidArgument('size', size, `answer record of ${size} bytes over the ${this.maxRecordBytes}-byte limit`);
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(Math.min(this.maxRecordBytes, Math.max(size, this.scratch.length * 2)));
    return this.scratch;
  }
}

/**
 * Owner strings by their bytes, so the few programs that own every account read (the token
 * program, the DEX programs) are one string each instead of one per account.
 */
class OwnerNames {
  private readonly bytes: Uint8Array[] = [];
  private readonly names: string[] = [];
  private next = 0;

  constructor(private readonly limit = 32) {}

  name(record: Uint8Array, offset: number, length: number): string {
    const known = this.bytes;
    for (let i = 0; i < known.length; i++) {
      const k = known[i]!;
      if (k.length !== length) continue;
      let j = 0;
      while (j < length && k[j] === record[offset + j]) j++;
      if (j === length) return this.names[i]!;
    }
    const copy = copyOf(record, offset, length);
    const name = bufferOf(copy).toString('utf8');
    if (known.length < this.limit) {
      known.push(copy);
      this.names.push(name);
    } else {
      known[this.next] = copy;
      this.names[this.next] = name;
      this.next = (this.next + 1) % this.limit;
    }
    return name;
  }
}

/**
 * The main thread's side: `header(record)` reads a record's header into this object's fields,
 * then `accounts(...)` or `error(...)` reads its body. Account data is copied out of the record
 * (one copy per account), so what it returns stays valid after the ring space is released.
 */
export class AnswerDecoder {
  callId = 0;
  type = 0;
  last = false;
  /** Accounts in the call. */
  total = 0;
  /** Index of the first account of this record. */
  first = 0;
  /** Accounts in this record. */
  count = 0;
  private view: DataView | null = null;
  private readonly owners = new OwnerNames();

  header(record: Uint8Array): void {
    if (record.length < ANS_HEADER_BYTES) throw corrupt(`answer of ${record.length} bytes`);
    const view = this.viewOf(record);
    const at = record.byteOffset;
    this.callId = view.getUint32(at + ANS_CALL_ID, true);
    this.type = record[ANS_TYPE]!;
    this.last = (record[ANS_FLAGS]! & ANSWER_LAST) !== 0;
    this.total = view.getUint16(at + ANS_TOTAL, true);
    this.first = view.getUint16(at + ANS_FIRST, true);
    this.count = view.getUint16(at + ANS_COUNT, true);
    if (this.type !== ANSWER_ACCOUNTS && this.type !== ANSWER_ERROR) throw corrupt(`answer type ${this.type}`);
    if (this.first + this.count > this.total) throw corrupt(`accounts ${this.first}+${this.count} of ${this.total}`);
  }

  /** Reads the record's accounts into `into[first .. first + count)`, each with `slot`. */
  accounts(record: Uint8Array, slot: bigint, into: (AccountData | null)[]): void {
    const view = this.viewOf(record);
    const at = record.byteOffset;
    let pos = ANS_HEADER_BYTES;
    for (let i = this.first, end = this.first + this.count; i < end; i++) {
      if (pos + ACC_HEADER_BYTES > record.length) throw corrupt(`account ${i} header past the end`);
      const flags = record[pos + ACC_FLAGS]!;
      if ((flags & ACCOUNT_PRESENT) === 0) {
        into[i] = null;
        pos += ACC_HEADER_BYTES;
        continue;
      }
      const ownerBytes = record[pos + ACC_OWNER_LENGTH]!;
      const dataBytes = view.getUint32(at + pos + ACC_DATA_LENGTH, true);
      const lamports = view.getBigUint64(at + pos + ACC_LAMPORTS, true);
      const ownerAt = pos + ACC_HEADER_BYTES;
      const dataAt = ownerAt + ownerBytes;
      if (dataAt + dataBytes > record.length) throw corrupt(`account ${i} of ${dataBytes} bytes past the end`);
      into[i] = {
        data: copyOf(record, dataAt, dataBytes),
        owner: this.owners.name(record, ownerAt, ownerBytes),
        lamports,
        executable: (flags & ACCOUNT_EXECUTABLE) !== 0,
        slot,
      };
      pos = dataAt + dataBytes;
    }
  }

  /** The error an ANSWER_ERROR record carries: an RpcFailure as the worker's client raised it, or another failure of the worker (TP_ERR_INTERNAL). */
  error(record: Uint8Array): Error {
    if (record.length < ERR_HEADER_BYTES) throw corrupt(`error answer of ${record.length} bytes`);
    const view = this.viewOf(record);
    const at = record.byteOffset;
    const flags = record[ERR_FLAGS]!;
    const endpointBytes = view.getUint16(at + ERR_ENDPOINT_LENGTH, true);
    const methodBytes = view.getUint16(at + ERR_METHOD_LENGTH, true);
    const messageBytes = view.getUint32(at + ERR_MESSAGE_LENGTH, true);
    if (ERR_HEADER_BYTES + endpointBytes + methodBytes + messageBytes > record.length) throw corrupt('error strings past the end');
    const buf = bufferOf(record);
    let pos = ERR_HEADER_BYTES;
    const endpoint = buf.toString('utf8', pos, (pos += endpointBytes));
    const method = buf.toString('utf8', pos, (pos += methodBytes));
    const message = buf.toString('utf8', pos, pos + messageBytes);
    const kind = KINDS.get(record[ERR_KIND]!);
    if (kind === undefined) return new TpError(ErrorCode.Internal, message);
    return rpcFailure(kind, message, {
      endpoint,
      method,
      rpcCode: (flags & ERROR_HAS_RPC_CODE) !== 0 ? view.getInt32(at + ERR_RPC_CODE, true) : undefined,
      httpStatus: (flags & ERROR_HAS_HTTP_STATUS) !== 0 ? view.getUint32(at + ERR_HTTP_STATUS, true) : undefined,
    });
  }

  /** A DataView over the whole buffer behind `record` (one per ring, kept). */
  private viewOf(record: Uint8Array): DataView {
    const buffer = record.buffer;
    if (this.view === null || this.view.buffer !== buffer) this.view = new DataView(buffer, 0, buffer.byteLength);
    return this.view;
  }
}
