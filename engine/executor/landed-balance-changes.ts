import { setTimeout as sleep } from 'node:timers/promises';

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
  for (const t of landed) {
    lamports += t.lamports;
    fee += t.fee;
  }
  const tokens = new Map<string, bigint>();
  for (const mint of mints) {
    let sum = 0n;
    for (const t of landed) sum += t.tokens.get(mint) ?? 0n;
    tokens.set(mint, sum);
  }
  return { lamports, tokens, fee };
}

/**
 * What the order actually filled, from the wallet's balance changes: the input mint it spent and
 * the output mint it received (token accounts only; never below 0).
 */
export function filledAmountsOf(inputMint: string, outputMint: string, changes: BalanceChanges): { filledInput: bigint; filledOutput: bigint } {
  const spent = -(changes.tokens.get(inputMint) ?? 0n);
  const received = changes.tokens.get(outputMint) ?? 0n;
  return { filledInput: spent > 0n ? spent : 0n, filledOutput: received > 0n ? received : 0n };
}
