import { MEMO_PROGRAM_ID, TOKEN_PROGRAM_ID, base58, findProgramAddress, type AccountMetaInput, type InstructionInput } from '../../chain/index.js';
import { BorshReader, BorshWriter, anchorInstructionDiscriminator, hasDiscriminator, type RemainingAccountsSlice } from '../anchor-instruction.js';
import { whirlpoolTickArrayAddress } from '../pool-accounts.js';
import { Dex, SwapMode, type ConcentratedPool } from '../types.js';
import { invalidArgument } from '../../errors.js';
import { WHIRLPOOL_TICK_ARRAY_SIZE } from './tick-array.js';

/**
 * Orca Whirlpool `swap_v2` (orca-so/whirlpools programs/whirlpool/src/instructions/v2/swap.rs),
 * the swap that handles Token-2022 mints (each token's program passed, transfer fees and hooks);
 * `swap` (v1) takes SPL Token only. tidepool builds swap_v2 for every pool, as Orca's SDK does.
 *
 * Data: discriminator sha256("global:swap_v2")[0..8], amount u64, other_amount_threshold u64,
 * sqrt_price_limit u128 (0: the protocol's bound), amount_specified_is_input bool, a_to_b bool,
 * remaining_accounts_info Option<{slices: Vec<{accounts_type u8, length u8}>}>.
 *
 * Accounts: 0 token program A, 1 token program B, 2 memo program, 3 token authority (signer),
 * 4 whirlpool (w), 5 mint A, 6 mint B, 7 owner account A (w), 8 vault A (w), 9 owner account B (w),
 * 10 vault B (w), 11-13 tick arrays 0-2 (w), 14 oracle (w, PDA ["oracle", whirlpool]; read only
 * for adaptive-fee pools), then remaining accounts as the slices say.
 *
 * Tick arrays, as the SDK passes them: the array holding the current tick, the next two above,
 * and (as a SupplementalTickArrays slice of 2) the two below. The program merges and dedupes them
 * and picks the ones its swap direction walks, so one account list serves both directions and
 * survives the price crossing into a neighbouring array before the transaction lands; arrays
 * that do not exist are read as empty when passed at their PDA.
 */

export const WHIRLPOOL_SWAP_V2_DISCRIMINATOR = anchorInstructionDiscriminator('swap_v2');

/** `AccountsType` of the program's remaining-accounts slices. */
export const WhirlpoolAccountsType = {
  TransferHookA: 0,
  TransferHookB: 1,
  TransferHookReward: 2,
  TransferHookInput: 3,
  TransferHookIntermediate: 4,
  TransferHookOutput: 5,
  SupplementalTickArrays: 6,
  SupplementalTickArraysOne: 7,
  SupplementalTickArraysTwo: 8,
} as const;

/** Whirlpool `ErrorCode` values a swap fails with. */
export const WhirlpoolError = {
  SqrtPriceOutOfBounds: 6011,
  InvalidTickArraySequence: 6023,
  ZeroTradableAmount: 6035,
  AmountOutBelowMinimum: 6036,
  AmountInAboveMaximum: 6037,
  TickArraySequenceInvalidIndex: 6038,
  AmountCalcOverflow: 6039,
  RemainingAccountsInvalidSlice: 6048,
  RemainingAccountsInsufficient: 6049,
  DifferentWhirlpoolTickArrayAccount: 6056,
  PartialFillError: 6057,
} as const;

export interface WhirlpoolSwapV2Data {
  amount: bigint;
  otherAmountThreshold: bigint;
  sqrtPriceLimit: bigint;
  amountSpecifiedIsInput: boolean;
  aToB: boolean;
  /** null: None. */
  remainingAccounts: RemainingAccountsSlice[] | null;
}

export function encodeWhirlpoolSwapV2Data(args: WhirlpoolSwapV2Data): Uint8Array {
  const slices = args.remainingAccounts;
  const w = new BorshWriter(8 + 8 + 8 + 16 + 1 + 1 + 1 + (slices === null ? 0 : 4 + 2 * slices.length))
    .raw(WHIRLPOOL_SWAP_V2_DISCRIMINATOR)
    .u64(args.amount)
    .u64(args.otherAmountThreshold)
    .u128(args.sqrtPriceLimit)
    .bool(args.amountSpecifiedIsInput)
    .bool(args.aToB);
  if (slices === null) w.u8(0);
  else {
    w.u8(1).u32(slices.length);
    for (const s of slices) w.u8(s.accountsType).u8(s.length);
  }
  return w.done();
}

export function decodeWhirlpoolSwapV2Data(data: Uint8Array): WhirlpoolSwapV2Data | null {
  if (!hasDiscriminator(data, WHIRLPOOL_SWAP_V2_DISCRIMINATOR)) return null;
  const r = new BorshReader(data);
  r.at = 8;
  const amount = r.u64();
  const otherAmountThreshold = r.u64();
  const sqrtPriceLimit = r.u128();
  const amountSpecifiedIsInput = r.bool();
  const aToB = r.bool();
  const tag = r.u8();
  if (amount === undefined || otherAmountThreshold === undefined || sqrtPriceLimit === undefined) return null;
  if (amountSpecifiedIsInput === undefined || aToB === undefined || tag === undefined || tag > 1) return null;
  let remainingAccounts: RemainingAccountsSlice[] | null = null;
  if (tag === 1) {
    const n = r.u32();
    if (n === undefined || n > r.remaining / 2) return null;
    remainingAccounts = [];
    for (let i = 0; i < n; i++) remainingAccounts.push({ accountsType: r.u8()!, length: r.u8()! });
  }
  return { amount, otherAmountThreshold, sqrtPriceLimit, amountSpecifiedIsInput, aToB, remainingAccounts };
}

/** `["oracle", whirlpool]`. */
export function whirlpoolOracleAddress(programId: string, pool: string): string {
  return findProgramAddress(['oracle', base58.decodePubkey(pool)], programId).address;
}

/**
 * The five tick arrays the SDK passes, as start tick indexes: current, +1, +2, -1, -2 arrays.
 * The first three go in the fixed slots, the last two as supplemental accounts.
 */
export function whirlpoolSwapTickArrayStarts(pool: Pick<ConcentratedPool, 'tick' | 'tickSpacing'>): number[] {
  const span = pool.tickSpacing * WHIRLPOOL_TICK_ARRAY_SIZE;
  const start = Math.floor(pool.tick / span) * span;
  return [start, start + span, start + 2 * span, start - span, start - 2 * span];
}

export interface WhirlpoolSwapV2Accounts {
  programId: string;
  tokenProgramA: string;
  tokenProgramB: string;
  tokenAuthority: string;
  whirlpool: string;
  mintA: string;
  mintB: string;
  tokenOwnerAccountA: string;
  tokenVaultA: string;
  tokenOwnerAccountB: string;
  tokenVaultB: string;
  tickArrays: readonly [string, string, string];
  oracle: string;
  /** Appended after the oracle; their slices go in the data. */
  supplementalTickArrays?: readonly string[];
}

export function whirlpoolSwapV2Instruction(
  accounts: WhirlpoolSwapV2Accounts,
  args: Omit<WhirlpoolSwapV2Data, 'remainingAccounts'>,
): InstructionInput {
  const w = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: true });
  const r = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: false });
  const supplemental = accounts.supplementalTickArrays ?? [];
  const metas: AccountMetaInput[] = [
    r(accounts.tokenProgramA),
    r(accounts.tokenProgramB),
    r(MEMO_PROGRAM_ID),
    { pubkey: accounts.tokenAuthority, isSigner: true, isWritable: false },
    w(accounts.whirlpool),
    r(accounts.mintA),
    r(accounts.mintB),
    w(accounts.tokenOwnerAccountA),
    w(accounts.tokenVaultA),
    w(accounts.tokenOwnerAccountB),
    w(accounts.tokenVaultB),
    w(accounts.tickArrays[0]),
    w(accounts.tickArrays[1]),
    w(accounts.tickArrays[2]),
    w(accounts.oracle),
    ...supplemental.map(w),
  ];
  const remainingAccounts = supplemental.length === 0 ? null : [{ accountsType: WhirlpoolAccountsType.SupplementalTickArrays, length: supplemental.length }];
  return { programId: accounts.programId, accounts: metas, data: encodeWhirlpoolSwapV2Data({ ...args, remainingAccounts }) };
}

export interface WhirlpoolPoolSwapInput {
  programId: string;
  /** Decoded with its address. */
  pool: ConcentratedPool;
  owner: string;
  tokenAccountA: string;
  tokenAccountB: string;
  /** Default SPL Token. */
  tokenProgramA?: string;
  tokenProgramB?: string;
  aToB: boolean;
  mode: SwapMode;
  amount: bigint;
  otherAmountThreshold: bigint;
}

/** swap_v2 on a decoded pool, with the five tick arrays around its price and its oracle. */
export function whirlpoolPoolSwapInstruction(input: WhirlpoolPoolSwapInput): InstructionInput {
  const { pool } = input;
  if (pool.dex !== Dex.Whirlpool || pool.address === undefined) throw invalidArgument('pool', pool.dex, 'a Whirlpool with its address is needed');
  const address = pool.address;
  const arrays = whirlpoolSwapTickArrayStarts(pool).map((start) => whirlpoolTickArrayAddress(input.programId, address, start));
  return whirlpoolSwapV2Instruction(
    {
      programId: input.programId,
      tokenProgramA: input.tokenProgramA ?? TOKEN_PROGRAM_ID,
      tokenProgramB: input.tokenProgramB ?? TOKEN_PROGRAM_ID,
      tokenAuthority: input.owner,
      whirlpool: address,
      mintA: pool.tokenA,
      mintB: pool.tokenB,
      tokenOwnerAccountA: input.tokenAccountA,
      tokenVaultA: pool.vaultA,
      tokenOwnerAccountB: input.tokenAccountB,
      tokenVaultB: pool.vaultB,
      tickArrays: [arrays[0]!, arrays[1]!, arrays[2]!],
      oracle: whirlpoolOracleAddress(input.programId, address),
      supplementalTickArrays: [arrays[3]!, arrays[4]!],
    },
    { amount: input.amount, otherAmountThreshold: input.otherAmountThreshold, sqrtPriceLimit: 0n, amountSpecifiedIsInput: input.mode === SwapMode.ExactIn, aToB: input.aToB },
  );
}
