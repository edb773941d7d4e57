/**
 * One-byte codes for the spec's DEX identifiers, stored in the cache's `dex` Uint8Array.
 * 0 is never a valid DEX: it marks a free slot.
 */
import { Dex } from '../dex/index.js';

export const DexCode = {
  None: 0,
  Amm: 1,
  Clmm: 2,
  Dlmm: 3,
  Whirlpool: 4,
} as const;
export type DexCode = (typeof DexCode)[keyof typeof DexCode];

/** The code of a DEX identifier; DexCode.None for anything else. */
export function dexCodeOf(dex: string): DexCode {
  switch (dex) {
    case Dex.Amm:
      return DexCode.Amm;
    case Dex.Clmm:
      return DexCode.Clmm;
    case Dex.Dlmm:
      return DexCode.Dlmm;
    case Dex.Whirlpool:
      return DexCode.Whirlpool;
    default:
      return DexCode.None;
  }
}

const DEX_BY_CODE: readonly (Dex | undefined)[] = [undefined, Dex.Amm, Dex.Clmm, Dex.Dlmm, Dex.Whirlpool];

/** The DEX identifier of a code; undefined for DexCode.None or an unknown code. */
export function dexOf(code: number): Dex | undefined {
  return DEX_BY_CODE[code];
}
