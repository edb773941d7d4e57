import { setTimeout as sleep } from 'node:timers/promises';

import { WSOL_MINT } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { ChainClient, LandedTransaction } from '../rpc/index.js';
import type { BalanceChanges } from './submission.js';

/**
 * The wallet's balance changes once a trade's transaction(s) have a final status: getTransaction of
 * each (the node may answer null for a moment after the status said confirmed, so it is asked
 * again), summed: lamports and fees over all of them (a bundle's swap and tip), tokens per mint of
 * `mints` (0 for a mint the transactions did not move).
 */

export interface LandedOptions {
  /** Between asks. */
  pollMs: number;
  /** Gives up (TpError Unavailable) when the node still has no record at this Unix ms. */
  until: number;
  signal?: AbortSignal;
}

/** getTransaction of `signature` for `owner`, asked again while null or failing, until `options.until`. */
export async function fetchLanded(chain: ChainClient, signature: string, owner: string, options: LandedOptions): Promise<LandedTransaction> {
  let lastError: unknown;
  for (;;) {
    try {
      const landed = await chain.getTransaction(signature, owner);
      if (landed !== null) return landed;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= options.until || options.signal?.aborted === true) {
      throw new TpError(ErrorCode.Unavailable, `transaction ${signature} has a final status but getTransaction gave no record of it`, {
        cause: lastError,
        context: { signature },
      });
    }
    await sleep(options.pollMs, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch(() => undefined);
  }
}

export function sumBalanceChanges(landed: readonly LandedTransaction[], mints: readonly string[]): BalanceChanges {
  let lamports = 0n;
  let fee = 0n;
  let rent = 0n;
  for (const t of landed) {
    lamports += t.lamports;
    fee += t.fee;
    rent += t.rent;
  }
  const tokens = new Map<string, bigint>();
  for (const mint of mints) {
    let sum = 0n;
    for (const t of landed) sum += t.tokens.get(mint) ?? 0n;
    tokens.set(mint, sum);
  }
  return { lamports, tokens, fee, rent };
}

/**
 * What the order actually filled, from the wallet's balance changes: the input mint it spent and
 * the output mint it received (never below 0).
 *
 * A mint other than wrapped SOL: the change of the wallet's token accounts of that mint. Wrapped
 * SOL: the change of its wSOL token accounts PLUS the native SOL the swap moved, because a swap of
 * native SOL wraps it for the swap (System transfer + SyncNative into a wSOL account, closed
 * afterwards) and unwraps what it buys (CloseAccount), which moves lamports and leaves no token
 * change. The native part is the wallet's lamport change with what is not the swap added back:
 *
 *   SOL side = Δ wSOL tokens + Δ lamports + fees + tip + rent of token accounts created and left open
 *
 * so the transaction fees, a bundle's tip and the rent of new token accounts (the output's
 * associated account on a first buy, say) are never counted as SOL the order spent; a temporary
 * wSOL account's rent is paid and returned within the transaction and cancels out by itself.
 */
export function filledAmountsOf(inputMint: string, outputMint: string, changes: BalanceChanges): { filledInput: bigint; filledOutput: bigint } {
  const change = (mint: string): bigint => {
    const tokens = changes.tokens.get(mint) ?? 0n;
    return mint === WSOL_MINT ? tokens + changes.lamports + changes.fee + (changes.tip ?? 0n) + (changes.rent ?? 0n) : tokens;
  };
  const spent = -change(inputMint);
  const received = change(outputMint);
  return { filledInput: spent > 0n ? spent : 0n, filledOutput: received > 0n ? received : 0n };
}
