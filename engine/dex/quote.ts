/**
 * One entry point for swap quotes on any decoded pool, and the mapping from a pair of mints to a
 * swap direction.
 */
import { ErrorCode, TpError } from '../errors.js';
import { quoteConstantProduct } from './amm/constant-product.js';
import { quoteClmm } from './clmm/clmm-swap.js';
import { quoteDlmm } from './dlmm/index.js';
import { hasTransferFees, quoteWithTransferFees, type PoolTransferFees } from './token-2022/transfer-fee-quote.js';
import { Dex, type DecodedPool, type SwapContext, type SwapRequest, type SwapResult } from './types.js';
import { quoteWhirlpool } from './whirlpool/whirlpool-swap.js';

const NO_CONTEXT: SwapContext = Object.freeze({});

/**
 * Quotes `req` on `pool` with the protocol's exact integer math. Refusals (SwapFailure) are
 * answers, not exceptions; only a malformed request throws (TpError InvalidAmount).
 * `ctx` carries the extra accounts CL and DLMM pools need to go past their current range.
 *
 * `transferFees`: the TransferFeeConfig of the pool's Token-2022 mints and the current epoch
 * (token-2022/transfer-fee-quote.ts). With a config on either side, `req.amount` and the result's
 * `amountIn` / `amountOut` are the trader's (before the input fee, after the output fee) and the
 * result carries `transferFees`; without (undefined, or no config on either side) the quote is the
 * pool's alone, as before.
 */
export function quoteSwap(pool: DecodedPool, req: SwapRequest, ctx: SwapContext = NO_CONTEXT, transferFees?: PoolTransferFees): SwapResult {
  if (hasTransferFees(transferFees)) return quoteWithTransferFees(req, transferFees, (r) => quotePool(pool, r, ctx));
  return quotePool(pool, req, ctx);
}

function quotePool(pool: DecodedPool, req: SwapRequest, ctx: SwapContext): SwapResult {
  switch (pool.dex) {
    case Dex.Amm:
      return quoteConstantProduct(pool, req, ctx);
    case Dex.Whirlpool:
      return quoteWhirlpool(pool, req, ctx);
    case Dex.Clmm:
      return quoteClmm(pool, req, ctx);
    case Dex.Dlmm:
      return quoteDlmm(pool, req, ctx);
    default:
      return unknownDex(pool);
  }
}

function unknownDex(pool: never): never {
  throw new TpError(ErrorCode.AccountInvalid, `no swap math for dex ${(pool as DecodedPool).dex}`);
}

/**
 * The swap direction for selling `inputMint` for `outputMint` on `pool`: true when token A goes
 * in. Throws TpError(UnknownMint) unless the two mints are the pool's two tokens.
 */
export function directionFor(pool: DecodedPool, inputMint: string, outputMint: string): boolean {
  if (inputMint === pool.tokenA && outputMint === pool.tokenB) return true;
  if (inputMint === pool.tokenB && outputMint === pool.tokenA) return false;
  throw new TpError(ErrorCode.UnknownMint, `pool does not trade ${inputMint} for ${outputMint}`, {
    context: { mint: inputMint === pool.tokenA || inputMint === pool.tokenB ? outputMint : inputMint, pool: pool.address, dex: pool.dex, tokenA: pool.tokenA, tokenB: pool.tokenB, inputMint, outputMint },
  });
}
