/**
 * dexa_amm swap math: Raydium AMM v4 constant product (docs/wire-formats.md §5.1, docs/architecture.md §3).
 *
 * Exact in:  fee = ceil(in * num / den), net = in - fee (= floor(in * (den - num) / den)),
 *            out = floor(reserveOut * net / (reserveIn + net)); refused when out = 0 or
 *            out >= reserveOut.
 * Exact out: net = ceil(reserveIn * out / (reserveOut - out)),
 *            in  = ceil(net * den / (den - num)); refused when out >= reserveOut.
 *
 * This is raydium-amm program/src/processor.rs process_swap_base_in(_v2) / _out(_v2) with
 * math.rs `swap_token_amount_base_in` / `_base_out` and `CheckedCeilDiv` (a plain ceiling) on the
 * reserves `calc_total_without_take_pnl_no_orderbook` gives (vault amounts less need_take_pnl)
 * and the account's own swap_fee_numerator / _denominator.
 *
 * Refusals where the program fails: a status that does not allow swaps (and WaitingTrade before
 * pool_open_time when the context carries the time), an AmmInfo pool without its vault balances
 * (insufficient_liquidity_data: the reserves are unknown), a vault below its need_take_pnl
 * (CheckedSubOverflow), a swap fee the program cannot apply (denominator 0 or numerator >= it),
 * out = 0, out >= reserve, an input beyond u64.
 */
import { priceImpact } from '../price-impact.js';
import { checkAmount, refuse } from '../swap-result.js';
import { SwapFailure, SwapMode, type AmmPool, type SwapContext, type SwapRequest, type SwapResult } from '../types.js';
import { AmmStatus, ammSwapEnabled } from './amm-pool.js';

const U64_MAX = (1n << 64n) - 1n;

function ceilDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return q * d === n ? q : q + 1n;
}

/** Fee of an exact-in swap: ceil(amountIn * num / den). */
export function constantProductFee(amountIn: bigint, feeNumerator: bigint, feeDenominator: bigint): bigint {
  return ceilDiv(amountIn * feeNumerator, feeDenominator);
}

/** Output for `net` input after the fee: floor(reserveOut * net / (reserveIn + net)). */
export function constantProductOut(net: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  const denominator = reserveIn + net;
  return denominator === 0n ? 0n : (reserveOut * net) / denominator;
}

/** Input after the fee needed for `amountOut` (< reserveOut): ceil(reserveIn * out / (reserveOut - out)). */
export function constantProductNetIn(amountOut: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  return ceilDiv(reserveIn * amountOut, reserveOut - amountOut);
}

/** Gross input for a net input: ceil(net * den / (den - num)). */
export function constantProductGrossIn(net: bigint, feeNumerator: bigint, feeDenominator: bigint): bigint {
  return ceilDiv(net * feeDenominator, feeDenominator - feeNumerator);
}

/** Quotes a swap on a dexa_amm pool; `ctx.nowSeconds`, when given, checks a WaitingTrade pool's open time. */
export function quoteConstantProduct(pool: AmmPool, req: SwapRequest, ctx?: SwapContext): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  if (!ammSwapEnabled(pool.status)) {
    return refuse(SwapFailure.PoolDisabled, `AMM pool status ${pool.status} does not allow swaps`);
  }
  if (pool.status === AmmStatus.WaitingTrade && pool.poolOpenTime !== undefined && ctx?.nowSeconds !== undefined && ctx.nowSeconds < pool.poolOpenTime) {
    return refuse(SwapFailure.PoolDisabled, `AMM pool opens at ${pool.poolOpenTime}`);
  }
  if (pool.vaultA !== undefined) {
    if (pool.vaultAmounts === undefined) {
      return refuse(SwapFailure.InsufficientLiquidityData, 'AMM v4 pool without its vault balances: its reserves are unknown');
    }
    if (pool.vaultAmounts[0] < (pool.needTakePnlA ?? 0n) || pool.vaultAmounts[1] < (pool.needTakePnlB ?? 0n)) {
      return refuse(SwapFailure.InsufficientLiquidity, 'AMM vault holds less than its need_take_pnl');
    }
  }
  if (pool.feeDenominator === 0n || pool.feeNumerator >= pool.feeDenominator) {
    return refuse(SwapFailure.PoolDisabled, `AMM swap fee ${pool.feeNumerator}/${pool.feeDenominator} cannot be applied`);
  }
  const reserveIn = req.aToB ? pool.reserveA : pool.reserveB;
  const reserveOut = req.aToB ? pool.reserveB : pool.reserveA;
  if (reserveIn === 0n || reserveOut === 0n) {
    return refuse(SwapFailure.InsufficientLiquidity, 'AMM pool has an empty reserve');
  }
  const { feeNumerator: num, feeDenominator: den } = pool;

  if (req.mode === SwapMode.ExactIn) {
    const fee = constantProductFee(req.amount, num, den);
    const amountOut = constantProductOut(req.amount - fee, reserveIn, reserveOut);
    if (amountOut === 0n) return refuse(SwapFailure.ZeroAmount, 'AMM output rounds down to zero');
    if (amountOut >= reserveOut) {
      return refuse(SwapFailure.InsufficientLiquidity, 'AMM output would empty the reserve');
    }
    return {
      ok: true,
      amountIn: req.amount,
      amountOut,
      fee,
      priceImpact: priceImpact(amountOut, req.amount - fee, reserveOut, reserveIn),
    };
  }

  if (req.amount >= reserveOut) {
    return refuse(SwapFailure.InsufficientLiquidity, `AMM reserve ${reserveOut} cannot pay ${req.amount}`);
  }
  const net = constantProductNetIn(req.amount, reserveIn, reserveOut);
  const amountIn = constantProductGrossIn(net, num, den);
  const fee = amountIn - net;
  if (amountIn > U64_MAX) return refuse(SwapFailure.InsufficientLiquidity, 'AMM input would exceed u64');
  return {
    ok: true,
    amountIn,
    amountOut: req.amount,
    fee,
    priceImpact: priceImpact(req.amount, amountIn - fee, reserveOut, reserveIn),
  };
}
