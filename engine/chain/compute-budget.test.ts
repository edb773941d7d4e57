import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import {
  ComputeBudgetTag,
  decodeComputeBudgetInstruction,
  prioritizationFeeLamports,
  setComputeUnitLimitInstruction,
  setComputeUnitPriceInstruction,
} from './compute-budget.js';
import { COMPUTE_BUDGET_PROGRAM_ID } from './program-addresses.js';

// @solana/web3.js (installed with the DEX SDKs) builds the same instructions: the reference.
const require = createRequire(import.meta.url);
const web3 = require('@solana/web3.js') as {
  ComputeBudgetProgram: {
    programId: { toBase58(): string };
    setComputeUnitLimit(p: { units: number }): { data: Buffer; keys: unknown[] };
    setComputeUnitPrice(p: { microLamports: bigint | number }): { data: Buffer; keys: unknown[] };
  };
};

describe('Compute Budget instructions', () => {
  it('encode SetComputeUnitLimit and SetComputeUnitPrice as web3.js does', () => {
    expect(COMPUTE_BUDGET_PROGRAM_ID).toBe(web3.ComputeBudgetProgram.programId.toBase58());
    for (const units of [0, 1, 200_000, 1_400_000, 0xffff_ffff]) {
      const ours = setComputeUnitLimitInstruction(units);
      const ref = web3.ComputeBudgetProgram.setComputeUnitLimit({ units });
      expect(Buffer.from(ours.data!).toString('hex')).toBe(ref.data.toString('hex'));
      expect(ours.accounts).toEqual([]);
      expect(decodeComputeBudgetInstruction(ours.data!)).toEqual({ kind: 'SetComputeUnitLimit', units });
    }
    for (const price of [0n, 1n, 50_000n, (1n << 64n) - 1n]) {
      const ours = setComputeUnitPriceInstruction(price);
      const ref = web3.ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price });
      expect(Buffer.from(ours.data!).toString('hex')).toBe(ref.data.toString('hex'));
      expect(decodeComputeBudgetInstruction(ours.data!)).toEqual({ kind: 'SetComputeUnitPrice', microLamports: price });
    }
  });

  it('refuse values outside their integer type, and decode nothing else', () => {
    expect(() => setComputeUnitLimitInstruction(-1)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'units', value: -1 } }));
    expect(() => setComputeUnitLimitInstruction(2 ** 32)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'units', value: 2 ** 32 } }));
    expect(() => setComputeUnitPriceInstruction(1n << 64n)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'microLamports', value: '18446744073709551616' } }));
    expect(decodeComputeBudgetInstruction(Uint8Array.of(ComputeBudgetTag.SetComputeUnitPrice, 1, 2))).toBeNull();
    expect(decodeComputeBudgetInstruction(Uint8Array.of(9, 0, 0, 0, 0))).toBeNull();
    expect(decodeComputeBudgetInstruction(new Uint8Array(0))).toBeNull();
  });

  it('price the priority fee as the runtime does (rounded up)', () => {
    expect(prioritizationFeeLamports(0n, 200_000)).toBe(0n);
    expect(prioritizationFeeLamports(1n, 200_000)).toBe(1n);
    expect(prioritizationFeeLamports(10_000n, 300_000)).toBe(3000n);
    expect(prioritizationFeeLamports(7n, 1)).toBe(1n);
  });
});
