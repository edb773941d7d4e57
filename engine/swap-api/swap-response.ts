/**
 * The bodies of `POST /swap` and `POST /swap-instructions` (Jupiter Swap API v1; the official
 * client's `SwapResponse` and `SwapInstructionsResponse`): a base64 transaction for the user to
 * sign, or its instructions with base58 keys and base64 data, in the order a client assembles them
 * (compute budget, setup, swap, cleanup; `otherInstructions`, a Jito tip, at the end).
 *
 * Fields beyond the official shape (clients ignore them): `otherAmountThreshold` (the bound the
 * transaction itself guarantees: ExactIn, the least output; ExactOut, the most input),
 * `computeUnitLimit`, `simulationError` (the simulation of `dynamicComputeUnitLimit` failed: the
 * transaction is still given, with the route's budget), and on /swap-instructions
 * `swapInstructions` (every hop in order; see below).
 *
 * A route of several hops has several swap instructions (one per DEX program: there is no router
 * program combining them). `swapInstruction` is then the last hop and the earlier hops close
 * `setupInstructions`, so the documented assembly order runs them in order. Every amount is fixed
 * when the transaction is built, so hop k+1 sells hop k's minimum output: the transaction's
 * `otherAmountThreshold` compounds the quote's slippage over the hops (it is below the quote's own
 * on such a route), and a hop that does better than its minimum leaves the surplus of the
 * intermediate token in the wallet. A direct route's bound is the quote's slippage, once.
 */
import { base58, type InstructionInput, type PubkeyInput } from '../chain/index.js';

export interface AccountMetaJson {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface InstructionJson {
  programId: string;
  accounts: AccountMetaJson[];
  /** base64. */
  data: string;
}

export interface SwapResponse {
  /** base64 of the serialized transaction, signatures empty. */
  swapTransaction: string;
  lastValidBlockHeight: number;
  /** The priority fee the transaction pays (compute unit price × limit), lamports. */
  prioritizationFeeLamports: number;
  otherAmountThreshold: string;
  computeUnitLimit: number;
  simulationError?: string;
}

export interface SwapInstructionsResponse {
  otherInstructions: InstructionJson[];
  computeBudgetInstructions: InstructionJson[];
  setupInstructions: InstructionJson[];
  swapInstruction: InstructionJson;
  cleanupInstruction?: InstructionJson;
  addressLookupTableAddresses: string[];
  /** Every hop's swap instruction, in route order (the earlier ones are also in setupInstructions). */
  swapInstructions: InstructionJson[];
  otherAmountThreshold: string;
  computeUnitLimit: number;
  prioritizationFeeLamports: number;
  simulationError?: string;
}

function keyText(k: PubkeyInput): string {
  return typeof k === 'string' ? k : base58.encode(k);
}

export function instructionToJson(ix: InstructionInput): InstructionJson {
  return {
    programId: keyText(ix.programId),
    accounts: ix.accounts.map((a) => ({ pubkey: keyText(a.pubkey), isSigner: a.isSigner, isWritable: a.isWritable })),
    data: Buffer.from(ix.data ?? new Uint8Array(0)).toString('base64'),
  };
}
