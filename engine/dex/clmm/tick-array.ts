/**
 * Raydium CLMM `TickArrayState`: zero-copy packed, 10240 bytes, discriminator c09b55cd31f9812a,
 * 60 ticks from `start_tick_index`. Layout checked against the Raydium SDK v2 `TickArrayLayout` /
 * `TickLayout` (src/raydium/clmm/layout.ts, span 10240 / 168) by the tests:
 *
 *   8 pool_id; 40 start_tick_index i32; 44 ticks[60] x 168;
 *   10124 initialized_tick_count u8; 10125 recent_epoch u64; 10133 padding [u8; 107].
 *   Tick: +0 tick i32, +4 liquidity_net i128, +20 liquidity_gross u128,
 *         +36 fee_growth_outside_0_x64, +52 fee_growth_outside_1_x64, +68 reward_growths_outside[3],
 *         +116 order_phase u64, +124 orders_amount u64, +132 part_filled_orders_remaining u64,
 *         +140 unfilled_ratio_x64 u128, +156 padding [u32; 3].
 *
 * A tick counts as initialized when it has liquidity or unfilled limit orders (SDK
 * TickUtil.isInitialized); the orders are reported in `limitOrderAmount`. Older builds had
 * padding where the order fields are, which reads as no orders.
 *
 * Each tick stores its own index, but only once initialized: `Tick.index` is start + slot *
 * spacing when the caller passes the tick spacing, else the stored index of initialized ticks and
 * NaN for the others.
 */
import {
  expectDiscriminator,
  expectSize,
  hexBytes,
  invalidAccount,
  readI128,
  readI32,
  readPubkey,
  readU128,
  readU64,
  writeI128,
  writeI32,
  writePubkey,
  writeU128,
  writeU64,
  writeU8,
} from '../account-bytes.js';
import { Dex, type Tick, type TickArray } from '../types.js';

export const CLMM_TICK_ARRAY_SIZE = 60;
export const CLMM_TICK_BYTES = 168;
export const CLMM_TICK_ARRAY_ACCOUNT_SIZE = 10240;
export const CLMM_TICK_ARRAY_DISCRIMINATOR = hexBytes('c09b55cd31f9812a');

const POOL = 8;
const START = 40;
const TICKS = 44;
const INITIALIZED_COUNT = TICKS + CLMM_TICK_ARRAY_SIZE * CLMM_TICK_BYTES;

const T_INDEX = 0;
const T_NET = 4;
const T_GROSS = 20;
const T_ORDERS_AMOUNT = 124;
const T_PART_FILLED_REMAINING = 132;

const NAME = 'Raydium CLMM tick array';

export function decodeClmmTickArray(data: Uint8Array, address?: string, tickSpacing?: number): TickArray {
  expectSize(data, CLMM_TICK_ARRAY_ACCOUNT_SIZE, Dex.Clmm, NAME, address);
  expectDiscriminator(data, CLMM_TICK_ARRAY_DISCRIMINATOR, Dex.Clmm, NAME, address);
  const start = readI32(data, START);
  const ticks: Tick[] = new Array<Tick>(CLMM_TICK_ARRAY_SIZE);
  for (let slot = 0; slot < CLMM_TICK_ARRAY_SIZE; slot++) {
    const at = TICKS + slot * CLMM_TICK_BYTES;
    const gross = readU128(data, at + T_GROSS);
    const orders = readU64(data, at + T_ORDERS_AMOUNT) + readU64(data, at + T_PART_FILLED_REMAINING);
    const initialized = gross !== 0n || orders !== 0n;
    const expected = tickSpacing === undefined ? undefined : start + slot * tickSpacing;
    const stored = readI32(data, at + T_INDEX);
    if (initialized && expected !== undefined && stored !== expected) {
      throw invalidAccount(Dex.Clmm, NAME, `tick in slot ${slot} says ${stored}, expected ${expected}`, address);
    }
    const tick: Tick = {
      index: expected ?? (initialized ? stored : NaN),
      initialized,
      liquidityNet: initialized ? readI128(data, at + T_NET) : 0n,
      liquidityGross: gross,
    };
    if (orders !== 0n) tick.limitOrderAmount = orders;
    ticks[slot] = tick;
  }
  return { dex: Dex.Clmm, pool: readPubkey(data, POOL), startTickIndex: start, ticks };
}

/** Ticks to encode: at most 60, slot order; missing slots are uninitialized. */
export interface ClmmTickArrayFields {
  pool: string;
  startTickIndex: number;
  tickSpacing: number;
  ticks: readonly Pick<Tick, 'initialized' | 'liquidityNet' | 'liquidityGross' | 'limitOrderAmount'>[];
}

/**
 * Writes a TickArrayState account. Each initialized tick stores its index; limit orders are
 * written as `orders_amount`. Fee and reward growths are zero.
 */
export function encodeClmmTickArray(fields: ClmmTickArrayFields, out?: Uint8Array): Uint8Array {
  if (fields.ticks.length > CLMM_TICK_ARRAY_SIZE) {
    throw invalidAccount(Dex.Clmm, NAME, `${fields.ticks.length} ticks given, at most 60 fit`);
  }
  const data = out ?? new Uint8Array(CLMM_TICK_ARRAY_ACCOUNT_SIZE);
  expectSize(data, CLMM_TICK_ARRAY_ACCOUNT_SIZE, Dex.Clmm, NAME);
  if (out !== undefined) data.fill(0);
  data.set(CLMM_TICK_ARRAY_DISCRIMINATOR, 0);
  writePubkey(data, POOL, fields.pool);
  writeI32(data, START, fields.startTickIndex);
  let initialized = 0;
  for (let slot = 0; slot < fields.ticks.length; slot++) {
    const t = fields.ticks[slot]!;
    if (!t.initialized) continue;
    initialized++;
    const at = TICKS + slot * CLMM_TICK_BYTES;
    writeI32(data, at + T_INDEX, fields.startTickIndex + slot * fields.tickSpacing);
    writeI128(data, at + T_NET, t.liquidityNet);
    writeU128(data, at + T_GROSS, t.liquidityGross);
    if (t.limitOrderAmount !== undefined) writeU64(data, at + T_ORDERS_AMOUNT, t.limitOrderAmount);
  }
  writeU8(data, INITIALIZED_COUNT, initialized);
  return data;
}
