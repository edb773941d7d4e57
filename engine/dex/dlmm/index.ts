/**
 * engine/dex/dlmm: Meteora DLMM (dexb_dlmm) account decoders and encoders and exact swap quotes.
 * What the rest of the engine may use; everything else in the folder is internal.
 */
export {
  DLMM_LB_PAIR_SIZE,
  DLMM_LB_PAIR_DISCRIMINATOR,
  decodeLbPair,
  encodeLbPair,
  supportsLimitOrders,
  type DlmmLbPair,
} from './lb-pair.js';
export {
  DLMM_BIN_ARRAY_SIZE,
  DLMM_BIN_ARRAY_DISCRIMINATOR,
  decodeBinArray,
  encodeBinArray,
  binArrayIndexOf,
  binArrayLowerBinId,
  binArrayUpperBinId,
  type DlmmBin,
  type DlmmBinArray,
} from './bin-array.js';
export { PackedBinArray, type PackedBinAmounts } from './packed-bin-array.js';
export { binArrayHasLiquidity, nextBinArrayWithLiquidity, withBinArrayBit } from './bin-array-bitmap.js';
export { binPrice, q64ToNumber } from './bin-price.js';
export { baseFeeRate, variableFeeRate, totalFeeRate } from './fees.js';
export { quoteDlmm, quoteDlmmWithBins, type DlmmBinUpdate, type DlmmSwapQuote, type DlmmSwapWithBins } from './dlmm-swap.js';
export {
  BINS_PER_ARRAY,
  MIN_BIN_ID,
  MAX_BIN_ID,
  PairStatus,
  PairType,
  ActivationType,
  FunctionType,
  CollectFeeMode,
} from './constants.js';
