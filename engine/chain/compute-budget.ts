import { invalidArgument } from '../errors.js';
import { COMPUTE_BUDGET_PROGRAM_ID } from './program-addresses.js';
import type { InstructionInput } from './transaction-builder.js';

/**
 * The Compute Budget program's instructions (no accounts; Borsh data: a u8 tag, then the value,
 * little-endian), as the runtime reads them before executing a transaction:
 *
 *   1 RequestHeapFrame               u32 bytes
 *   2 SetComputeUnitLimit            u32 units (capped at 1,400,000 by the runtime)
 *   3 SetComputeUnitPrice            u64 micro-lamports per compute unit
 *   4 SetLoadedAccountsDataSizeLimit u32 bytes
 *
 * A transaction may carry each at most once. The prioritization fee it pays is
 * ceil(unit price × unit limit / 1,000,000) lamports on top of 5,000 per signature.
 */

export const ComputeBudgetTag = {
  RequestHeapFrame: 1,
  SetComputeUnitLimit: 2,
  SetComputeUnitPrice: 3,
  SetLoadedAccountsDataSizeLimit: 4,
} as const;

/** The runtime's cap on a transaction's compute units. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
const U64_MAX = (1n << 64n) - 1n;

export function setComputeUnitLimitInstruction(units: number): InstructionInput {
  if (!Number.isInteger(units) || units < 0 || units > 0xffff_ffff) throw invalidArgument('units', units, `compute unit limit must be a u32, got ${units}`);
  const data = new Uint8Array(5);
  data[0] = ComputeBudgetTag.SetComputeUnitLimit;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programId: COMPUTE_BUDGET_PROGRAM_ID, accounts: [], data };
}

export function setComputeUnitPriceInstruction(microLamports: bigint): InstructionInput {
  if (microLamports < 0n || microLamports > U64_MAX) throw invalidArgument('microLamports', microLamports.toString(), `compute unit price must be a u64, got ${microLamports}`);
  const data = new Uint8Array(9);
  data[0] = ComputeBudgetTag.SetComputeUnitPrice;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programId: COMPUTE_BUDGET_PROGRAM_ID, accounts: [], data };
}

export type ComputeBudgetInstruction =
  | { kind: 'SetComputeUnitLimit'; units: number }
  | { kind: 'SetComputeUnitPrice'; microLamports: bigint }
  | { kind: 'RequestHeapFrame'; bytes: number }
  | { kind: 'SetLoadedAccountsDataSizeLimit'; bytes: number };

/** Decodes a Compute Budget instruction's data; null when it is not one (wrong tag or length). */
export function decodeComputeBudgetInstruction(data: Uint8Array): ComputeBudgetInstruction | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (data[0]) {
    case ComputeBudgetTag.SetComputeUnitPrice:
      return data.length === 9 ? { kind: 'SetComputeUnitPrice', microLamports: view.getBigUint64(1, true) } : null;
    case ComputeBudgetTag.SetComputeUnitLimit:
      return data.length === 5 ? { kind: 'SetComputeUnitLimit', units: view.getUint32(1, true) } : null;
    case ComputeBudgetTag.RequestHeapFrame:
      return data.length === 5 ? { kind: 'RequestHeapFrame', bytes: view.getUint32(1, true) } : null;
    case ComputeBudgetTag.SetLoadedAccountsDataSizeLimit:
      return data.length === 5 ? { kind: 'SetLoadedAccountsDataSizeLimit', bytes: view.getUint32(1, true) } : null;
    default:
      return null;
  }
}

/** Lamports a transaction pays for priority: ceil(price × limit / 1e6). */
export function prioritizationFeeLamports(microLamportsPerUnit: bigint, unitLimit: number): bigint {
  return (microLamportsPerUnit * BigInt(unitLimit) + 999_999n) / 1_000_000n;
}
