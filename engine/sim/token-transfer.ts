import { calculateEpochFee, withheldAmountOffset, type DecodedMint } from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import type { InvokeContext } from './invoke-context.js';
import { TokenError, tokenAmount, withTokenAmount } from './spl-token.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * The balance changes of a token transfer once its checks have passed, as both token programs'
 * `process_transfer` makes them: the source loses `amount`, the destination gains `amount - fee`,
 * and a Token-2022 transfer fee is withheld in the destination's TransferFeeAmount extension.
 * (The swap program's token movements stand for its CPIs to the token program and use the same.)
 */

const U64_MAX = (1n << 64n) - 1n;

/** The fee a transfer of `amount` of `mint` withholds in `epoch`: 0 without a TransferFeeConfig. */
export function transferFeeOf(mint: DecodedMint | undefined, epoch: bigint, amount: bigint): bigint {
  const config = mint?.transferFeeConfig;
  return config === undefined ? 0n : calculateEpochFee(config, epoch, amount);
}

/**
 * Moves `amount` from instruction account `from` to `to`, withholding `fee` at the destination.
 * Errors: InsufficientFunds (Custom 1), Overflow (Custom 14) past a u64, InvalidState (Custom 13)
 * for a fee on a destination without TransferFeeAmount, InvalidAccountData for a damaged extension
 * area. A transfer to the same account changes nothing.
 */
export function moveTokens(ctx: InvokeContext, from: number, to: number, amount: bigint, fee: bigint): InstructionErrorValue | null {
  const source = ctx.account(from)!;
  const have = tokenAmount(source.data);
  if (have < amount) return { Custom: TokenError.InsufficientFunds };
  if (fee > amount) return { Custom: TokenError.Overflow };
  if (ctx.keys[from] === ctx.keys[to]) return null;
  let err = ctx.put(from, withTokenAmount(source, have - amount));
  if (err !== null) return err;
  const destination = ctx.account(to)!;
  const credited = tokenAmount(destination.data) + amount - fee;
  if (credited > U64_MAX) return { Custom: TokenError.Overflow };
  const next = withTokenAmount(destination, credited);
  if (fee > 0n) {
    err = withhold(next, fee, ctx.keys[to]!);
    if (err !== null) return err;
  }
  return ctx.put(to, next);
}

/** Adds `fee` to the record's TransferFeeAmount (in place: `record` is a fresh copy). */
function withhold(record: AccountRecord, fee: bigint, address: string): InstructionErrorValue | null {
  let at: number | undefined;
  try {
    at = withheldAmountOffset(record.data, address);
  } catch {
    return IxError.InvalidAccountData;
  }
  // A fee means the mint has a fee config, so every account of it withholds; anything else is the
  // program's InvalidState.
  if (at === undefined) return { Custom: TokenError.InvalidState };
  const view = new DataView(record.data.buffer, record.data.byteOffset, record.data.byteLength);
  const total = view.getBigUint64(at, true) + fee;
  if (total > U64_MAX) return { Custom: TokenError.Overflow };
  view.setBigUint64(at, total, true);
  return null;
}
