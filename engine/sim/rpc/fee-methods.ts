import { rentExemptMinimum } from '../known-accounts.js';
import { MAX_PRIORITIZATION_FEE_ACCOUNTS } from '../prioritization-fees.js';
import type { RpcMethodContext } from './rpc-backend.js';
import { bankSlot } from './rpc-configs.js';
import { DEFAULT_COMMITMENT } from './rpc-backend.js';
import { invalidParams, readCommitmentLevel, readStringList, readStruct, readUsize, trailingArgs, verifyPubkey } from './rpc-params.js';

/** getRecentPrioritizationFees, getMinimumBalanceForRentExemption. */

/**
 * `[[address ≤128]?]` → `[{prioritizationFee, slot}]` ascending by slot: the smallest
 * compute-unit price (micro-lamports) paid in each of the last 150 blocks, by any non-vote
 * transaction or, with addresses, by one write-locking them all (prioritization-fees.ts).
 */
export function getRecentPrioritizationFees(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 0, 1);
  const addresses = args[0] === undefined || args[0] === null ? [] : readStringList(args[0]);
  if (addresses.length > MAX_PRIORITIZATION_FEE_ACCOUNTS) {
    throw invalidParams(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
  }
  for (const a of addresses) verifyPubkey(a);
  const fees = ctx.backend.recentPrioritizationFees?.(addresses) ?? [];
  return '[' + fees.map((f) => '{"prioritizationFee":' + f.prioritizationFee.toString() + ',"slot":' + f.slot.toString() + '}').join(',') + ']';
}

/** `[dataLength usize, {commitment?}]` → u64: the rent-exempt balance of an account that size. */
export function getMinimumBalanceForRentExemption(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const length = readUsize(args[0]);
  const config = readStruct(args[1], 'CommitmentConfig');
  let commitment = DEFAULT_COMMITMENT;
  if (config !== null) for (const key in config) if (key === 'commitment' && config[key] !== null) commitment = readCommitmentLevel(config[key]);
  bankSlot(ctx.backend, commitment, undefined);
  return rentExemptMinimum(length).toString();
}
