/**
 * Helpers every swap quoter shares: the refusal record and the checks on a request.
 */
import { ErrorCode, TpError } from '../errors.js';
import { SwapFailure, type SwapRefusal, type SwapRequest } from './types.js';

const U64_MAX = (1n << 64n) - 1n;

export function refuse(reason: SwapFailure, message: string): SwapRefusal {
  return { ok: false, reason, message };
}

/**
 * Throws TpError(InvalidAmount) for an amount no token account can hold (negative or above u64);
 * returns a ZeroAmount refusal for zero, undefined when the amount is quotable.
 */
export function checkAmount(req: SwapRequest): SwapRefusal | undefined {
  const amount = req.amount;
  if (typeof amount !== 'bigint' || amount < 0n || amount > U64_MAX) {
    throw new TpError(ErrorCode.InvalidAmount, 'swap amount must be an integer in [0, 2^64 - 1]', {
      context: { field: 'amount', value: String(amount) },
    });
  }
  if (amount === 0n) return refuse(SwapFailure.ZeroAmount, 'swap amount is zero');
  return undefined;
}
