import bs58 from 'bs58';

import { rpcError, type Commitment } from '../chain-backend.js';
import type { ConfirmedTransaction, RecordedTokenBalance } from '../transaction-history.js';
import { realNumberStringTrimmed } from './account-methods.js';
import { writeF64, writeJson } from './json-text.js';
import type { RpcMethodContext } from './rpc-backend.js';
import { invalidParams, readCommitmentLevel, readStruct, trailingArgs, verifySignature } from './rpc-params.js';
import { readTransactionEncoding, type TransactionEncoding } from './wire-transaction.js';

/**
 * getTransaction, as a node answers it for a transaction the simulated chain keeps (those sent to
 * it: transaction-history.ts): `[signature, config | encoding]`, config {encoding: json (default) |
 * base64 | base58, commitment: confirmed | finalized (default finalized; processed is refused as
 * the node refuses it), maxSupportedTransactionVersion: 0}. A v0 transaction without
 * maxSupportedTransactionVersion is the node's -32015 error; with it the reply carries `version`.
 * `meta` holds err, status, fee, pre/post balances, pre/post token balances, logMessages,
 * loadedAddresses and computeUnitsConsumed; innerInstructions and rewards are empty (not kept).
 * null when the chain does not know the signature (or not yet at that commitment).
 */

/** `JSON_RPC_SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION`. */
export const UNSUPPORTED_TRANSACTION_VERSION = -32015;

const ENCODINGS: readonly TransactionEncoding[] = ['json', 'base64', 'base58', 'binary'];

interface Config {
  encoding: TransactionEncoding;
  commitment: Commitment;
  maxSupportedTransactionVersion: number | undefined;
}

function readConfig(v: unknown): Config {
  const config: Config = { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: undefined };
  if (v === undefined || v === null) return config;
  if (typeof v === 'string') {
    // The deprecated form: the encoding alone.
    config.encoding = readTransactionEncoding(v);
    return config;
  }
  const object = readStruct(v, 'RpcTransactionConfig')!;
  for (const key in object) {
    const x = object[key];
    if (x === null) continue;
    if (key === 'encoding') config.encoding = readTransactionEncoding(x);
    else if (key === 'commitment') config.commitment = readCommitmentLevel(x);
    else if (key === 'maxSupportedTransactionVersion') {
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 255) throw invalidParams('Invalid params: invalid type for maxSupportedTransactionVersion, expected u8.');
      config.maxSupportedTransactionVersion = x;
    }
  }
  return config;
}

function writeTokenBalance(b: RecordedTokenBalance): string {
  const ui = realNumberStringTrimmed(b.amount, b.decimals);
  return (
    '{"accountIndex":' + b.accountIndex +
    ',"mint":' + JSON.stringify(b.mint) +
    ',"uiTokenAmount":{"uiAmount":' + writeF64(Number(ui)) + ',"decimals":' + b.decimals + ',"amount":"' + b.amount.toString() + '","uiAmountString":"' + ui + '"}' +
    ',"owner":' + JSON.stringify(b.owner) +
    ',"programId":' + JSON.stringify(b.programId) + '}'
  );
}

function writeMeta(t: ConfirmedTransaction): string {
  const m = t.meta;
  const failed = m.err !== null && m.err !== undefined;
  const err = failed ? writeJson(m.err, true) : 'null';
  return (
    '{"err":' + err +
    ',"status":' + (failed ? '{"Err":' + err + '}' : '{"Ok":null}') +
    ',"fee":' + m.fee.toString() +
    ',"preBalances":' + writeJson(m.preBalances) +
    ',"postBalances":' + writeJson(m.postBalances) +
    ',"innerInstructions":[]' +
    ',"logMessages":' + writeJson(m.logMessages) +
    ',"preTokenBalances":[' + m.preTokenBalances.map(writeTokenBalance).join(',') + ']' +
    ',"postTokenBalances":[' + m.postTokenBalances.map(writeTokenBalance).join(',') + ']' +
    ',"rewards":[]' +
    ',"loadedAddresses":' + writeJson(m.loadedAddresses) +
    ',"computeUnitsConsumed":' + m.computeUnitsConsumed +
    '}'
  );
}

function writeJsonTransaction(t: ConfirmedTransaction): string {
  const message = t.message;
  const instructions = message.instructions.map(
    (ix) => '{"programIdIndex":' + ix.programIdIndex + ',"accounts":' + writeJson(ix.accounts) + ',"data":' + JSON.stringify(bs58.encode(ix.data)) + ',"stackHeight":null}',
  );
  let text =
    '{"signatures":' + writeJson(t.signatures) +
    ',"message":{"accountKeys":' + writeJson(message.accountKeys) +
    ',"header":' + writeJson(message.header) +
    ',"recentBlockhash":' + JSON.stringify(message.recentBlockhash) +
    ',"instructions":[' + instructions.join(',') + ']';
  if (t.version === 0) text += ',"addressTableLookups":' + writeJson(message.addressTableLookups);
  return text + '}}';
}

export function getTransaction(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const signature = args[0];
  if (typeof signature !== 'string') throw invalidParams('Invalid params: invalid type: expected a string.');
  const config = readConfig(args[1]);
  if (!ENCODINGS.includes(config.encoding)) throw invalidParams(`unsupported encoding: ${config.encoding}. Supported encodings: json, base58, base64`);
  verifySignature(signature);
  if (config.commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  const record = ctx.backend.transaction?.(signature, config.commitment);
  if (record === undefined) return 'null';
  const max = config.maxSupportedTransactionVersion;
  if (record.version === 0 && (max === undefined || max < 0)) {
    throw rpcError(
      UNSUPPORTED_TRANSACTION_VERSION,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  let transaction: string;
  switch (config.encoding) {
    case 'base64':
      transaction = '[' + JSON.stringify(Buffer.from(record.bytes).toString('base64')) + ',"base64"]';
      break;
    case 'base58':
    case 'binary':
      transaction = '[' + JSON.stringify(bs58.encode(record.bytes)) + ',"base58"]';
      break;
    default:
      transaction = writeJsonTransaction(record);
  }
  let text = '{"slot":' + record.slot.toString() + ',"transaction":' + transaction + ',"meta":' + writeMeta(record);
  if (max !== undefined) text += ',"version":' + (record.version === 0 ? '0' : '"legacy"');
  return text + ',"blockTime":' + record.blockTime.toString() + '}';
}

