/**
 * engine/dex: pool account decoders and encoders and exact swap math per protocol. What the rest
 * of the engine may use; everything else in the folder is internal.
 *
 * - `DecoderRegistry` turns (owner, bytes) into a decoded pool, tick array, AmmConfig or bin array.
 * - `quoteSwap(pool, request, context)` quotes on any decoded pool; `directionFor` maps mints to a
 *   direction.
 * - The encoders write the same accounts (the simulator serves them).
 * - Token-2022 (token-2022/): `decodeMint` reads a mint of either token program with its
 *   TransferFeeConfig; `epochFee` / `calculateFee` / `calculatePreFeeAmount` are the program's fee
 *   math; `quoteSwap(pool, req, ctx, transferFees)` quotes with the fees taken on both transfers.
 */
export * from './types.js';
export {
  DEFAULT_PROGRAM_IDS,
  METEORA_DLMM_PROGRAM_ID,
  ORCA_WHIRLPOOL_PROGRAM_ID,
  RAYDIUM_AMM_V4_PROGRAM_ID,
  RAYDIUM_CLMM_PROGRAM_ID,
  programIdsWith,
} from './program-ids.js';
export {
  AMM_LAYOUTS,
  AmmLayout,
  DecoderRegistry,
  UNKNOWN_DEX,
  createDecoderRegistry,
  type DecodedAccount,
  type DecodedAccountKind,
  type DecoderRegistryOptions,
  type DecoderStats,
  type DexLabel,
} from './registry.js';
export { directionFor, quoteSwap } from './quote.js';
export { priceImpact } from './price-impact.js';
export { boundedInput, boundedOutput, rateBound } from './rate-bound.js';
/** The size check of the decoders (TpError AccountSize), for builders that check what they encoded. */
export { expectSize } from './account-bytes.js';

// dexa_amm
export {
  AMM_ACCOUNT_SIZE,
  AMM_FEE_DENOMINATOR,
  AMM_FEE_NUMERATOR,
  AmmStatus,
  ammSwapEnabled,
  decodeSimplifiedAmmPool,
  encodeSimplifiedAmmPool,
  type SimplifiedAmmPoolFields,
} from './amm/amm-pool.js';
export { quoteConstantProduct } from './amm/constant-product.js';

// dexc_whirlpool
export {
  WHIRLPOOL_ACCOUNT_SIZE,
  WHIRLPOOL_DISCRIMINATOR,
  decodeWhirlpool,
  encodeWhirlpool,
  type WhirlpoolFields,
} from './whirlpool/whirlpool-account.js';
export {
  WHIRLPOOL_DYNAMIC_TICK_ARRAY_DISCRIMINATOR,
  WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE,
  WHIRLPOOL_FIXED_TICK_ARRAY_DISCRIMINATOR,
  WHIRLPOOL_TICK_ARRAY_SIZE,
  decodeWhirlpoolTickArray,
  encodeWhirlpoolDynamicTickArray,
  encodeWhirlpoolTickArray,
  type WhirlpoolTickArrayFields,
} from './whirlpool/tick-array.js';
export { quoteWhirlpool } from './whirlpool/whirlpool-swap.js';

// dexa_clmm
export {
  CLMM_POOL_ACCOUNT_SIZE,
  CLMM_POOL_DISCRIMINATOR,
  decodeClmmPool,
  encodeClmmPool,
  setTickArrayBit,
  type ClmmPoolFields,
} from './clmm/clmm-pool.js';
export {
  CLMM_AMM_CONFIG_ACCOUNT_SIZE,
  CLMM_AMM_CONFIG_DISCRIMINATOR,
  decodeClmmAmmConfig,
  encodeClmmAmmConfig,
  withAmmConfig,
  type ClmmAmmConfig,
} from './clmm/amm-config.js';
export {
  CLMM_TICK_ARRAY_ACCOUNT_SIZE,
  CLMM_TICK_ARRAY_DISCRIMINATOR,
  CLMM_TICK_ARRAY_SIZE,
  decodeClmmTickArray,
  encodeClmmTickArray,
  type ClmmTickArrayFields,
} from './clmm/tick-array.js';
export { ClmmFeeOn, clmmFeeOnInput, quoteClmm } from './clmm/clmm-swap.js';

// concentrated-liquidity math both CL protocols share (the simulator builds states with it)
export {
  MAX_TICK,
  MIN_SQRT_PRICE,
  MIN_TICK,
  RAYDIUM_MAX_SQRT_PRICE,
  WHIRLPOOL_MAX_SQRT_PRICE,
  raydiumSqrtPriceAtTick,
  raydiumTickAtSqrtPrice,
  whirlpoolSqrtPriceAtTick,
  whirlpoolTickAtSqrtPrice,
} from './concentrated/tick-math.js';
export { amountDeltaA, amountDeltaB } from './concentrated/sqrt-price-math.js';
export { PackedTickArray } from './concentrated/packed-tick-array.js';

// dexb_dlmm
export * from './dlmm/index.js';

// the accounts a pool's quotes need besides the pool account, and the context built from them
export {
  DEFAULT_ARRAYS_EACH_SIDE,
  arrayBitmapOf,
  assembleSwapState,
  buildSwapState,
  clmmAmmConfigAddress,
  clmmTickArrayAddress,
  currentArrayKey,
  decodeSwapAccount,
  dlmmBinArrayAddress,
  lookaheadArrayKeys,
  reserveAccountsOf,
  swapAccountAddresses,
  swapArrayAddress,
  swapArrayKeys,
  ticksPerArray,
  whirlpoolTickArrayAddress,
  withAmmVaultAccounts,
  type FetchedAccount,
  type PoolAccountsOptions,
  type PoolSwapState,
} from './pool-accounts.js';
export { TOKEN_ACCOUNT_SIZE, tokenAccountAmount } from './token-account.js';
export { compactBinArray, compactSwapContext, compactTickArray } from './compact-context.js';

// Token-2022 mints, transfer fees and the quotes that pay them
export * from './token-2022/index.js';

// real swap instructions (each protocol's module documents its layout) and routes as one transaction
export { anchorInstructionDiscriminator, hasDiscriminator as anchorHasDiscriminator, type RemainingAccountsSlice } from './anchor-instruction.js';
export {
  AMM_AUTHORITY_SEED,
  AmmInfoOffset,
  ammV4Authority,
  ammV4CanonicalAuthority,
  ammV4Keys,
  decodeAmmInfo,
  encodeAmmInfo,
  isAmmInfoPool,
  withAmmReserves,
  withAmmVaultAmounts,
  type AmmInfoFields,
  type AmmV4Keys,
} from './amm/amm-info.js';
export {
  AMM_V4_SWAP_DATA_SIZE,
  AmmV4Error,
  AmmV4Instruction,
  ammV4SwapInstruction,
  decodeAmmV4SwapData,
  encodeAmmV4SwapData,
  type AmmV4MarketKeys,
  type AmmV4SwapData,
  type AmmV4SwapInput,
} from './amm/swap-instruction.js';
export {
  CLMM_BITMAP_EXTENSION_SIZE,
  CLMM_SWAP_V2_DATA_SIZE,
  CLMM_SWAP_V2_DISCRIMINATOR,
  ClmmError,
  clmmBitmapExtensionAddress,
  clmmObservationAddress,
  clmmPoolSwapInstruction,
  clmmSwapTickArrays,
  clmmSwapV2Instruction,
  decodeClmmSwapV2Data,
  encodeClmmSwapV2Data,
  type ClmmPoolSwapInput,
  type ClmmSwapV2Accounts,
  type ClmmSwapV2Data,
} from './clmm/swap-instruction.js';
export {
  WHIRLPOOL_SWAP_V2_DISCRIMINATOR,
  WhirlpoolAccountsType,
  WhirlpoolError,
  decodeWhirlpoolSwapV2Data,
  encodeWhirlpoolSwapV2Data,
  whirlpoolOracleAddress,
  whirlpoolPoolSwapInstruction,
  whirlpoolSwapTickArrayStarts,
  whirlpoolSwapV2Instruction,
  type WhirlpoolPoolSwapInput,
  type WhirlpoolSwapV2Accounts,
  type WhirlpoolSwapV2Data,
} from './whirlpool/swap-instruction.js';
export {
  DLMM_SWAP2_DISCRIMINATOR,
  DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR,
  DlmmError,
  decodeDlmmSwap2Data,
  dlmmBitmapExtensionAddress,
  dlmmEventAuthority,
  dlmmPoolSwapInstruction,
  dlmmSwap2Instruction,
  dlmmSwapBinArrays,
  encodeDlmmSwap2Data,
  type DlmmPoolSwapInput,
  type DlmmSwap2Accounts,
  type DlmmSwap2Data,
} from './dlmm/swap-instruction.js';
export { swapInstructionFor, type SwapLeg, type SwapPool } from './swap-instruction.js';
export {
  COMPUTE_BUDGET_UNITS,
  CREATE_TOKEN_ACCOUNT_COMPUTE_UNITS,
  SWAP_COMPUTE_UNITS,
  buildSwapRouteTransaction,
  planSwapRoute,
  type PlannedSwapHop,
  type SwapRoutePlan,
  type SwapRouteRequest,
  type SwapRouteTransactionOptions,
} from './swap-route.js';
export { loadSwapPool, swapPoolFrom, swapPoolPlan, type SwapPoolOptions } from './swap-pool.js';
export { poolAfterSwap, type PoolAfterSwap } from './pool-after-swap.js';
