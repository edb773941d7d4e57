import { base58 } from '../chain/index.js';

/**
 * Where a dexa_amm pool account keeps its vault addresses. The simplified layout of spec 02 has
 * none (the reserves live in the pool account), so the simulator writes them where Raydium AMM v4
 * `AmmInfo` has them (docs/wire-formats.md §4.4): coin_vault (token A) at 336, pc_vault (token B) at 368.
 * The engine's decoder ignores these bytes; the swap program checks the vaults against them.
 */
export const AMM_VAULT_A_OFFSET = 336;
export const AMM_VAULT_B_OFFSET = 368;

export function writeAmmVaults(data: Uint8Array, vaultA: string, vaultB: string): void {
  data.set(base58.decodePubkey(vaultA), AMM_VAULT_A_OFFSET);
  data.set(base58.decodePubkey(vaultB), AMM_VAULT_B_OFFSET);
}

/** The vault keys as views into the pool account. */
export function ammVaultBytes(data: Uint8Array): [Uint8Array, Uint8Array] {
  return [data.subarray(AMM_VAULT_A_OFFSET, AMM_VAULT_A_OFFSET + 32), data.subarray(AMM_VAULT_B_OFFSET, AMM_VAULT_B_OFFSET + 32)];
}
