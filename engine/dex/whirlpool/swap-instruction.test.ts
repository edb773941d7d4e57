import { address, createNoopSigner } from '@solana/kit';
import { AccountsType, getOracleAddress, getSwapV2Instruction, getTickArrayAddress } from '@orca-so/whirlpools-client';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { MEMO_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../chain/program-addresses.js';
import { Prng } from '../../prng.js';
import { whirlpoolTickArrayAddress } from '../pool-accounts.js';
import { ORCA_WHIRLPOOL_PROGRAM_ID } from '../program-ids.js';
import { plainKit, plainOurs } from '../testing/instructions.js';
import { Dex, SwapMode, type ConcentratedPool } from '../types.js';
import {
  WhirlpoolAccountsType,
  decodeWhirlpoolSwapV2Data,
  whirlpoolOracleAddress,
  whirlpoolPoolSwapInstruction,
  whirlpoolSwapTickArrayStarts,
} from './swap-instruction.js';

const rng = new Prng(2024);
const key = (): string => base58.encode(rng.bytes(32));
const u64 = (): bigint => new DataView(rng.bytes(8).buffer).getBigUint64(0, true);
const PROGRAM = address(ORCA_WHIRLPOOL_PROGRAM_ID);

function pool(tick: number, tickSpacing: number): ConcentratedPool {
  return {
    dex: Dex.Whirlpool,
    address: key(),
    tokenA: key(),
    tokenB: key(),
    sqrtPrice: 1n << 64n,
    tick,
    tickSpacing,
    liquidity: 1n,
    feeRate: 3000,
    vaultA: key(),
    vaultB: key(),
  };
}

describe('Orca Whirlpool swap_v2', () => {
  it("equals whirlpools-client's getSwapV2Instruction with the SDK's five tick arrays, byte for byte", async () => {
    for (let i = 0; i < 16; i++) {
      const p = pool(rng.range(-40_000, 40_000), [1, 8, 64, 128][i % 4]!);
      const [owner, accountA, accountB] = [key(), key(), key()];
      const aToB = i % 2 === 0;
      const exactIn = i % 4 < 2;
      const [amount, threshold] = [u64(), u64()];
      const tokenProgramB = i % 3 === 0 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
      const ours = whirlpoolPoolSwapInstruction({
        programId: ORCA_WHIRLPOOL_PROGRAM_ID,
        pool: p,
        owner,
        tokenAccountA: accountA,
        tokenAccountB: accountB,
        tokenProgramB,
        aToB,
        mode: exactIn ? SwapMode.ExactIn : SwapMode.ExactOut,
        amount,
        otherAmountThreshold: threshold,
      });
      // As @orca-so/whirlpools swapInstructions builds it (ts-sdk/whirlpool/src/swap.ts).
      const starts = whirlpoolSwapTickArrayStarts(p);
      const arrays = await Promise.all(starts.map(async (s) => (await getTickArrayAddress(address(p.address!), s, PROGRAM))[0]));
      const [oracle] = await getOracleAddress(address(p.address!), PROGRAM);
      const sdk = getSwapV2Instruction({
        tokenProgramA: address(TOKEN_PROGRAM_ID),
        tokenProgramB: address(tokenProgramB),
        memoProgram: address(MEMO_PROGRAM_ID),
        tokenAuthority: createNoopSigner(address(owner)),
        whirlpool: address(p.address!),
        tokenMintA: address(p.tokenA),
        tokenMintB: address(p.tokenB),
        tokenOwnerAccountA: address(accountA),
        tokenOwnerAccountB: address(accountB),
        tokenVaultA: address(p.vaultA),
        tokenVaultB: address(p.vaultB),
        tickArray0: arrays[0]!,
        tickArray1: arrays[1]!,
        tickArray2: arrays[2]!,
        amount,
        otherAmountThreshold: threshold,
        sqrtPriceLimit: 0,
        amountSpecifiedIsInput: exactIn,
        aToB,
        oracle,
        remainingAccountsInfo: { slices: [{ accountsType: AccountsType.SupplementalTickArrays, length: 2 }] },
      });
      const sdkPlain = plainKit(sdk);
      sdkPlain.accounts.push(...[arrays[3]!, arrays[4]!].map((a) => ({ pubkey: a, isSigner: false, isWritable: true })));
      expect(plainOurs(ours)).toEqual(sdkPlain);
      expect(whirlpoolOracleAddress(ORCA_WHIRLPOOL_PROGRAM_ID, p.address!)).toBe(oracle);
      expect(decodeWhirlpoolSwapV2Data(ours.data!)).toEqual({
        amount,
        otherAmountThreshold: threshold,
        sqrtPriceLimit: 0n,
        amountSpecifiedIsInput: exactIn,
        aToB,
        remainingAccounts: [{ accountsType: WhirlpoolAccountsType.SupplementalTickArrays, length: 2 }],
      });
    }
    expect(WhirlpoolAccountsType.SupplementalTickArrays).toBe(AccountsType.SupplementalTickArrays);
  });

  it('derives tick array addresses as the client does, and rejects malformed data', async () => {
    const p = pool(-1234, 64);
    for (const start of whirlpoolSwapTickArrayStarts(p)) {
      expect(whirlpoolTickArrayAddress(ORCA_WHIRLPOOL_PROGRAM_ID, p.address!, start)).toBe((await getTickArrayAddress(address(p.address!), start, PROGRAM))[0]);
    }
    expect(whirlpoolSwapTickArrayStarts(p)).toEqual([-5632, 0, 5632, -11264, -16896]);
    const ix = whirlpoolPoolSwapInstruction({ programId: ORCA_WHIRLPOOL_PROGRAM_ID, pool: p, owner: key(), tokenAccountA: key(), tokenAccountB: key(), aToB: true, mode: SwapMode.ExactIn, amount: 1n, otherAmountThreshold: 0n });
    expect(decodeWhirlpoolSwapV2Data(ix.data!.subarray(0, 20))).toBeNull();
    const bad = ix.data!.slice();
    bad[42] = 2; // the Option tag
    expect(decodeWhirlpoolSwapV2Data(bad)).toBeNull();
  });
});
