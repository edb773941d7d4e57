/**
 * A trade's actual profit: the wallet's balance change of the opportunity's profit mint. Fees and
 * the tip are paid in lamports, so for a wrapped SOL profit the lamport change is added to the wSOL
 * token change (both are lamports); for any other mint the token change alone is the profit (the
 * fees are then a cost in another unit, reported beside it). A flash loan's fee is in the balance
 * change itself (the repay takes input + fee from the wallet's account), so it is counted exactly
 * when a loan was taken and never otherwise.
 */
import { WSOL_MINT } from '../chain/index.js';
import type { BalanceChanges } from './submission.js';

export function actualProfitOf(profitMint: string, changes: BalanceChanges): bigint {
  const token = changes.tokens.get(profitMint) ?? 0n;
  return profitMint === WSOL_MINT ? token + changes.lamports : token;
}
