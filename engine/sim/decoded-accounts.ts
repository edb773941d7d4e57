import {
  Dex,
  decodeAmmInfo,
  decodeBinArray,
  decodeClmmAmmConfig,
  decodeClmmPool,
  decodeClmmTickArray,
  decodeLbPair,
  decodeWhirlpool,
  decodeWhirlpoolTickArray,
  decodeMint,
  type ClmmAmmConfig,
  type DecodedMint,
  type DecodedPool,
  type DlmmBinArray,
  type TickArray,
} from '../dex/index.js';

/**
 * The engine's decoders over account bytes, memoized by the bytes themselves. Account records are
 * immutable (a write stores new bytes), so a decoded value stays valid for as long as its bytes
 * are the account's: tick arrays, which swaps never change, are decoded once; a pool is decoded
 * again only after a swap wrote it. Throws the decoders' TpErrors.
 */

const pools = new WeakMap<Uint8Array, DecodedPool>();
const tickArrays = new WeakMap<Uint8Array, TickArray>();
const binArrays = new WeakMap<Uint8Array, DlmmBinArray>();
const ammConfigs = new WeakMap<Uint8Array, ClmmAmmConfig>();
const mints = new WeakMap<Uint8Array, DecodedMint>();

export function decodePoolOf(dex: Dex, data: Uint8Array, address: string): DecodedPool {
  let pool = pools.get(data);
  if (pool === undefined || pool.address !== address) {
    switch (dex) {
      case Dex.Amm:
        pool = decodeAmmInfo(data, address);
        break;
      case Dex.Whirlpool:
        pool = decodeWhirlpool(data, address);
        break;
      case Dex.Clmm:
        pool = decodeClmmPool(data, address);
        break;
      case Dex.Dlmm:
        pool = decodeLbPair(data, address);
        break;
    }
    pools.set(data, pool);
  }
  return pool;
}

export function decodeTickArrayOf(dex: typeof Dex.Whirlpool | typeof Dex.Clmm, data: Uint8Array, address: string, tickSpacing: number): TickArray {
  let array = tickArrays.get(data);
  if (array === undefined) {
    array = dex === Dex.Whirlpool ? decodeWhirlpoolTickArray(data, address, tickSpacing) : decodeClmmTickArray(data, address, tickSpacing);
    tickArrays.set(data, array);
  }
  return array;
}

export function decodeBinArrayOf(data: Uint8Array, address: string): DlmmBinArray {
  let array = binArrays.get(data);
  if (array === undefined) {
    array = decodeBinArray(data, address);
    binArrays.set(data, array);
  }
  return array;
}

export function decodeAmmConfigOf(data: Uint8Array, address: string): ClmmAmmConfig {
  let config = ammConfigs.get(data);
  if (config === undefined) {
    config = decodeClmmAmmConfig(data, address);
    ammConfigs.set(data, config);
  }
  return config;
}

/** A mint of either token program owned by `owner` (decodeMint; throws its TpErrors). */
export function decodeMintOf(owner: string, data: Uint8Array): DecodedMint {
  let mint = mints.get(data);
  if (mint === undefined || mint.programId !== owner) {
    mint = decodeMint(owner, data);
    mints.set(data, mint);
  }
  return mint;
}

/**
 * Records what `data` decodes to, when the writer already knows it (a swap that wrote a few
 * fields of an account it had decoded). The swap-program tests check such values against a fresh
 * decode of the bytes.
 */
export function rememberPool(data: Uint8Array, pool: DecodedPool): void {
  pools.set(data, pool);
}

export function rememberBinArray(data: Uint8Array, array: DlmmBinArray): void {
  binArrays.set(data, array);
}
