import { describe, expect, it } from 'vitest';

import { schemaViolationsOf } from './message-schema.js';

/** The u64 and u128 decimal strings of every message schema admit exactly their range. */
const event = (slot: string, liquidity = '0'): object => ({
  version: 1, id: 'x', type: 'pool_update', protocol: 'dexa_amm', poolAddress: '11111111111111111111111111111111', tokenA: '11111111111111111111111111111111', tokenB: '11111111111111111111111111111111',
  timestamp: 1, slot, data: { liquidity },
});

describe('u64 and u128 fields hold no more than their type', () => {
  const U64_MAX = (1n << 64n) - 1n;
  const U128_MAX = (1n << 128n) - 1n;

  it('accepts every boundary up to the maximum', () => {
    const u64s = [0n, 1n, 10n ** 19n - 1n, 10n ** 19n, U64_MAX - 1n, U64_MAX, 17_999_999_999_999_999_999n, 18_446_744_073_709_551_609n];
    for (const v of u64s) expect(schemaViolationsOf('market-event.schema.json', event(v.toString())), v.toString()).toEqual([]);
    for (const v of [10n ** 38n - 1n, 10n ** 38n, U128_MAX - 1n, U128_MAX]) expect(schemaViolationsOf('market-event.schema.json', event('1', v.toString())), v.toString()).toEqual([]);
  });

  it('refuses one past the maximum, every 20-digit value above it, a sign and leading zeros', () => {
    const over = [U64_MAX + 1n, U64_MAX + 10n, 18_446_744_073_709_551_700n, 18_500_000_000_000_000_000n, 19_000_000_000_000_000_000n, 10n ** 20n - 1n];
    for (const v of over) expect(schemaViolationsOf('market-event.schema.json', event(v.toString())).join(), v.toString()).toContain('/slot');
    for (const s of ['-1', '01', '+1', '1.0', '']) expect(schemaViolationsOf('market-event.schema.json', event(s)).join(), s).toContain('/slot');
    for (const v of [U128_MAX + 1n, 10n ** 39n - 1n]) expect(schemaViolationsOf('market-event.schema.json', event('1', v.toString())).join(), v.toString()).toContain('/data/liquidity');
  });

  it('refuses at random any value above the maximum and accepts any below', () => {
    let x = 0x9e3779b97f4a7c15n;
    for (let i = 0; i < 2000; i++) {
      x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
      const v = i % 2 === 0 ? x : U64_MAX + 1n + (x % (10n ** 20n - U64_MAX - 1n));
      expect(schemaViolationsOf('market-event.schema.json', event(v.toString())).length === 0, v.toString()).toBe(v <= U64_MAX);
    }
  });
});
