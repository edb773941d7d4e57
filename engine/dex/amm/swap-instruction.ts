import { TOKEN_PROGRAM_ID, type AccountMetaInput, type InstructionInput } from '../../chain/index.js';
import { SwapMode } from '../types.js';
import type { AmmV4Keys } from './amm-info.js';

/**
 * Raydium AMM v4 swap instructions (raydium-amm program/src/instruction.rs; not Anchor: a u8 tag,
 * then two u64, little-endian; bytes past the 17 are ignored by the program).
 *
 *   tag 9  SwapBaseIn      amount_in, minimum_amount_out      17 or 18 accounts
 *   tag 11 SwapBaseOut     max_amount_in, amount_out          17 or 18 accounts
 *   tag 16 SwapBaseInV2    amount_in, minimum_amount_out      8 accounts
 *   tag 17 SwapBaseOutV2   max_amount_in, amount_out          8 accounts
 *
 * V2 accounts: 0 SPL Token program, 1 amm (w), 2 authority, 3 coin vault (w), 4 pc vault (w),
 * 5 user source token account (w), 6 user destination token account (w), 7 user owner (signer).
 * V1 inserts the AMM open orders (w) after the authority, optionally the target orders (w) after
 * it (18 accounts), and, after the pc vault, the OpenBook market program, market (w), bids (w),
 * asks (w), event queue (w), coin vault (w), pc vault (w) and vault signer. The program no longer
 * reads any of the market accounts (its order book was removed), only counts them.
 *
 * Which token goes in is not in the data: the program compares the user accounts' mints with the
 * vaults' (coin → pc or pc → coin). tidepool builds V2 by default, as Raydium's SDK does for v4
 * pools: 8 accounts instead of 17, so routes fit in legacy transactions more often; V1 is built
 * when the market keys are given.
 */

export const AmmV4Instruction = { SwapBaseIn: 9, SwapBaseOut: 11, SwapBaseInV2: 16, SwapBaseOutV2: 17 } as const;
export const AMM_V4_SWAP_DATA_SIZE = 17;

/** AmmError codes a swap can fail with (`ProgramError::Custom(n)`). */
export const AmmV4Error = {
  InvalidProgramAddress: 1,
  ExpectedAccount: 3,
  InvalidCoinVault: 4,
  InvalidPCVault: 5,
  InvalidSignAccount: 21,
  InvalidStatus: 22,
  WrongAccountsNumber: 24,
  InvalidAmmAccountOwner: 27,
  InvalidInput: 29,
  ExceededSlippage: 30,
  InvalidSplTokenProgram: 38,
  InsufficientFunds: 40,
  InvalidUserToken: 42,
  NotAllowed: 59,
} as const;

/** The OpenBook accounts of a V1 swap; unread by the program but counted. */
export interface AmmV4MarketKeys {
  openOrders: string;
  /** With it the instruction has 18 accounts (as Raydium's SDK sends), without 17. */
  targetOrders?: string;
  marketProgram: string;
  market: string;
  bids: string;
  asks: string;
  eventQueue: string;
  coinVault: string;
  pcVault: string;
  vaultSigner: string;
}

export interface AmmV4SwapData {
  tag: number;
  /** SwapBaseIn: amount_in; SwapBaseOut: max_amount_in. */
  first: bigint;
  /** SwapBaseIn: minimum_amount_out; SwapBaseOut: amount_out. */
  second: bigint;
}

export interface AmmV4SwapInput {
  keys: Pick<AmmV4Keys, 'programId' | 'pool' | 'authority' | 'coinVault' | 'pcVault'>;
  /** The signer whose token accounts these are. */
  owner: string;
  userSource: string;
  userDestination: string;
  mode: SwapMode;
  /** ExactIn: the input; ExactOut: the output. */
  amount: bigint;
  /** ExactIn: the minimum output; ExactOut: the maximum input. */
  otherAmountThreshold: bigint;
  /** V1 when given; V2 otherwise. */
  market?: AmmV4MarketKeys;
}

export function encodeAmmV4SwapData(tag: number, first: bigint, second: bigint): Uint8Array {
  const data = new Uint8Array(AMM_V4_SWAP_DATA_SIZE);
  const view = new DataView(data.buffer);
  data[0] = tag;
  view.setBigUint64(1, first, true);
  view.setBigUint64(9, second, true);
  return data;
}

/** Reads a swap instruction's data as the program does (trailing bytes ignored); null when it is no swap. */
export function decodeAmmV4SwapData(data: Uint8Array): AmmV4SwapData | null {
  const tag = data[0];
  if (data.length < AMM_V4_SWAP_DATA_SIZE) return null;
  if (tag !== AmmV4Instruction.SwapBaseIn && tag !== AmmV4Instruction.SwapBaseOut && tag !== AmmV4Instruction.SwapBaseInV2 && tag !== AmmV4Instruction.SwapBaseOutV2) {
    return null;
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return { tag, first: view.getBigUint64(1, true), second: view.getBigUint64(9, true) };
}

export function ammV4SwapInstruction(input: AmmV4SwapInput): InstructionInput {
  const exactIn = input.mode === SwapMode.ExactIn;
  const { keys, market } = input;
  const w = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: true });
  const r = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: false });
  const accounts: AccountMetaInput[] = [r(TOKEN_PROGRAM_ID), w(keys.pool), r(keys.authority)];
  let tag: number;
  if (market === undefined) {
    tag = exactIn ? AmmV4Instruction.SwapBaseInV2 : AmmV4Instruction.SwapBaseOutV2;
    accounts.push(w(keys.coinVault), w(keys.pcVault));
  } else {
    tag = exactIn ? AmmV4Instruction.SwapBaseIn : AmmV4Instruction.SwapBaseOut;
    accounts.push(w(market.openOrders));
    if (market.targetOrders !== undefined) accounts.push(w(market.targetOrders));
    accounts.push(w(keys.coinVault), w(keys.pcVault), r(market.marketProgram), w(market.market), w(market.bids), w(market.asks));
    accounts.push(w(market.eventQueue), w(market.coinVault), w(market.pcVault), r(market.vaultSigner));
  }
  accounts.push(w(input.userSource), w(input.userDestination), { pubkey: input.owner, isSigner: true, isWritable: false });
  const [first, second] = exactIn ? [input.amount, input.otherAmountThreshold] : [input.otherAmountThreshold, input.amount];
  return { programId: keys.programId, accounts, data: encodeAmmV4SwapData(tag, first, second) };
}
