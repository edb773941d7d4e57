import { base58, createProgramAddress, findProgramAddress } from '../../chain/index.js';
import { readPubkey, readU64 } from '../account-bytes.js';
import { AMM_ACCOUNT_SIZE, AMM_MINT_A_OFFSET, AMM_MINT_B_OFFSET } from './amm-pool.js';

/**
 * Raydium AMM v4 `AmmInfo` fields beyond spec 02's simplified layout (amm-pool.ts), at their real
 * offsets (raydium-amm program/src/state.rs, `repr(C, packed)`, 752 bytes): what the swap
 * instruction and the program need besides the reserves. The simplified layout keeps its reserves
 * at 64/72 (AmmInfo's min_size and vol_max_cut_ratio, which swaps do not read); these offsets do
 * not overlap them, so one account can carry both (the simulator's pools do).
 *
 *   8    nonce                u64   bump of the authority PDA ["amm authority", nonce]
 *   176  swap_fee_numerator   u64   (default 25)
 *   184  swap_fee_denominator u64   (default 10000)
 *   192  need_take_pnl_coin   u64   subtracted from the coin vault's amount by the swap
 *   200  need_take_pnl_pc     u64
 *   336  coin_vault           pubkey (token A vault)
 *   368  pc_vault             pubkey (token B vault)
 *   400 / 432  coin / pc mint  (shared with the simplified layout)
 *   496  open_orders, 528 market, 560 market_program, 592 target_orders
 */

export const AmmInfoOffset = {
  nonce: 8,
  swapFeeNumerator: 176,
  swapFeeDenominator: 184,
  needTakePnlCoin: 192,
  needTakePnlPc: 200,
  coinVault: 336,
  pcVault: 368,
  coinMint: AMM_MINT_A_OFFSET,
  pcMint: AMM_MINT_B_OFFSET,
  openOrders: 496,
  market: 528,
  marketProgram: 560,
  targetOrders: 592,
} as const;

/** `AUTHORITY_AMM` seed of the program's vault authority. */
export const AMM_AUTHORITY_SEED = 'amm authority';

/** The AMM v4 authority of `nonce` (create_program_address), undefined when on the curve. */
export function ammV4Authority(programId: string, nonce: number): string | undefined {
  const key = createProgramAddress([AMM_AUTHORITY_SEED, Uint8Array.of(nonce)], programId);
  return key === undefined ? undefined : base58.encode(key);
}

/** The canonical authority and its nonce (find_program_address), as the program's pools use. */
export function ammV4CanonicalAuthority(programId: string): { address: string; nonce: number } {
  const { address, bump } = findProgramAddress([AMM_AUTHORITY_SEED], programId);
  return { address, nonce: bump };
}

/** What an AMM v4 swap instruction names, read from a pool account. */
export interface AmmV4Keys {
  programId: string;
  pool: string;
  authority: string;
  nonce: number;
  /** Token A (coin) and B (pc) vaults and mints. */
  coinVault: string;
  pcVault: string;
  coinMint: string;
  pcMint: string;
  openOrders: string;
  targetOrders: string;
  market: string;
  marketProgram: string;
  swapFeeNumerator: bigint;
  swapFeeDenominator: bigint;
}

/**
 * The swap keys of AMM v4 pool `pool` from its account bytes. Throws RangeError when the account is
 * not 752 bytes or its nonce gives no valid authority.
 */
export function ammV4Keys(programId: string, pool: string, data: Uint8Array): AmmV4Keys {
  if (data.length !== AMM_ACCOUNT_SIZE) throw new RangeError(`AmmInfo is ${AMM_ACCOUNT_SIZE} bytes, got ${data.length}`);
  const nonce = Number(readU64(data, AmmInfoOffset.nonce) & 0xffn);
  const authority = ammV4Authority(programId, nonce);
  if (authority === undefined) throw new RangeError(`AMM ${pool}: nonce ${nonce} gives no authority`);
  return {
    programId,
    pool,
    authority,
    nonce,
    coinVault: readPubkey(data, AmmInfoOffset.coinVault),
    pcVault: readPubkey(data, AmmInfoOffset.pcVault),
    coinMint: readPubkey(data, AmmInfoOffset.coinMint),
    pcMint: readPubkey(data, AmmInfoOffset.pcMint),
    openOrders: readPubkey(data, AmmInfoOffset.openOrders),
    targetOrders: readPubkey(data, AmmInfoOffset.targetOrders),
    market: readPubkey(data, AmmInfoOffset.market),
    marketProgram: readPubkey(data, AmmInfoOffset.marketProgram),
    swapFeeNumerator: readU64(data, AmmInfoOffset.swapFeeNumerator),
    swapFeeDenominator: readU64(data, AmmInfoOffset.swapFeeDenominator),
  };
}

/** The fields a swap needs written into an AmmInfo account (the simulator's pools). */
export interface AmmV4SwapFields {
  nonce: number;
  coinVault: string;
  pcVault: string;
  swapFeeNumerator: bigint;
  swapFeeDenominator: bigint;
  openOrders?: string;
  targetOrders?: string;
  market?: string;
  marketProgram?: string;
}

export function writeAmmV4SwapFields(data: Uint8Array, fields: AmmV4SwapFields): void {
  if (data.length !== AMM_ACCOUNT_SIZE) throw new RangeError(`AmmInfo is ${AMM_ACCOUNT_SIZE} bytes, got ${data.length}`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  view.setBigUint64(AmmInfoOffset.nonce, BigInt(fields.nonce), true);
  view.setBigUint64(AmmInfoOffset.swapFeeNumerator, fields.swapFeeNumerator, true);
  view.setBigUint64(AmmInfoOffset.swapFeeDenominator, fields.swapFeeDenominator, true);
  data.set(base58.decodePubkey(fields.coinVault), AmmInfoOffset.coinVault);
  data.set(base58.decodePubkey(fields.pcVault), AmmInfoOffset.pcVault);
  for (const key of ['openOrders', 'targetOrders', 'market', 'marketProgram'] as const) {
    const value = fields[key];
    if (value !== undefined) data.set(base58.decodePubkey(value), AmmInfoOffset[key]);
  }
}
