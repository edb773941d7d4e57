/**
 * Default mainnet program ids per DEX (docs/wire-formats.md §3). Every id is overridable: the registry takes a
 * `Record<Dex, string>` (configuration `pools.dexProgram`), and `programIdsWith` merges overrides.
 */
import { Dex } from './types.js';

/** Raydium AMM v4. */
export const RAYDIUM_AMM_V4_PROGRAM_ID = '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8';
/** Raydium concentrated liquidity (CLMM). */
export const RAYDIUM_CLMM_PROGRAM_ID = 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK';
/** Meteora DLMM. */
export const METEORA_DLMM_PROGRAM_ID = 'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo';
/** Orca Whirlpool. */
export const ORCA_WHIRLPOOL_PROGRAM_ID = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';

export const DEFAULT_PROGRAM_IDS: Readonly<Record<Dex, string>> = Object.freeze({
  [Dex.Amm]: RAYDIUM_AMM_V4_PROGRAM_ID,
  [Dex.Clmm]: RAYDIUM_CLMM_PROGRAM_ID,
  [Dex.Dlmm]: METEORA_DLMM_PROGRAM_ID,
  [Dex.Whirlpool]: ORCA_WHIRLPOOL_PROGRAM_ID,
});

/** The default ids with `overrides` applied (undefined entries keep the default). */
export function programIdsWith(overrides: Partial<Record<Dex, string>> = {}): Record<Dex, string> {
  const ids = { ...DEFAULT_PROGRAM_IDS };
  for (const dex of Object.keys(overrides) as Dex[]) {
    const id = overrides[dex];
    if (id !== undefined) ids[dex] = id;
  }
  return ids;
}
