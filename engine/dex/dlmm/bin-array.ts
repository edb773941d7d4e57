/**
 * Meteora DLMM `BinArray` account: 10136 bytes, Anchor discriminator `5c8e5cdc059446b5`.
 *
 *   8   index i64     16 version u8     24 lb_pair pubkey     56 bins [70 × 144]
 *
 * Bin (IDL 0.12): +0 amount_x u64, +8 amount_y u64, +16 price u128 (Q64.64, Y per X),
 * +32 liquidity_supply u128, +112 open_order_amount u64, +128 processed_order_remaining_amount u64,
 * +140 limit_order_ask_side u8. The other bytes (fees and rewards per token, order bookkeeping) do
 * not change a quote and are not decoded; the encoder writes them as zeros.
 *
 * bins[i] has id `index * 70 + i`.
 */
import {
  expectDiscriminator,
  expectSize,
  invalidAccount,
  readI64,
  readPubkey,
  readU8,
  writeI64,
  writePubkey,
  writeU128,
  writeU64,
  writeU8,
} from '../account-bytes.js';
import { Dex, type Bin, type BinArray } from '../types.js';
import { BINS_PER_ARRAY, MAX_BIN_ID, MIN_BIN_ID } from './constants.js';

export const DLMM_BIN_ARRAY_SIZE = 10_136;
/** sha256("account:BinArray")[0..8]. */
export const DLMM_BIN_ARRAY_DISCRIMINATOR = new Uint8Array([0x5c, 0x8e, 0x5c, 0xdc, 0x05, 0x94, 0x46, 0xb5]);
export const DLMM_BIN_SIZE = 144;

const ACCOUNT = 'BinArray';
const INDEX = 8;
const VERSION = 16;
const LB_PAIR = 24;
const BINS = 56;
// Bin fields
const AMOUNT_X = 0;
const AMOUNT_Y = 8;
const PRICE = 16;
const LIQUIDITY_SUPPLY = 32;
const OPEN_ORDER_AMOUNT = 112;
const PROCESSED_ORDER_REMAINING_AMOUNT = 128;
const LIMIT_ORDER_ASK_SIDE = 140;

/** The first and last array indexes that hold a bin within the program's bin id bounds. */
export const MIN_BIN_ARRAY_INDEX = binArrayIndexOf(MIN_BIN_ID);
export const MAX_BIN_ARRAY_INDEX = binArrayIndexOf(MAX_BIN_ID);

/** A bin with the limit-order amounts a swap also fills (pairs that support limit orders only). */
export interface DlmmBin extends Bin {
  /** Open (unfilled) limit orders resting in the bin, in the token they sell. */
  openOrderAmount: bigint;
  /** What remains of partially filled limit orders. */
  processedOrderRemainingAmount: bigint;
  /** true: the orders sell X (filled by Y→X swaps); false: they buy X (filled by X→Y swaps). */
  limitOrderAskSide: boolean;
}

export interface DlmmBinArray extends BinArray {
  address?: string;
  version: number;
  bins: readonly DlmmBin[];
}

/** The index of the bin array holding `binId`: floor(binId / 70), negative ids included. */
export function binArrayIndexOf(binId: number): number {
  return Math.floor(binId / BINS_PER_ARRAY);
}

/** The id of the first bin of array `index`. */
export function binArrayLowerBinId(index: number): number {
  return index * BINS_PER_ARRAY;
}

/** The id of the last bin of array `index`. */
export function binArrayUpperBinId(index: number): number {
  return index * BINS_PER_ARRAY + BINS_PER_ARRAY - 1;
}

/**
 * Decodes a BinArray account. Throws TpError AccountSize (not 10136 bytes), AccountDiscriminator
 * (not a BinArray) or AccountInvalid (an index with no bin inside the program's bin id range).
 */
export function decodeBinArray(data: Uint8Array, address?: string): DlmmBinArray {
  expectSize(data, DLMM_BIN_ARRAY_SIZE, Dex.Dlmm, ACCOUNT, address);
  expectDiscriminator(data, DLMM_BIN_ARRAY_DISCRIMINATOR, Dex.Dlmm, ACCOUNT, address);
  const index = readI64(data, INDEX);
  if (index < BigInt(MIN_BIN_ARRAY_INDEX) || index > BigInt(MAX_BIN_ARRAY_INDEX)) {
    throw invalidAccount(
      Dex.Dlmm,
      ACCOUNT,
      `index ${index} outside ${MIN_BIN_ARRAY_INDEX}..${MAX_BIN_ARRAY_INDEX}`,
      address,
    );
  }
  const lowerBinId = binArrayLowerBinId(Number(index));
  // 490 wide reads per account: DataView's native 64-bit reads allocate one BigInt each.
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const bins = new Array<DlmmBin>(BINS_PER_ARRAY);
  for (let i = 0, at = BINS; i < BINS_PER_ARRAY; i++, at += DLMM_BIN_SIZE) {
    bins[i] = {
      id: lowerBinId + i,
      amountX: view.getBigUint64(at + AMOUNT_X, true),
      amountY: view.getBigUint64(at + AMOUNT_Y, true),
      price: readU128View(view, at + PRICE),
      liquiditySupply: readU128View(view, at + LIQUIDITY_SUPPLY),
      openOrderAmount: view.getBigUint64(at + OPEN_ORDER_AMOUNT, true),
      processedOrderRemainingAmount: view.getBigUint64(at + PROCESSED_ORDER_REMAINING_AMOUNT, true),
      limitOrderAskSide: readU8(data, at + LIMIT_ORDER_ASK_SIDE) !== 0,
    };
  }
  const array: DlmmBinArray = { pool: readPubkey(data, LB_PAIR), index, version: readU8(data, VERSION), bins };
  if (address !== undefined) array.address = address;
  return array;
}

function readU128View(view: DataView, offset: number): bigint {
  const hi = view.getBigUint64(offset + 8, true);
  const lo = view.getBigUint64(offset, true);
  return hi === 0n ? lo : (hi << 64n) | lo;
}

/**
 * Writes a BinArray account (10136 bytes) for the simulator. `bins` must hold 70 bins in id order
 * (bins[i].id = index * 70 + i); missing limit-order fields are written as zeros.
 */
export function encodeBinArray(array: BinArray | DlmmBinArray): Uint8Array {
  if (array.bins.length !== BINS_PER_ARRAY) {
    throw invalidAccount(Dex.Dlmm, ACCOUNT, `needs ${BINS_PER_ARRAY} bins, got ${array.bins.length}`);
  }
  const data = new Uint8Array(DLMM_BIN_ARRAY_SIZE);
  data.set(DLMM_BIN_ARRAY_DISCRIMINATOR, 0);
  writeI64(data, INDEX, array.index);
  writeU8(data, VERSION, (array as Partial<DlmmBinArray>).version ?? 0);
  writePubkey(data, LB_PAIR, array.pool);
  const lowerBinId = binArrayLowerBinId(Number(array.index));
  for (let i = 0, at = BINS; i < BINS_PER_ARRAY; i++, at += DLMM_BIN_SIZE) {
    const bin = array.bins[i]! as Bin & Partial<DlmmBin>;
    if (bin.id !== lowerBinId + i) {
      throw invalidAccount(Dex.Dlmm, ACCOUNT, `bins[${i}] has id ${bin.id}, expected ${lowerBinId + i}`);
    }
    writeU64(data, at + AMOUNT_X, bin.amountX);
    writeU64(data, at + AMOUNT_Y, bin.amountY);
    writeU128(data, at + PRICE, bin.price);
    writeU128(data, at + LIQUIDITY_SUPPLY, bin.liquiditySupply);
    writeU64(data, at + OPEN_ORDER_AMOUNT, bin.openOrderAmount ?? 0n);
    writeU64(data, at + PROCESSED_ORDER_REMAINING_AMOUNT, bin.processedOrderRemainingAmount ?? 0n);
    writeU8(data, at + LIMIT_ORDER_ASK_SIDE, bin.limitOrderAskSide === true ? 1 : 0);
  }
  return data;
}
