/**
 * Decoded pool accounts and swap results, shared by every DEX module (leaf module: no imports).
 *
 * All amounts, reserves, liquidity and Q64.64 prices are bigint: the math is exact integer math
 * as the protocols do it on chain. Addresses are base58 strings.
 */

/** The spec's neutral DEX identifiers (spec 02). */
export const Dex = {
  Amm: 'dexa_amm',
  Clmm: 'dexa_clmm',
  Dlmm: 'dexb_dlmm',
  Whirlpool: 'dexc_whirlpool',
} as const;
export type Dex = (typeof Dex)[keyof typeof Dex];
export const DEX_KINDS: readonly Dex[] = [Dex.Amm, Dex.Clmm, Dex.Dlmm, Dex.Whirlpool];

/** Fields every decoded pool has. Token A / B follow the protocol's own order (mint 0 / x / a). */
interface PoolCommon {
  /** Pool account address, when known to the decoder's caller. */
  address?: string;
  tokenA: string;
  tokenB: string;
}

/**
 * dexa_amm: Raydium AMM v4 `AmmInfo` (amm/amm-info.ts), or spec 02's simplified layout where a
 * registry is explicitly set to it (amm/amm-pool.ts). `reserveA` / `reserveB` are always the
 * reserves the swap math uses: for AmmInfo the vault balances less `need_take_pnl`, known only
 * once the vaults were read (`vaultAmounts`); for the simplified layout the account's own fields.
 */
export interface AmmPool extends PoolCommon {
  dex: typeof Dex.Amm;
  status: bigint;
  reserveA: bigint;
  reserveB: bigint;
  feeNumerator: bigint;
  feeDenominator: bigint;
  /**
   * AmmInfo only (absent for the simplified layout): coin (token A) and pc (token B) vaults, the
   * `need_take_pnl_coin` / `_pc` the program subtracts from their balances, mint decimals and
   * `pool_open_time` (Unix seconds).
   */
  vaultA?: string;
  vaultB?: string;
  needTakePnlA?: bigint;
  needTakePnlB?: bigint;
  decimalsA?: number;
  decimalsB?: number;
  poolOpenTime?: bigint;
  /**
   * AmmInfo only: the vault balances `reserveA` / `reserveB` come from (amm-info.ts
   * withAmmVaultAmounts). Absent: the AmmInfo was decoded alone, its reserves are unknown (0 / 0)
   * and quotes are refused with insufficient_liquidity_data.
   */
  vaultAmounts?: readonly [bigint, bigint];
}

/** dexa_clmm (Raydium CLMM PoolState) and dexc_whirlpool (Orca Whirlpool). */
export interface ConcentratedPool extends PoolCommon {
  dex: typeof Dex.Clmm | typeof Dex.Whirlpool;
  /** Q64.64 sqrt(price of A in B), raw units. */
  sqrtPrice: bigint;
  tick: number;
  tickSpacing: number;
  liquidity: bigint;
  /**
   * Trade fee in millionths (Whirlpool `fee_rate`; Raydium `AmmConfig.trade_fee_rate`, which lives
   * in another account: undefined until that account is supplied, see `ammConfig`).
   */
  feeRate: number | undefined;
  vaultA: string;
  vaultB: string;
  /** Raydium only: the AmmConfig account that holds the fee rate. */
  ammConfig?: string;
  /** Raydium only: `observation_key`, the ObservationState account a swap writes. */
  observationKey?: string;
  /** Raydium only: mint decimals stored in the pool. */
  decimalsA?: number;
  decimalsB?: number;
  /** Raydium only: status bit 4 set means swaps are disabled. */
  swapDisabled?: boolean;
  /**
   * Raydium only: `fee_on`, where the trade fee is taken: 0 from the input token, 1 always in
   * token A (mint 0), 2 always in token B (mint 1); a fee on the output token is cut from the output.
   */
  feeOn?: number;
  /**
   * Raydium only: `tick_array_bitmap`, 16 u64 words (word 0 lowest); bit (startTickIndex /
   * (60 * tickSpacing) + 512) set means that tick array is initialized. Arrays beyond +-512 are
   * tracked by the separate bitmap-extension account.
   */
  tickArrayBitmap?: readonly bigint[];
  /** Raydium only: dynamic (volatility) fee state; undefined when the pool has none. */
  dynamicFee?: ClmmDynamicFee;
  /**
   * Whirlpool only: the pool was created from an adaptive fee tier, so its fee also depends on its
   * Oracle account, which tidepool does not decode: quotes refuse with MissingFeeRate.
   */
  adaptiveFee?: boolean;
}

/** Raydium CLMM `DynamicFeeInfo` (PoolState +1096). */
export interface ClmmDynamicFee {
  filterPeriod: number;
  decayPeriod: number;
  reductionFactor: number;
  dynamicFeeControl: number;
  maxVolatilityAccumulator: number;
  tickSpacingIndexReference: number;
  volatilityReference: number;
  volatilityAccumulator: number;
  lastUpdateTimestamp: bigint;
}

/** dexb_dlmm: Meteora DLMM LbPair. */
export interface DlmmPool extends PoolCommon {
  dex: typeof Dex.Dlmm;
  activeId: number;
  binStep: number;
  /** 0 enabled, 1 disabled. */
  status: number;
  reserveX: string;
  reserveY: string;
  parameters: DlmmStaticParameters;
  vParameters: DlmmVariableParameters;
  /** bin_array_bitmap: bit (arrayIndex + 512) set means that bin array has liquidity. */
  binArrayBitmap: readonly bigint[];
}

export interface DlmmStaticParameters {
  baseFactor: number;
  filterPeriod: number;
  decayPeriod: number;
  reductionFactor: number;
  variableFeeControl: number;
  maxVolatilityAccumulator: number;
  minBinId: number;
  maxBinId: number;
  protocolShare: number;
  baseFeePowerFactor: number;
  functionType: number;
  collectFeeMode: number;
}

export interface DlmmVariableParameters {
  volatilityAccumulator: number;
  volatilityReference: number;
  indexReference: number;
  lastUpdateTimestamp: bigint;
}

export type DecodedPool = AmmPool | ConcentratedPool | DlmmPool;

/** One initialized or uninitialized tick of a tick array (both CL protocols). */
export interface Tick {
  index: number;
  initialized: boolean;
  liquidityNet: bigint;
  liquidityGross: bigint;
  /**
   * Raydium only: unfilled limit orders resting on this tick (orders_amount +
   * part_filled_orders_remaining). Limit-order fills are not modelled: a swap that reaches such a
   * tick is refused.
   */
  limitOrderAmount?: bigint;
}

/** A tick array account: a run of consecutive ticks, `tickSpacing` apart, from `startTickIndex`. */
export interface TickArray {
  dex: typeof Dex.Clmm | typeof Dex.Whirlpool;
  pool: string;
  startTickIndex: number;
  ticks: readonly Tick[];
}

export interface Bin {
  id: number;
  amountX: bigint;
  amountY: bigint;
  /** Q64.64, Y atoms per X atom. */
  price: bigint;
  liquiditySupply: bigint;
}

/** A DLMM BinArray account: 70 bins from id `index * 70`. */
export interface BinArray {
  pool: string;
  index: bigint;
  bins: readonly Bin[];
}

/** What a swap needs besides the pool: the extra accounts some kinds read. */
export interface SwapContext {
  tickArrays?: readonly TickArray[];
  binArrays?: readonly BinArray[];
  /**
   * Unix seconds, for DLMM's volatility decay and Raydium CLMM's dynamic fee (defaults to the
   * pool's last update).
   */
  nowSeconds?: bigint;
}

export const SwapMode = { ExactIn: 'ExactIn', ExactOut: 'ExactOut' } as const;
export type SwapMode = (typeof SwapMode)[keyof typeof SwapMode];

export interface SwapRequest {
  /** true: token A in, token B out. */
  aToB: boolean;
  mode: SwapMode;
  /** Input amount for ExactIn, output amount for ExactOut, in raw atoms. */
  amount: bigint;
}

/** Why a swap could not be quoted. Not an exception: a normal, expected answer. */
export const SwapFailure = {
  /** The swap would run past the ticks or bins we were given: more data is needed, not a number. */
  InsufficientLiquidityData: 'insufficient_liquidity_data',
  /** The pool cannot pay that much at any price (AMM: out >= reserve; CL/DLMM: price limit hit). */
  InsufficientLiquidity: 'insufficient_liquidity',
  ZeroAmount: 'zero_amount',
  PoolDisabled: 'pool_disabled',
  /** Raydium CLMM without its AmmConfig account: the fee rate is unknown. */
  MissingFeeRate: 'missing_fee_rate',
} as const;
export type SwapFailure = (typeof SwapFailure)[keyof typeof SwapFailure];

export type SwapResult = SwapQuote | SwapRefusal;

export interface SwapQuote {
  ok: true;
  amountIn: bigint;
  amountOut: bigint;
  /** Fee charged, in input-token atoms (output-token atoms when `feeInOutput`). */
  fee: bigint;
  feeInOutput?: boolean;
  /**
   * Relative difference between the execution price and the pool's spot price before the swap, as
   * a fraction >= 0: `1 - (amountOut / (amountIn - fee)) / spot`, with `spot` in output atoms per
   * input atom. The fee is taken out first, so a tiny swap has an impact near 0, not near the fee.
   */
  priceImpact: number;
  /** CL pools: sqrt price after the swap; DLMM: active bin after the swap. */
  sqrtPriceAfter?: bigint;
  tickAfter?: number;
  /** CL pools: the pool's active liquidity after the swap (after every tick it crossed). */
  liquidityAfter?: bigint;
  activeIdAfter?: number;
  /**
   * Present when the quote was asked with transfer fees (quoteSwap's `transferFees`, a Token-2022
   * mint on either side): `amountIn` and `amountOut` are then what leaves and reaches the trader's
   * token accounts, and these are the fees withheld and the amounts the pool itself takes and pays.
   */
  transferFees?: TransferFeeAmounts;
}

/** The transfer fees of one quote, and the pool's own amounts between them (raw atoms). */
export interface TransferFeeAmounts {
  /** Withheld from the trader's input transfer (input mint); `amountIn - poolAmountIn`. */
  input: bigint;
  /** Withheld from the pool's output transfer (output mint); `poolAmountOut - amountOut`. */
  output: bigint;
  /** What the pool receives and swaps. */
  poolAmountIn: bigint;
  /** What the pool sends. */
  poolAmountOut: bigint;
}

export interface SwapRefusal {
  ok: false;
  reason: SwapFailure;
  message: string;
}
