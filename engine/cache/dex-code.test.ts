import { describe, expect, it } from 'vitest';

import { DEX_KINDS } from '../dex/types.js';
import { DexCode, dexCodeOf, dexOf } from './dex-code.js';

describe('dex codes', () => {
  it('round-trips every DEX identifier through a non-zero byte', () => {
    for (const dex of DEX_KINDS) {
      const code = dexCodeOf(dex);
      expect(code).not.toBe(DexCode.None);
      expect(dexOf(code)).toBe(dex);
    }
  });

  it('maps anything else to None', () => {
    expect(dexCodeOf('raydium')).toBe(DexCode.None);
    expect(dexOf(DexCode.None)).toBeUndefined();
  });
});
