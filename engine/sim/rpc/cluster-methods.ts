import type { EpochInfo } from '../chain-backend.js';
import { DEFAULT_SLOTS_PER_EPOCH } from '../known-accounts.js';
import { DEFAULT_COMMITMENT, writeRpcResponse, type RpcMethodContext } from './rpc-backend.js';
import { bankSlot, readContextConfig } from './rpc-configs.js';
import { readString, trailingArgs, verifyHash } from './rpc-params.js';

/**
 * getSlot, getBlockHeight, getEpochInfo, getEpochSchedule, getLatestBlockhash, isBlockhashValid,
 * getHealth, getVersion, getGenesisHash.
 */

/** `[{commitment?, minContextSlot?}]` → bare u64. */
export function getSlot(ctx: RpcMethodContext, params: unknown): string {
  const config = readContextConfig(trailingArgs(params, 0, 1)[0]);
  return bankSlot(ctx.backend, config.commitment ?? DEFAULT_COMMITMENT, config.minContextSlot).toString();
}

/** `[{commitment?, minContextSlot?}]` → bare u64. */
export function getBlockHeight(ctx: RpcMethodContext, params: unknown): string {
  const config = readContextConfig(trailingArgs(params, 0, 1)[0]);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  bankSlot(ctx.backend, commitment, config.minContextSlot);
  return ctx.backend.blockHeight(commitment).toString();
}

/**
 * `[{commitment?, minContextSlot?}]` → bare `{absoluteSlot, blockHeight, epoch, slotIndex,
 * slotsInEpoch, transactionCount}` (u64 numbers; transactionCount null when unknown).
 */
export function getEpochInfo(ctx: RpcMethodContext, params: unknown): string {
  const config = readContextConfig(trailingArgs(params, 0, 1)[0]);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const info: EpochInfo = ctx.backend.epochInfo?.(commitment) ?? epochInfoOf(slot, ctx.backend.blockHeight(commitment), BigInt(DEFAULT_SLOTS_PER_EPOCH));
  return (
    '{"absoluteSlot":' + info.absoluteSlot.toString() +
    ',"blockHeight":' + info.blockHeight.toString() +
    ',"epoch":' + info.epoch.toString() +
    ',"slotIndex":' + info.slotIndex.toString() +
    ',"slotsInEpoch":' + info.slotsInEpoch.toString() +
    ',"transactionCount":' + (info.transactionCount === null ? 'null' : info.transactionCount.toString()) +
    '}'
  );
}

function epochInfoOf(slot: bigint, blockHeight: bigint, slotsInEpoch: bigint): EpochInfo {
  return { epoch: slot / slotsInEpoch, slotIndex: slot % slotsInEpoch, slotsInEpoch, absoluteSlot: slot, blockHeight, transactionCount: null };
}

/** `[]` → `{firstNormalEpoch, firstNormalSlot, leaderScheduleSlotOffset, slotsPerEpoch, warmup}` (no warmup). */
export function getEpochSchedule(ctx: RpcMethodContext, params: unknown): string {
  trailingArgs(params, 0, 0);
  const slotsPerEpoch = ctx.backend.slotsPerEpoch?.() ?? DEFAULT_SLOTS_PER_EPOCH;
  return '{"firstNormalEpoch":0,"firstNormalSlot":0,"leaderScheduleSlotOffset":' + slotsPerEpoch + ',"slotsPerEpoch":' + slotsPerEpoch + ',"warmup":false}';
}

/** `[{commitment?, minContextSlot?}]` → RpcResponse<{blockhash, lastValidBlockHeight}>. */
export function getLatestBlockhash(ctx: RpcMethodContext, params: unknown): string {
  const config = readContextConfig(trailingArgs(params, 0, 1)[0]);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const info = ctx.backend.latestBlockhash(commitment);
  const value =
    '{"blockhash":' + JSON.stringify(info.blockhash) + ',"lastValidBlockHeight":' + info.lastValidBlockHeight.toString() + '}';
  return writeRpcResponse(ctx, slot, value);
}

/** `[blockhash, {commitment?, minContextSlot?}]` → RpcResponse<bool>. */
export function isBlockhashValid(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const blockhash = readString(args[0]);
  const config = readContextConfig(args[1]);
  verifyHash(blockhash);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const backend = ctx.backend;
  const valid =
    backend.isBlockhashValid !== undefined
      ? backend.isBlockhashValid(blockhash, commitment)
      : backend.latestBlockhash(commitment).blockhash === blockhash;
  return writeRpcResponse(ctx, slot, valid ? 'true' : 'false');
}

/** `[]` → `"ok"`. */
export function getHealth(_ctx: RpcMethodContext, params: unknown): string {
  trailingArgs(params, 0, 0);
  return '"ok"';
}

/** `[]` → `{"feature-set", "solana-core"}`. */
export function getVersion(ctx: RpcMethodContext, params: unknown): string {
  trailingArgs(params, 0, 0);
  return writeVersion(ctx);
}

export function writeVersion(ctx: Pick<RpcMethodContext, 'node'>): string {
  return '{"feature-set":' + ctx.node.featureSet + ',"solana-core":' + JSON.stringify(ctx.node.solanaCore) + '}';
}

/** `[]` → base58 genesis hash. */
export function getGenesisHash(ctx: RpcMethodContext, params: unknown): string {
  trailingArgs(params, 0, 0);
  return JSON.stringify(ctx.backend.genesisHash?.() ?? ctx.node.genesisHash);
}
