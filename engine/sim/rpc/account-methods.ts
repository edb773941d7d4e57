import { DEFAULT_COMMITMENT, writeRpcResponse, type RpcMethodContext } from './rpc-backend.js';
import { bankSlot, readAccountInfoConfig, readCommitmentConfig, readContextConfig } from './rpc-configs.js';
import { invalidParams, readString, readStringList, trailingArgs, verifyPubkey } from './rpc-params.js';
import { writeF64 } from './json-text.js';
import { checkBase58Size, writeUiAccountSorted } from './ui-account.js';

/**
 * getAccountInfo, getMultipleAccounts, getBalance, getTokenAccountBalance: parameters, checks and
 * results in the node's order (parse every parameter, verify keys, pick the bank, encode).
 */

/** `MAX_MULTIPLE_ACCOUNTS`. */
export const MAX_MULTIPLE_ACCOUNTS = 100;

/** `[pubkey, {encoding?, dataSlice?, commitment?, minContextSlot?}]` → RpcResponse<UiAccount | null>; default encoding binary. */
export function getAccountInfo(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const address = readString(args[0]);
  const config = readAccountInfoConfig(args[1]);
  verifyPubkey(address);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const encoding = config.encoding ?? 'binary';
  const account = ctx.backend.getAccount(address, commitment);
  if (account === null) return writeRpcResponse(ctx, slot, 'null');
  checkBase58Size(account.data.length, encoding, config.slice);
  return writeRpcResponse(ctx, slot, writeUiAccountSorted(account, encoding, config.slice));
}

/** `[[pubkey ≤100], config]` → RpcResponse<(UiAccount | null)[]> in request order; default encoding base64. */
export function getMultipleAccounts(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const addresses = readStringList(args[0]);
  const config = readAccountInfoConfig(args[1]);
  if (addresses.length > MAX_MULTIPLE_ACCOUNTS) {
    throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
  }
  for (let i = 0; i < addresses.length; i++) verifyPubkey(addresses[i] as string);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const encoding = config.encoding ?? 'base64';
  const slice = config.slice;
  let value = '[';
  for (let i = 0; i < addresses.length; i++) {
    if (i > 0) value += ',';
    const account = ctx.backend.getAccount(addresses[i] as string, commitment);
    if (account === null) {
      value += 'null';
    } else {
      checkBase58Size(account.data.length, encoding, slice);
      value += writeUiAccountSorted(account, encoding, slice);
    }
  }
  return writeRpcResponse(ctx, slot, value + ']');
}

/** `[pubkey, {commitment?, minContextSlot?}]` → RpcResponse<u64>: 0 for a missing account. */
export function getBalance(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const address = readString(args[0]);
  const config = readContextConfig(args[1]);
  verifyPubkey(address);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const account = ctx.backend.getAccount(address, commitment);
  return writeRpcResponse(ctx, slot, account === null ? '0' : account.lamports.toString());
}

/** `[pubkey, {commitment}]` → RpcResponse<{amount, decimals, uiAmount, uiAmountString}> (UiTokenAmount). */
export function getTokenAccountBalance(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const address = readString(args[0]);
  const commitment = readCommitmentConfig(args[1]) ?? DEFAULT_COMMITMENT;
  verifyPubkey(address);
  const slot = ctx.backend.slot(commitment);
  if (ctx.backend.getAccount(address, commitment) === null) {
    throw invalidParams('Invalid param: could not find account');
  }
  const balance = ctx.backend.getTokenBalance(address, commitment);
  if (balance === null) throw invalidParams('Invalid param: not a Token account');
  const uiAmountString = realNumberStringTrimmed(balance.amount, balance.decimals);
  const value =
    '{"amount":"' +
    balance.amount.toString() +
    '","decimals":' +
    balance.decimals +
    ',"uiAmount":' +
    writeF64(Number(uiAmountString)) +
    ',"uiAmountString":"' +
    uiAmountString +
    '"}';
  return writeRpcResponse(ctx, slot, value);
}

/** `real_number_string_trimmed`: atoms as a decimal string, trailing zeros and point dropped. */
export function realNumberStringTrimmed(amount: bigint, decimals: number): string {
  const digits = amount.toString();
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : whole + '.' + fraction;
}
