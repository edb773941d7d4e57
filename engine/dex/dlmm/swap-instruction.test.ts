import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { MEMO_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../chain/program-addresses.js';
import { Prng } from '../../prng.js';
import { dlmmBinArrayAddress } from '../pool-accounts.js';
import { METEORA_DLMM_PROGRAM_ID } from '../program-ids.js';
import { plainOurs, plainWeb3 } from '../testing/instructions.js';
import { SwapMode } from '../types.js';
import { withBinArrayBit } from './bin-array-bitmap.js';
import type { DlmmLbPair } from './lb-pair.js';
import {
  DLMM_SWAP2_DISCRIMINATOR,
  DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR,
  decodeDlmmSwap2Data,
  dlmmBitmapExtensionAddress,
  dlmmEventAuthority,
  dlmmPoolSwapInstruction,
  dlmmSwapBinArrays,
} from './swap-instruction.js';
import { randomScenario, Prng as PoolPrng } from './testing/random-pools.js';

const require = createRequire(import.meta.url);
interface KeyLike {
  toBase58(): string;
}
type Web3Ix = Parameters<typeof plainWeb3>[0];
interface MethodsBuilder {
  accountsPartial(accounts: Record<string, unknown>): MethodsBuilder;
  remainingAccounts(accounts: { pubkey: unknown; isSigner: boolean; isWritable: boolean }[]): MethodsBuilder;
  instruction(): Promise<Web3Ix>;
}
const sdk = require('@meteora-ag/dlmm') as {
  createProgram(connection: unknown): { methods: Record<string, (...args: unknown[]) => MethodsBuilder>; programId: KeyLike };
  IDL: { instructions: { name: string; discriminator: number[] }[] };
  deriveEventAuthority(programId: unknown): [KeyLike, number];
  deriveBinArrayBitmapExtension(lbPair: unknown, programId: unknown): [KeyLike, number];
};
const { Connection, PublicKey } = require('@solana/web3.js') as { Connection: new (url: string) => unknown; PublicKey: new (v: string) => KeyLike };
const BN = require('bn.js') as new (v: string) => unknown;
// A Connection makes no request until used; building an instruction never uses it.
const program = sdk.createProgram(new Connection('http://127.0.0.1:1'));

const rng = new Prng(31);
const key = (): string => base58.encode(rng.bytes(32));
const u64 = (): bigint => new DataView(rng.bytes(8).buffer).getBigUint64(0, true);

function pair(): DlmmLbPair {
  const s = randomScenario(new PoolPrng(rng.range(1, 1_000_000)));
  return { ...s.pool, address: key(), reserveX: key(), reserveY: key(), oracle: key() };
}

describe('Meteora DLMM swap2 / swap_exact_out2', () => {
  it("equal the SDK's Anchor builder (as DLMM.swap / swapExactOut call it) byte for byte", async () => {
    expect(program.programId.toBase58()).toBe(METEORA_DLMM_PROGRAM_ID);
    for (let i = 0; i < 12; i++) {
      const p = pair();
      const [user, accountX, accountY] = [key(), key(), key()];
      const aToB = i % 2 === 0;
      const exactIn = i % 4 < 2;
      const [amount, threshold] = [u64(), u64()];
      const tokenYProgram = i % 3 === 0 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
      const arrays = dlmmSwapBinArrays(p, METEORA_DLMM_PROGRAM_ID, aToB);
      const ours = dlmmPoolSwapInstruction({
        programId: METEORA_DLMM_PROGRAM_ID,
        pool: p,
        owner: user,
        tokenAccountA: accountX,
        tokenAccountB: accountY,
        tokenProgramB: tokenYProgram,
        aToB,
        mode: exactIn ? SwapMode.ExactIn : SwapMode.ExactOut,
        amount,
        otherAmountThreshold: threshold,
        binArrays: arrays,
      });
      const method = exactIn
        ? program.methods.swap2!(new BN(amount.toString()), new BN(threshold.toString()), { slices: [] })
        : program.methods.swapExactOut2!(new BN(threshold.toString()), new BN(amount.toString()), { slices: [] });
      const ref = await method
        .accountsPartial({
          lbPair: new PublicKey(p.address!),
          reserveX: new PublicKey(p.reserveX),
          reserveY: new PublicKey(p.reserveY),
          tokenXMint: new PublicKey(p.tokenA),
          tokenYMint: new PublicKey(p.tokenB),
          tokenXProgram: new PublicKey(TOKEN_PROGRAM_ID),
          tokenYProgram: new PublicKey(tokenYProgram),
          user: new PublicKey(user),
          userTokenIn: new PublicKey(aToB ? accountX : accountY),
          userTokenOut: new PublicKey(aToB ? accountY : accountX),
          binArrayBitmapExtension: null,
          oracle: new PublicKey(p.oracle),
          hostFeeIn: null,
          memoProgram: new PublicKey(MEMO_PROGRAM_ID),
        })
        .remainingAccounts([])
        .remainingAccounts(arrays.map((a) => ({ pubkey: new PublicKey(a), isSigner: false, isWritable: true })))
        .instruction();
      expect(plainOurs(ours)).toEqual(plainWeb3(ref));
      expect(decodeDlmmSwap2Data(ours.data!)).toEqual(
        exactIn ? { exactIn, first: amount, second: threshold, slices: [] } : { exactIn, first: threshold, second: amount, slices: [] },
      );
    }
  });

  it('uses the IDL discriminators and the SDK PDAs', () => {
    const disc = (name: string) => Uint8Array.from(sdk.IDL.instructions.find((x) => x.name === name)!.discriminator);
    expect(DLMM_SWAP2_DISCRIMINATOR).toEqual(disc('swap2'));
    expect(DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR).toEqual(disc('swap_exact_out2'));
    const programKey = new PublicKey(METEORA_DLMM_PROGRAM_ID);
    expect(dlmmEventAuthority(METEORA_DLMM_PROGRAM_ID)).toBe(sdk.deriveEventAuthority(programKey)[0].toBase58());
    const address = key();
    expect(dlmmBitmapExtensionAddress(METEORA_DLMM_PROGRAM_ID, address)).toBe(sdk.deriveBinArrayBitmapExtension(new PublicKey(address), programKey)[0].toBase58());
  });

  it('walks the bin arrays with liquidity from the active one in the swap direction', () => {
    let bitmap: bigint[] = new Array<bigint>(16).fill(0n);
    for (const index of [-3, -1, 0, 2, 5]) bitmap = withBinArrayBit(bitmap, index, true);
    const p = { ...pair(), activeId: 10, binArrayBitmap: bitmap };
    const at = (index: number) => dlmmBinArrayAddress(METEORA_DLMM_PROGRAM_ID, p.address!, index);
    expect(dlmmSwapBinArrays(p, METEORA_DLMM_PROGRAM_ID, true)).toEqual([at(0), at(-1), at(-3)]);
    expect(dlmmSwapBinArrays(p, METEORA_DLMM_PROGRAM_ID, false)).toEqual([at(0), at(2), at(5)]);
    expect(dlmmSwapBinArrays({ ...p, activeId: 75 }, METEORA_DLMM_PROGRAM_ID, true, 2)).toEqual([at(0), at(-1)]);
  });
});
