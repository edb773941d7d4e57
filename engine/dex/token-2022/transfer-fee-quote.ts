/**
 * Swap quotes on pools whose mints charge a Token-2022 transfer fee, as the programs' swap
 * instructions move the tokens (Whirlpool `swap_v2` / `swap_with_transfer_fee_extension`, Raydium
 * CLMM `swap_v2`, Raydium CPMM: every transfer of a fee mint withholds the fee of the current
 * epoch at the destination):
 *
 * - ExactIn `amount`: the trader sends `amount`; the pool receives `amount - fee_in(amount)` and
 *   swaps exactly that; it sends out `out`; the trader receives `out - fee_out(out)`.
 * - ExactOut `amount` (what the trader is to receive): the pool must send
 *   `pre_out = pre_fee(amount)`; it swaps for exactly that and needs `in`; the trader sends
 *   `pre_fee(in)` (the smallest amount that arrives as `in`).
 *
 * whirlpools-core's `swapQuoteByInputToken` reports as `tokenIn` the smallest amount that arrives
 * as the same net input, which can be an atom below `amount` (two amounts can lose the same fee);
 * the program transfers `amount`, which is what this quote reports.
 */
import { checkAmount, refuse } from '../swap-result.js';
import { SwapFailure, SwapMode, type SwapRequest, type SwapResult } from '../types.js';
import { calculateFee, calculatePreFeeAmount, epochFee, type TransferFee, type TransferFeeConfig } from './transfer-fee.js';

/**
 * The transfer fees a pool's swaps pay: its two mints' TransferFeeConfig (as decodeMint gives it;
 * undefined for a mint whose transfers are free: every SPL Token mint, and Token-2022 mints
 * without the extension) and the epoch that selects each config's older or newer fee.
 */
export interface PoolTransferFees {
  /** The cluster's current epoch (getEpochInfo). */
  epoch: bigint;
  /** Token A's mint (the pool's first mint). */
  tokenA?: TransferFeeConfig | undefined;
  tokenB?: TransferFeeConfig | undefined;
}

const NO_FEE: TransferFee = Object.freeze({ epoch: 0n, maximumFee: 0n, transferFeeBasisPoints: 0 });

/** Whether `fees` makes any difference at all: a config on either side. */
export function hasTransferFees(fees: PoolTransferFees | undefined): fees is PoolTransferFees {
  return fees !== undefined && (fees.tokenA !== undefined || fees.tokenB !== undefined);
}

/**
 * `req` quoted through `quotePool` (the pool's own math, on the amounts the pool sees) with the
 * transfer fees of `fees` taken on the way in and out. The result's `amountIn` / `amountOut` are
 * what leaves and reaches the trader's token accounts; `transferFees` has the fees withheld and the
 * pool's own amounts; `fee` and `priceImpact` stay the pool's. Refusals: those of the pool, and
 * ZeroAmount when the input fee takes the whole input or the output fee the whole output,
 * InsufficientLiquidity when an ExactOut amount before fees would exceed a u64.
 */
export function quoteWithTransferFees(req: SwapRequest, fees: PoolTransferFees, quotePool: (req: SwapRequest) => SwapResult): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  const inConfig = req.aToB ? fees.tokenA : fees.tokenB;
  const outConfig = req.aToB ? fees.tokenB : fees.tokenA;
  const feeIn = inConfig === undefined ? NO_FEE : epochFee(inConfig, fees.epoch);
  const feeOut = outConfig === undefined ? NO_FEE : epochFee(outConfig, fees.epoch);

  let traderIn: bigint;
  let inner: SwapResult;
  if (req.mode === SwapMode.ExactIn) {
    const poolIn = req.amount - calculateFee(feeIn, req.amount);
    if (poolIn === 0n) return refuse(SwapFailure.ZeroAmount, `the transfer fee takes the whole input of ${req.amount}`);
    inner = quotePool({ aToB: req.aToB, mode: req.mode, amount: poolIn });
    if (!inner.ok) return inner;
    if (inner.amountIn === poolIn) traderIn = req.amount;
    else {
      const pre = calculatePreFeeAmount(feeIn, inner.amountIn);
      if (pre === undefined) return refuse(SwapFailure.InsufficientLiquidity, 'input before the transfer fee exceeds a u64');
      traderIn = pre;
    }
  } else {
    const poolOut = calculatePreFeeAmount(feeOut, req.amount);
    if (poolOut === undefined) return refuse(SwapFailure.InsufficientLiquidity, 'output before the transfer fee exceeds a u64');
    inner = quotePool({ aToB: req.aToB, mode: req.mode, amount: poolOut });
    if (!inner.ok) return inner;
    const pre = calculatePreFeeAmount(feeIn, inner.amountIn);
    if (pre === undefined) return refuse(SwapFailure.InsufficientLiquidity, 'input before the transfer fee exceeds a u64');
    traderIn = pre;
  }
  const outputFee = calculateFee(feeOut, inner.amountOut);
  const traderOut = inner.amountOut - outputFee;
  if (traderOut === 0n) return refuse(SwapFailure.ZeroAmount, `the transfer fee takes the whole output of ${inner.amountOut}`);
  return {
    ...inner,
    amountIn: traderIn,
    amountOut: traderOut,
    transferFees: { input: traderIn - inner.amountIn, output: outputFee, poolAmountIn: inner.amountIn, poolAmountOut: inner.amountOut },
  };
}
