import { ErrorCode, TpError } from '../errors.js';

/**
 * Decodes `shredstream.Entry{uint64 slot = 1; bytes entries = 2;}` straight from the received
 * gRPC frame: the slot becomes a bigint without passing through a JS number or a string, and
 * `entries` is a view on the frame's Buffer, never a copy. Unknown fields are skipped, as protobuf
 * decoders do, so a newer upstream revision with extra fields still decodes.
 */

export interface EntryMessage {
  slot: bigint;
  /** A view on the received frame (bincode Vec<Entry>); empty when the field is absent. */
  entries: Uint8Array;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;
const FIELD_SLOT = 1;
const FIELD_ENTRIES = 2;
/** A u64 varint is at most 10 bytes. */
const MAX_VARINT_BYTES = 10;
/** Seven varint groups (49 bits) still add up exactly in a double. */
const EXACT_NUMBER_SHIFT = 49;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
const EMPTY = new Uint8Array(0);

/** Read position shared by the helpers below (single-threaded, no re-entrancy). */
let cursor = 0;

function malformed(message: string, offset: number): TpError {
  return new TpError(ErrorCode.EntryMalformed, `Entry message: ${message}`, { context: { offset } });
}

/** A varint as a number; only for tags and lengths, which must stay below 2^49. */
function readSmallVarint(buf: Uint8Array): number {
  let value = 0;
  let shift = 0;
  const start = cursor;
  while (shift < EXACT_NUMBER_SHIFT) {
    const b = buf[cursor++];
    if (b === undefined) throw malformed('truncated varint', start);
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return value;
    shift += 7;
  }
  throw malformed('varint too large for a tag or length', start);
}

function readU64(buf: Uint8Array): bigint {
  let low = 0;
  let high = 0n;
  let shift = 0;
  const start = cursor;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const b = buf[cursor++];
    if (b === undefined) throw malformed('truncated varint', start);
    if (shift < EXACT_NUMBER_SHIFT) low += (b & 0x7f) * 2 ** shift;
    else high |= BigInt(b & 0x7f) << BigInt(shift);
    if (b < 0x80) {
      const value = BigInt(low) | high;
      if (value > U64_MAX) throw malformed('varint exceeds u64', start);
      return value;
    }
    shift += 7;
  }
  throw malformed('varint longer than 10 bytes', start);
}

function skip(buf: Uint8Array, wireType: number, tagOffset: number): void {
  switch (wireType) {
    case WIRE_VARINT:
      readU64(buf);
      return;
    case WIRE_FIXED64:
      cursor += 8;
      break;
    case WIRE_FIXED32:
      cursor += 4;
      break;
    case WIRE_LENGTH_DELIMITED: {
      // Read first: `cursor += read()` would add to the cursor value from before the read.
      const length = readSmallVarint(buf);
      cursor += length;
      break;
    }
    default:
      throw malformed(`unsupported wire type ${wireType}`, tagOffset);
  }
  if (cursor > buf.length) throw malformed('field runs past the end', tagOffset);
}

/** Throws TpError(TP_ERR_ENTRY_MALFORMED) on bytes that are not a valid Entry message. */
export function decodeEntryMessage(buf: Uint8Array): EntryMessage {
  cursor = 0;
  // Proto3 defaults: an absent field is 0 / empty; a repeated scalar field keeps its last value.
  let slot = 0n;
  let entries: Uint8Array = EMPTY;
  while (cursor < buf.length) {
    const tagOffset = cursor;
    const tag = readSmallVarint(buf);
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (field === 0) throw malformed('field number 0', tagOffset);
    if (field === FIELD_SLOT && wireType === WIRE_VARINT) {
      slot = readU64(buf);
    } else if (field === FIELD_ENTRIES && wireType === WIRE_LENGTH_DELIMITED) {
      const length = readSmallVarint(buf);
      if (length > buf.length - cursor) throw malformed(`entries length ${length} exceeds the ${buf.length - cursor} bytes left`, tagOffset);
      entries = buf.subarray(cursor, cursor + length);
      cursor += length;
    } else if (field === FIELD_SLOT || field === FIELD_ENTRIES) {
      throw malformed(`field ${field} has wire type ${wireType}`, tagOffset);
    } else {
      skip(buf, wireType, tagOffset);
    }
  }
  return { slot, entries };
}
