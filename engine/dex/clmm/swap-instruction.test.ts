import { PublicKey } from '@solana/web3.js';
import { toBN, ClmmInstrument, getPdaExBitmapAccount, getPdaObservationAccount, getPdaTickArrayAddress } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { Prng } from '../../prng.js';
import { clmmTickArrayAddress } from '../pool-accounts.js';
import { RAYDIUM_CLMM_PROGRAM_ID } from '../program-ids.js';
import { plainOurs, plainWeb3 } from '../testing/instructions.js';
import { Dex, SwapMode, type ConcentratedPool } from '../types.js';
import { setTickArrayBit } from './clmm-pool.js';
import {
  CLMM_SWAP_V2_DATA_SIZE,
  clmmBitmapExtensionAddress,
  clmmObservationAddress,
  clmmPoolSwapInstruction,
  clmmSwapTickArrays,
  decodeClmmSwapV2Data,
} from './swap-instruction.js';

const rng = new Prng(909);
const key = (): string => base58.encode(rng.bytes(32));
const pk = (k: string) => new PublicKey(k);
const bn = (v: bigint) => toBN(v.toString());
const u64 = (): bigint => new DataView(rng.bytes(8).buffer).getBigUint64(0, true);

function pool(tick: number, initialized: number[]): ConcentratedPool {
  const bitmap = new Array<bigint>(16).fill(0n);
  for (const start of initialized) setTickArrayBit(bitmap, start, 10, true);
  return {
    dex: Dex.Clmm,
    address: key(),
    tokenA: key(),
    tokenB: key(),
    sqrtPrice: 1n << 64n,
    tick,
    tickSpacing: 10,
    liquidity: 1n,
    feeRate: 500,
    vaultA: key(),
    vaultB: key(),
    ammConfig: key(),
    observationKey: key(),
    tickArrayBitmap: bitmap,
  };
}

describe('Raydium CLMM swap_v2', () => {
  it('equals the Raydium SDK v2 makeSwapBaseIn/OutInstructions byte for byte', () => {
    for (let i = 0; i < 16; i++) {
      const p = pool(rng.range(-3000, 3000), [-1200, -600, 0, 600, 1200]);
      const [owner, accountA, accountB] = [key(), key(), key()];
      const aToB = i % 2 === 0;
      const exactIn = i % 4 < 2;
      const [amount, threshold] = [u64(), u64()];
      const arrays = clmmSwapTickArrays(p, RAYDIUM_CLMM_PROGRAM_ID, aToB);
      const ours = clmmPoolSwapInstruction({
        programId: RAYDIUM_CLMM_PROGRAM_ID,
        pool: p,
        owner,
        tokenAccountA: accountA,
        tokenAccountB: accountB,
        aToB,
        mode: exactIn ? SwapMode.ExactIn : SwapMode.ExactOut,
        amount,
        otherAmountThreshold: threshold,
      });
      const poolInfo = {
        programId: RAYDIUM_CLMM_PROGRAM_ID,
        id: p.address!,
        mintA: { address: p.tokenA },
        mintB: { address: p.tokenB },
        config: { id: p.ammConfig! },
      } as unknown as Parameters<typeof ClmmInstrument.makeSwapBaseInInstructions>[0]['poolInfo'];
      const common = {
        poolInfo,
        poolKeys: { vault: { A: p.vaultA, B: p.vaultB } } as Parameters<typeof ClmmInstrument.makeSwapBaseInInstructions>[0]['poolKeys'],
        observationId: pk(p.observationKey!),
        ownerInfo: { wallet: pk(owner), tokenAccountA: pk(accountA), tokenAccountB: pk(accountB) },
        sqrtPriceLimitX64: bn(0n),
        remainingAccounts: arrays.map(pk),
      };
      const sdk = exactIn
        ? ClmmInstrument.makeSwapBaseInInstructions({ ...common, inputMint: pk(aToB ? p.tokenA : p.tokenB), amountIn: bn(amount), amountOutMin: bn(threshold) })
        : ClmmInstrument.makeSwapBaseOutInstructions({ ...common, outputMint: pk(aToB ? p.tokenB : p.tokenA), amountOut: bn(amount), amountInMax: bn(threshold) });
      expect(plainOurs(ours)).toEqual(plainWeb3(sdk.instructions[0]!));
      expect(ours.data).toHaveLength(CLMM_SWAP_V2_DATA_SIZE);
      expect(decodeClmmSwapV2Data(ours.data!)).toEqual({ amount, otherAmountThreshold: threshold, sqrtPriceLimitX64: 0n, isBaseInput: exactIn });
    }
  });

  it('derives the PDAs the SDK derives', () => {
    const address = key();
    const program = pk(RAYDIUM_CLMM_PROGRAM_ID);
    expect(clmmBitmapExtensionAddress(RAYDIUM_CLMM_PROGRAM_ID, address)).toBe(getPdaExBitmapAccount(program, pk(address)).publicKey.toBase58());
    expect(clmmObservationAddress(RAYDIUM_CLMM_PROGRAM_ID, address)).toBe(getPdaObservationAccount(program, pk(address)).publicKey.toBase58());
    for (const start of [-600, 0, 600, 1200]) {
      expect(clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, address, start)).toBe(getPdaTickArrayAddress(program, pk(address), start).publicKey.toBase58());
    }
  });

  it('picks the initialized tick arrays in the swap order, starting at the current or first initialized one', () => {
    const p = pool(650, [-1200, 0, 600, 1800, 2400]);
    const at = (start: number) => clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, p.address!, start);
    expect(clmmSwapTickArrays(p, RAYDIUM_CLMM_PROGRAM_ID, true)).toEqual([at(600), at(0), at(-1200)]);
    expect(clmmSwapTickArrays(p, RAYDIUM_CLMM_PROGRAM_ID, false)).toEqual([at(600), at(1800), at(2400)]);
    // The current array (1200..1799) holds no initialized tick: the first one that way leads.
    const q = { ...p, tick: 1300 };
    expect(clmmSwapTickArrays(q, RAYDIUM_CLMM_PROGRAM_ID, true, 2)).toEqual([at(600), at(0)]);
    expect(clmmSwapTickArrays(q, RAYDIUM_CLMM_PROGRAM_ID, false)).toEqual([at(1800), at(2400)]);
  });
});
