/**
 * Meteora DLMM (`lb_clmm`, IDL 0.12) protocol constants and enum values (leaf module).
 *
 * Values come from the program IDL's `constants` and the Meteora SDK; names follow the program.
 */

/** Bins per BinArray account (`MAX_BIN_PER_ARRAY`). */
export const BINS_PER_ARRAY = 70;
/** Global bin id bounds: `advance_active_bin` refuses to move past them (1.0001^443636 ≈ 2^64). */
export const MIN_BIN_ID = -443_636;
export const MAX_BIN_ID = 443_636;
/** The LbPair's internal bin array bitmap covers array indexes [-512, 511] (`BIN_ARRAY_BITMAP_SIZE`). */
export const BIN_ARRAY_BITMAP_SIZE = 512;
export const BIN_ARRAY_BITMAP_WORDS = 16;

/** Q64.64 fixed point. */
export const SCALE_OFFSET = 64n;
export const ONE_Q64 = 1n << 64n;
export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

export const BASIS_POINT_MAX = 10_000;
/** Fee rates are in units of 1e-9 (`FEE_DENOMINATOR`). */
export const FEE_PRECISION = 1_000_000_000n;
/** Total fee rate cap: 10% (`MAX_FEE_RATE`). */
export const MAX_FEE_RATE = 100_000_000n;
/** Share of a limit order's fee that goes to the order placer, in basis points. */
export const LIMIT_ORDER_FEE_SHARE = 5_000n;

/** LbPair `status`. */
export const PairStatus = { Enabled: 0, Disabled: 1 } as const;
export type PairStatus = (typeof PairStatus)[keyof typeof PairStatus];

/** LbPair `pair_type`. Permissioned and customizable pairs can have an activation point. */
export const PairType = {
  Permissionless: 0,
  Permissioned: 1,
  CustomizablePermissionless: 2,
  PermissionlessV2: 3,
} as const;
export type PairType = (typeof PairType)[keyof typeof PairType];

/** LbPair `activation_type`: what `activation_point` counts. */
export const ActivationType = { Slot: 0, Timestamp: 1 } as const;
export type ActivationType = (typeof ActivationType)[keyof typeof ActivationType];

/**
 * StaticParameters `function_type`. Limit orders are filled in LimitOrder pairs, and in
 * Undetermined pairs that have no farming rewards configured.
 */
export const FunctionType = { Undetermined: 0, LiquidityMining: 1, LimitOrder: 2 } as const;
export type FunctionType = (typeof FunctionType)[keyof typeof FunctionType];

/** StaticParameters `collect_fee_mode`: InputOnly takes the fee from the input token; OnlyY always in Y. */
export const CollectFeeMode = { InputOnly: 0, OnlyY: 1 } as const;
export type CollectFeeMode = (typeof CollectFeeMode)[keyof typeof CollectFeeMode];

/** base58 of 32 zero bytes: an unset pubkey field. */
export const DEFAULT_PUBKEY = '11111111111111111111111111111111';
