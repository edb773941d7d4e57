/**
 * Orca Whirlpool tick arrays: 88 ticks from `start_tick_index`, `tick_spacing` apart. Two account
 * types exist (orca-so/whirlpools programs/whirlpool/src/state/{fixed,dynamic}_tick_array.rs):
 *
 * Fixed `TickArray` (discriminator 4561bdbe6e0742bb), 9988 bytes, zero-copy packed:
 *   8 start_tick_index i32; 12 ticks[88] x 113; 9956 whirlpool pubkey.
 *   Tick: +0 initialized bool, +1 liquidity_net i128, +17 liquidity_gross u128,
 *         +33 fee_growth_outside_a, +49 fee_growth_outside_b, +65 reward_growths_outside[3] (u128).
 *
 * `DynamicTickArray` (discriminator 11d8f68ee1c7da38), 148 to 10004 bytes:
 *   8 start_tick_index i32; 12 whirlpool pubkey; 44 tick_bitmap u128 (bit i: tick i initialized);
 *   60 ticks[88], each a tag byte (0 uninitialized, 1 initialized) followed, when initialized, by
 *   the 112 bytes of the tick without its `initialized` flag.
 *
 * The accounts do not store the tick spacing: `Tick.index` is start + slot * spacing when the
 * caller passes the pool's tick spacing, NaN otherwise (the swap math works from slots).
 */
import {
  expectDiscriminator,
  expectSize,
  hasDiscriminator,
  hexBytes,
  invalidAccount,
  readI128,
  readI32,
  readPubkey,
  readU128,
  readU8,
  writeI128,
  writeI32,
  writePubkey,
  writeU128,
  writeU8,
} from '../account-bytes.js';
import { ErrorCode, TpError } from '../../errors.js';
import { Dex, type Tick, type TickArray } from '../types.js';

export const WHIRLPOOL_TICK_ARRAY_SIZE = 88;
export const WHIRLPOOL_TICK_BYTES = 113;
export const WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE = 9988;
export const WHIRLPOOL_FIXED_TICK_ARRAY_DISCRIMINATOR = hexBytes('4561bdbe6e0742bb');
export const WHIRLPOOL_DYNAMIC_TICK_ARRAY_DISCRIMINATOR = hexBytes('11d8f68ee1c7da38');
export const WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE = 60 + WHIRLPOOL_TICK_ARRAY_SIZE;
export const WHIRLPOOL_DYNAMIC_TICK_ARRAY_MAX_SIZE = 60 + WHIRLPOOL_TICK_ARRAY_SIZE * WHIRLPOOL_TICK_BYTES;

const FIXED_START = 8;
const FIXED_TICKS = 12;
const FIXED_WHIRLPOOL = FIXED_TICKS + WHIRLPOOL_TICK_ARRAY_SIZE * WHIRLPOOL_TICK_BYTES;
const DYN_START = 8;
const DYN_WHIRLPOOL = 12;
const DYN_BITMAP = 44;
const DYN_TICKS = 60;

const NAME = 'Whirlpool tick array';

function tickIndex(start: number, slot: number, tickSpacing: number | undefined): number {
  return tickSpacing === undefined ? NaN : start + slot * tickSpacing;
}

/** Whether `data` is one of the two Whirlpool tick array account types. */
export function isWhirlpoolTickArray(data: Uint8Array): boolean {
  return (
    hasDiscriminator(data, WHIRLPOOL_FIXED_TICK_ARRAY_DISCRIMINATOR) ||
    hasDiscriminator(data, WHIRLPOOL_DYNAMIC_TICK_ARRAY_DISCRIMINATOR)
  );
}

/** Decodes a fixed or dynamic Whirlpool tick array, told apart by discriminator. */
export function decodeWhirlpoolTickArray(data: Uint8Array, address?: string, tickSpacing?: number): TickArray {
  if (hasDiscriminator(data, WHIRLPOOL_DYNAMIC_TICK_ARRAY_DISCRIMINATOR)) {
    return decodeDynamicTickArray(data, address, tickSpacing);
  }
  return decodeFixedTickArray(data, address, tickSpacing);
}

function decodeFixedTickArray(data: Uint8Array, address: string | undefined, tickSpacing: number | undefined): TickArray {
  expectSize(data, WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE, Dex.Whirlpool, NAME, address);
  expectDiscriminator(data, WHIRLPOOL_FIXED_TICK_ARRAY_DISCRIMINATOR, Dex.Whirlpool, NAME, address);
  const start = readI32(data, FIXED_START);
  const ticks: Tick[] = new Array<Tick>(WHIRLPOOL_TICK_ARRAY_SIZE);
  for (let slot = 0; slot < WHIRLPOOL_TICK_ARRAY_SIZE; slot++) {
    const at = FIXED_TICKS + slot * WHIRLPOOL_TICK_BYTES;
    const flag = readU8(data, at);
    if (flag > 1) throw invalidAccount(Dex.Whirlpool, NAME, `tick ${slot} has initialized flag ${flag}`, address);
    // Uninitialized ticks are all zero on chain: skip reading their 32 bytes of liquidity.
    ticks[slot] =
      flag === 1
        ? {
            index: tickIndex(start, slot, tickSpacing),
            initialized: true,
            liquidityNet: readI128(data, at + 1),
            liquidityGross: readU128(data, at + 17),
          }
        : { index: tickIndex(start, slot, tickSpacing), initialized: false, liquidityNet: 0n, liquidityGross: 0n };
  }
  return { dex: Dex.Whirlpool, pool: readPubkey(data, FIXED_WHIRLPOOL), startTickIndex: start, ticks };
}

function decodeDynamicTickArray(data: Uint8Array, address: string | undefined, tickSpacing: number | undefined): TickArray {
  if (data.length < WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE || data.length > WHIRLPOOL_DYNAMIC_TICK_ARRAY_MAX_SIZE) {
    throw new TpError(
      ErrorCode.AccountSize,
      `${NAME} (dynamic) must be ${WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE} to ${WHIRLPOOL_DYNAMIC_TICK_ARRAY_MAX_SIZE} bytes, got ${data.length}`,
      { context: { dex: Dex.Whirlpool, account: NAME, actual: data.length, address } },
    );
  }
  const start = readI32(data, DYN_START);
  const bitmap = readU128(data, DYN_BITMAP);
  const ticks: Tick[] = new Array<Tick>(WHIRLPOOL_TICK_ARRAY_SIZE);
  let at = DYN_TICKS;
  for (let slot = 0; slot < WHIRLPOOL_TICK_ARRAY_SIZE; slot++) {
    if (at >= data.length) throw invalidAccount(Dex.Whirlpool, NAME, `tick ${slot} lies past the account end`, address);
    const tag = readU8(data, at);
    const bit = (bitmap >> BigInt(slot)) & 1n;
    if (tag > 1 || BigInt(tag) !== bit) {
      throw invalidAccount(Dex.Whirlpool, NAME, `tick ${slot} tag ${tag} disagrees with the tick bitmap`, address);
    }
    if (tag === 0) {
      ticks[slot] = { index: tickIndex(start, slot, tickSpacing), initialized: false, liquidityNet: 0n, liquidityGross: 0n };
      at += 1;
      continue;
    }
    if (at + WHIRLPOOL_TICK_BYTES > data.length) {
      throw invalidAccount(Dex.Whirlpool, NAME, `tick ${slot} lies past the account end`, address);
    }
    ticks[slot] = {
      index: tickIndex(start, slot, tickSpacing),
      initialized: true,
      liquidityNet: readI128(data, at + 1),
      liquidityGross: readU128(data, at + 17),
    };
    at += WHIRLPOOL_TICK_BYTES;
  }
  return { dex: Dex.Whirlpool, pool: readPubkey(data, DYN_WHIRLPOOL), startTickIndex: start, ticks };
}

/** Ticks to encode: at most 88, slot order; missing slots are uninitialized. */
export interface WhirlpoolTickArrayFields {
  pool: string;
  startTickIndex: number;
  ticks: readonly Pick<Tick, 'initialized' | 'liquidityNet' | 'liquidityGross'>[];
}

function checkTickCount(fields: WhirlpoolTickArrayFields): void {
  if (fields.ticks.length > WHIRLPOOL_TICK_ARRAY_SIZE) {
    throw invalidAccount(Dex.Whirlpool, NAME, `${fields.ticks.length} ticks given, at most 88 fit`);
  }
}

/** Writes a fixed `TickArray` account (9988 bytes). Fee and reward growths are written as zero. */
export function encodeWhirlpoolTickArray(fields: WhirlpoolTickArrayFields, out?: Uint8Array): Uint8Array {
  checkTickCount(fields);
  const data = out ?? new Uint8Array(WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE);
  expectSize(data, WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE, Dex.Whirlpool, NAME);
  if (out !== undefined) data.fill(0);
  data.set(WHIRLPOOL_FIXED_TICK_ARRAY_DISCRIMINATOR, 0);
  writeI32(data, FIXED_START, fields.startTickIndex);
  for (let slot = 0; slot < fields.ticks.length; slot++) {
    const t = fields.ticks[slot]!;
    const at = FIXED_TICKS + slot * WHIRLPOOL_TICK_BYTES;
    writeU8(data, at, t.initialized ? 1 : 0);
    writeI128(data, at + 1, t.liquidityNet);
    writeU128(data, at + 17, t.liquidityGross);
  }
  writePubkey(data, FIXED_WHIRLPOOL, fields.pool);
  return data;
}

/**
 * Writes a `DynamicTickArray` account, sized to its content (148 bytes plus 112 per initialized
 * tick), as the program lays it out.
 */
export function encodeWhirlpoolDynamicTickArray(fields: WhirlpoolTickArrayFields): Uint8Array {
  checkTickCount(fields);
  let initialized = 0;
  for (const t of fields.ticks) if (t.initialized) initialized++;
  const data = new Uint8Array(WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE + initialized * (WHIRLPOOL_TICK_BYTES - 1));
  data.set(WHIRLPOOL_DYNAMIC_TICK_ARRAY_DISCRIMINATOR, 0);
  writeI32(data, DYN_START, fields.startTickIndex);
  writePubkey(data, DYN_WHIRLPOOL, fields.pool);
  let bitmap = 0n;
  let at = DYN_TICKS;
  for (let slot = 0; slot < WHIRLPOOL_TICK_ARRAY_SIZE; slot++) {
    const t = fields.ticks[slot];
    if (t === undefined || !t.initialized) {
      at += 1;
      continue;
    }
    bitmap |= 1n << BigInt(slot);
    writeU8(data, at, 1);
    writeI128(data, at + 1, t.liquidityNet);
    writeU128(data, at + 17, t.liquidityGross);
    at += WHIRLPOOL_TICK_BYTES;
  }
  writeU128(data, DYN_BITMAP, bitmap);
  return data;
}
