import type { Commitment, SignatureStatus, SimulationResult } from '../chain-backend.js';
import { writeJson } from './json-text.js';
import { DEFAULT_COMMITMENT, writeRpcResponse, type RpcMethodContext } from './rpc-backend.js';
import { bankSlot } from './rpc-configs.js';
import {
  flattenedCommitment,
  invalidParams,
  missingField,
  readBool,
  readCommitmentLevel,
  readString,
  readStringList,
  readStruct,
  readU64,
  readUsize,
  readVariant,
  trailingArgs,
  verifyPubkey,
  verifySignature,
} from './rpc-params.js';
import { ACCOUNT_ENCODINGS, NO_SLICE, writeUiAccountSorted, type AccountEncoding } from './ui-account.js';
import {
  binaryEncoding,
  decodeWireTransaction,
  readTransactionEncoding,
  type TransactionEncoding,
} from './wire-transaction.js';

/** sendTransaction, simulateTransaction, getSignatureStatuses. */

/** `MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS`. */
export const MAX_SIGNATURE_STATUSES = 256;

/**
 * `[tx, {encoding?, skipPreflight?, preflightCommitment?, maxRetries?, minContextSlot?}]` → the
 * first signature. The default encoding is base58 (deprecated); the chain verifies and queues.
 */
export function sendTransaction(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const data = readString(args[0]);
  const config = readStruct(args[1], 'RpcSendTransactionConfig');
  let skipPreflight = false;
  let preflightCommitment: Commitment | undefined;
  let encoding: TransactionEncoding | undefined;
  let minContextSlot: bigint | undefined;
  if (config !== null) {
    for (const key in config) {
      const x = config[key];
      switch (key) {
        case 'skipPreflight':
          skipPreflight = readBool(x);
          break;
        case 'preflightCommitment':
          if (x !== null) preflightCommitment = readCommitmentLevel(x);
          break;
        case 'encoding':
          if (x !== null) encoding = readTransactionEncoding(x);
          break;
        case 'maxRetries':
          if (x !== null) readUsize(x);
          break;
        case 'minContextSlot':
          if (x !== null) minContextSlot = readU64(x);
          break;
        default:
          break;
      }
    }
  }
  const tx = decodeWireTransaction(data, binaryEncoding(encoding));
  const commitment = skipPreflight ? 'processed' : (preflightCommitment ?? DEFAULT_COMMITMENT);
  bankSlot(ctx.backend, commitment, minContextSlot);
  return JSON.stringify(ctx.backend.sendTransaction(tx, { skipPreflight }));
}

/**
 * `[tx, {sigVerify?, replaceRecentBlockhash?, commitment?, encoding?, accounts?, minContextSlot?,
 * innerInstructions?}]` → RpcResponse<RpcSimulateTransactionResult>.
 */
export function simulateTransaction(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const data = readString(args[0]);
  const config = readStruct(args[1], 'RpcSimulateTransactionConfig');
  let sigVerify = false;
  let replaceRecentBlockhash = false;
  let commitment: Commitment | undefined;
  let encoding: TransactionEncoding | undefined;
  let accounts: { encoding: AccountEncoding | undefined; addresses: readonly string[] } | undefined;
  let minContextSlot: bigint | undefined;
  let innerInstructions = false;
  if (config !== null) {
    for (const key in config) {
      const x = config[key];
      switch (key) {
        case 'sigVerify':
          sigVerify = readBool(x);
          break;
        case 'replaceRecentBlockhash':
          replaceRecentBlockhash = readBool(x);
          break;
        case 'commitment':
          commitment = flattenedCommitment(x);
          break;
        case 'encoding':
          if (x !== null) encoding = readTransactionEncoding(x);
          break;
        case 'accounts':
          if (x !== null) accounts = readAccountsConfig(x);
          break;
        case 'minContextSlot':
          if (x !== null) minContextSlot = readU64(x);
          break;
        case 'innerInstructions':
          innerInstructions = readBool(x);
          break;
        default:
          break;
      }
    }
  }
  const tx = decodeWireTransaction(data, binaryEncoding(encoding));
  const bankCommitment = commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, bankCommitment, minContextSlot);
  let replacement = 'null';
  if (replaceRecentBlockhash) {
    if (sigVerify) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
    const info = ctx.backend.latestBlockhash(bankCommitment);
    replacement =
      '{"blockhash":' + JSON.stringify(info.blockhash) + ',"lastValidBlockHeight":' + info.lastValidBlockHeight.toString() + '}';
  }
  const addresses = accounts?.addresses.map((a) => verifyPubkey(a));
  const result = ctx.backend.simulateTransaction(tx, { sigVerify, replaceRecentBlockhash, ...(addresses !== undefined ? { accounts: addresses } : {}) }) as SimulationResult &
    SimulationExtras;
  const failed = result.err !== null && result.err !== undefined;
  let accountsText = 'null';
  if (accounts !== undefined) {
    const accountEncoding = accounts.encoding ?? 'base64';
    if (accountEncoding === 'binary' || accountEncoding === 'base58') {
      throw invalidParams('base58 encoding not supported');
    }
    accountsText = '[';
    for (let i = 0; i < accounts.addresses.length; i++) {
      if (i > 0) accountsText += ',';
      if (failed) {
        accountsText += 'null';
        continue;
      }
      // The state after the simulation (a chain that does not give it: the bank's).
      const account = result.accounts !== undefined ? (result.accounts[i] ?? null) : ctx.backend.getAccount(addresses![i]!, bankCommitment);
      accountsText += account === null ? 'null' : writeUiAccountSorted(account, accountEncoding, NO_SLICE);
    }
    accountsText += ']';
  }
  const value =
    '{"accounts":' +
    accountsText +
    ',"err":' +
    (failed ? writeJson(result.err, true) : 'null') +
    ',"innerInstructions":' +
    (innerInstructions ? writeJson(result.innerInstructions ?? [], true) : 'null') +
    ',"loadedAccountsDataSize":' +
    (result.loadedAccountsDataSize ?? 0) +
    ',"logs":' +
    writeJson(result.logs) +
    ',"replacementBlockhash":' +
    replacement +
    ',"returnData":' +
    writeJson(result.returnData ?? null, true) +
    ',"unitsConsumed":' +
    result.unitsConsumed +
    '}';
  return writeRpcResponse(ctx, slot, value);
}

/** Fields of the node's simulation result a chain may add beyond SimulationResult. */
interface SimulationExtras {
  loadedAccountsDataSize?: number;
  returnData?: { programId: string; data: [string, 'base64'] } | null;
  innerInstructions?: unknown[];
}

function readAccountsConfig(v: unknown): { encoding: AccountEncoding | undefined; addresses: readonly string[] } {
  const object = readStruct(v, 'RpcSimulateTransactionAccountsConfig') as Record<string, unknown>;
  let encoding: AccountEncoding | undefined;
  let addresses: readonly string[] | undefined;
  for (const key in object) {
    const x = object[key];
    if (key === 'encoding' && x !== null) encoding = readVariant(x, ACCOUNT_ENCODINGS);
    else if (key === 'addresses') addresses = readStringList(x);
  }
  if (addresses === undefined) throw missingField('addresses');
  return { encoding, addresses };
}

/**
 * `[[signature ≤256], {searchTransactionHistory}]` → RpcResponse<(TransactionStatus | null)[]>:
 * from the recent status cache, and with searchTransactionHistory also from the ledger.
 */
export function getSignatureStatuses(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const signatures = readStringList(args[0]);
  const config = readStruct(args[1], 'RpcSignatureStatusConfig');
  let searchTransactionHistory = false;
  if (config !== null) {
    let search: boolean | undefined;
    for (const key in config) {
      if (key === 'searchTransactionHistory') search = readBool(config[key]);
    }
    if (search === undefined) throw missingField('searchTransactionHistory');
    searchTransactionHistory = search;
  }
  if (signatures.length > MAX_SIGNATURE_STATUSES) {
    throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
  }
  for (let i = 0; i < signatures.length; i++) verifySignature(signatures[i] as string);
  const slot = ctx.backend.slot('processed');
  let value = '[';
  for (let i = 0; i < signatures.length; i++) {
    if (i > 0) value += ',';
    const status = ctx.backend.signatureStatus(signatures[i] as string, { searchTransactionHistory });
    value += status === null ? 'null' : writeTransactionStatus(status);
  }
  return writeRpcResponse(ctx, slot, value + ']');
}

/** `TransactionStatus` with sorted keys, including the deprecated `status: {Ok} | {Err}`. */
export function writeTransactionStatus(status: SignatureStatus): string {
  const failed = status.err !== null && status.err !== undefined;
  const err = failed ? writeJson(status.err, true) : 'null';
  return (
    '{"confirmationStatus":"' +
    status.confirmationStatus +
    '","confirmations":' +
    (status.confirmations === null ? 'null' : status.confirmations) +
    ',"err":' +
    err +
    ',"slot":' +
    status.slot.toString() +
    ',"status":' +
    (failed ? '{"Err":' + err + '}' : '{"Ok":null}') +
    '}'
  );
}
