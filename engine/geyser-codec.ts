import { join } from 'node:path';

import protobuf from 'protobufjs';

import { protoDir } from './proto.js';

/**
 * `geyser.SubscribeUpdate` (proto/geyser.proto) to and from its wire bytes with protobufjs's
 * generated codec alone, for the two hot ends of the account stream: the engine's client decoding
 * every update and the simulator's server encoding every account write.
 *
 * proto-loader's (de)serializers convert each message to and from a plain object as well
 * (`toObject` / `fromObject`: u64 to decimal strings and back, every field visited twice). For an
 * account update of a 10 KiB tick array that conversion is most of the cost: decoding takes
 * 2.5 µs here against 7.8 µs through proto-loader, encoding 6.9 µs against 11.2 µs (warm, one
 * thread). Decoded bytes fields are views of the message's buffer, not copies; u64s are bigints,
 * and go into the encoder as their two 32-bit halves (u64Bits).
 * The bytes are the same protobuf either way: a peer on proto-loader, or on Yellowstone's own
 * codec, reads them unchanged.
 */

/** One decoded SubscribeUpdate, as the account-stream client uses it. */
export type GeyserUpdate =
  | {
      kind: 'account';
      slot: bigint;
      pubkey: Uint8Array;
      lamports: bigint;
      owner: Uint8Array;
      executable: boolean;
      data: Uint8Array;
      writeVersion: bigint;
      /** The writing transaction's signature, when the server names it (txn_signature). */
      txnSignature: Uint8Array | undefined;
    }
  | { kind: 'slot'; slot: bigint; parent: bigint | undefined }
  | { kind: 'pong'; id: number }
  | { kind: 'ping' }
  /** An update of a kind the client does not take (block, transaction, entry …). */
  | { kind: 'other' };

/** An account write to encode (the server side). */
export interface AccountUpdateFields {
  filters: readonly string[];
  slot: bigint;
  pubkey: Uint8Array;
  lamports: bigint;
  owner: Uint8Array;
  executable: boolean;
  rentEpoch: bigint;
  data: Uint8Array;
  writeVersion: bigint;
  txnSignature: Uint8Array | undefined;
  /** created_at, milliseconds since the epoch. */
  createdAtMs: number;
}

/** protobufjs's u64 as decoded: a long.js Long (installed beside it) or, without one, a number. */
type U64 = number | { low: number; high: number };

interface AccountInfoMessage {
  pubkey: Uint8Array;
  lamports: U64;
  owner: Uint8Array;
  executable: boolean;
  data: Uint8Array;
  write_version: U64;
  txn_signature?: Uint8Array | null;
}

interface UpdateMessage {
  account?: { account?: AccountInfoMessage | null; slot: U64 } | null;
  slot?: { slot: U64; parent?: U64 | null } | null;
  pong?: { id: number } | null;
  ping?: object | null;
}

let updateType: protobuf.Type | undefined;

function subscribeUpdateType(): protobuf.Type {
  // keepCase: the fields as the .proto names them (write_version), as proto-loader loads them.
  updateType ??= new protobuf.Root().loadSync(join(protoDir(), 'geyser.proto'), { keepCase: true }).lookupType('geyser.SubscribeUpdate');
  return updateType;
}

/**
 * A decoded bytes field as a plain Uint8Array over the message's own memory (protobufjs hands out
 * Buffer views, whose `slice` does not copy as a Uint8Array's does): never a copy, which would cost
 * some 75 µs for a 10 KiB array; the message is this update's alone and never written to.
 */
function plain(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Loads the message type and has protobufjs generate its encoder and decoder (it does so on first
 * use: tens of milliseconds that would otherwise fall on the first update of a live stream).
 */
export function prepareGeyserCodec(): void {
  if (updateType !== undefined) return;
  decodeGeyserUpdate(
    encodeAccountUpdate({
      filters: [],
      slot: 0n,
      pubkey: new Uint8Array(32),
      lamports: 0n,
      owner: new Uint8Array(32),
      executable: false,
      rentEpoch: 0n,
      data: new Uint8Array(0),
      writeVersion: 0n,
      txnSignature: undefined,
      createdAtMs: 0,
    }),
  );
}

function has(message: object, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(message, field);
}

/**
 * A u64 as protobufjs's writer takes it without parsing: its two 32-bit halves (a decimal string
 * goes through Long.fromString, most of an encode's cost for a small account).
 */
function u64Bits(value: bigint): { low: number; high: number } {
  return { low: Number(value & 0xffff_ffffn), high: Number((value >> 32n) & 0xffff_ffffn) };
}

function u64(value: U64): bigint {
  if (typeof value === 'number') return BigInt(value);
  return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
}

/** Decodes one SubscribeUpdate; throws protobufjs's error on malformed bytes. */
export function decodeGeyserUpdate(bytes: Uint8Array): GeyserUpdate {
  const m = subscribeUpdateType().decode(bytes) as unknown as UpdateMessage;
  if (m.account !== undefined && m.account !== null) {
    const info = m.account.account;
    if (info === undefined || info === null) return { kind: 'other' };
    // Absent optional fields are the prototype's defaults (empty, zero): only an own field was sent.
    const signature = has(info, 'txn_signature') ? info.txn_signature : undefined;
    return {
      kind: 'account',
      slot: u64(m.account.slot),
      pubkey: plain(info.pubkey),
      lamports: u64(info.lamports),
      owner: plain(info.owner),
      executable: info.executable,
      data: plain(info.data),
      writeVersion: u64(info.write_version),
      txnSignature: signature === undefined || signature === null ? undefined : plain(signature),
    };
  }
  if (m.slot !== undefined && m.slot !== null) {
    const parent = has(m.slot, 'parent') ? m.slot.parent : undefined;
    return { kind: 'slot', slot: u64(m.slot.slot), parent: parent === undefined || parent === null ? undefined : u64(parent) };
  }
  if (m.pong !== undefined && m.pong !== null) return { kind: 'pong', id: m.pong.id };
  if (m.ping !== undefined && m.ping !== null) return { kind: 'ping' };
  return { kind: 'other' };
}

/** Encodes an account write as a SubscribeUpdate (the bytes grpc-js sends as they are). */
export function encodeAccountUpdate(f: AccountUpdateFields): Buffer {
  const message = {
    filters: f.filters,
    account: {
      slot: u64Bits(f.slot),
      is_startup: false,
      account: {
        pubkey: f.pubkey,
        lamports: u64Bits(f.lamports),
        owner: f.owner,
        executable: f.executable,
        rent_epoch: u64Bits(f.rentEpoch),
        data: f.data,
        write_version: u64Bits(f.writeVersion),
        ...(f.txnSignature !== undefined ? { txn_signature: f.txnSignature } : {}),
      },
    },
    created_at: { seconds: Math.floor(f.createdAtMs / 1000), nanos: (f.createdAtMs % 1000) * 1_000_000 },
  };
  const out = subscribeUpdateType().encode(message).finish();
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
