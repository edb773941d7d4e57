/**
 * Protobuf encoding of `shredstream.Entry{uint64 slot = 1; bytes entries = 2;}`, done by hand so
 * a batch is serialized once and the same bytes go to every subscriber (grpc-js would otherwise
 * re-encode the message per write), and so a u64 slot never passes through a JS number.
 */
import { invalidArgument } from '../../errors.js';

/** Field 1, wire type 0 (varint). */
const SLOT_TAG = 0x08;
/** Field 2, wire type 2 (length-delimited). */
const ENTRIES_TAG = 0x12;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

function varintLength(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    n++;
  }
  return n;
}

function varintLengthBig(value: bigint): number {
  let n = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    n++;
  }
  return n;
}

function writeVarint(out: Uint8Array, offset: number, value: number): number {
  while (value >= 0x80) {
    out[offset++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  out[offset++] = value;
  return offset;
}

function writeVarintBig(out: Uint8Array, offset: number, value: bigint): number {
  while (value >= 0x80n) {
    out[offset++] = Number(value & 0x7fn) | 0x80;
    value >>= 7n;
  }
  out[offset++] = Number(value);
  return offset;
}

/**
 * The wire bytes of one Entry message. Proto3 rule: fields equal to their default (slot 0, empty
 * entries) are omitted, as protobuf encoders do.
 */
export function encodeEntryMessage(slot: bigint, entries: Uint8Array): Buffer {
  if (slot < 0n || slot > U64_MAX) throw invalidArgument('slot', slot.toString(), `slot ${slot} outside u64`);
  const small = slot <= BigInt(Number.MAX_SAFE_INTEGER);
  const slotNumber = small ? Number(slot) : 0;
  const slotLength = slot === 0n ? 0 : 1 + (small ? varintLength(slotNumber) : varintLengthBig(slot));
  const entriesLength = entries.length === 0 ? 0 : 1 + varintLength(entries.length) + entries.length;
  const out = Buffer.allocUnsafe(slotLength + entriesLength);
  let offset = 0;
  if (slotLength > 0) {
    out[offset++] = SLOT_TAG;
    offset = small ? writeVarint(out, offset, slotNumber) : writeVarintBig(out, offset, slot);
  }
  if (entriesLength > 0) {
    out[offset++] = ENTRIES_TAG;
    offset = writeVarint(out, offset, entries.length);
    out.set(entries, offset);
  }
  return out;
}
