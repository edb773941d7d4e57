import { isRpcFailure, PREFLIGHT_FAILURE } from '../rpc/index.js';

/**
 * What a failed send (sendTransaction, sendBundle) means for the trade, so both submitters decide
 * alike whether to send the same bytes again:
 * - `transient`: the request may or may not have arrived (network error, timeout, HTTP error, a
 *   malformed or internal-error reply, a node behind): send the same bytes again;
 * - `alreadyProcessed`: a node's preflight saw an earlier copy (queued or landed): accepted;
 * - `blockhashNotFound`: a node's preflight does not know the blockhash: it may lag behind the
 *   cluster, so this is transient until the block height passes lastValidBlockHeight;
 * - `refused`: the node or block engine answered with a verdict (a failed preflight, a bad
 *   signature, invalid parameters, a rejected bundle): sending the same bytes again cannot help.
 */
export const SendFailure = {
  Transient: 'transient',
  AlreadyProcessed: 'alreadyProcessed',
  BlockhashNotFound: 'blockhashNotFound',
  Refused: 'refused',
} as const;
export type SendFailure = (typeof SendFailure)[keyof typeof SendFailure];

/** JSON-RPC codes that say nothing about the request itself: internal error, node unhealthy / behind. */
const TRANSIENT_RPC_CODES = new Set([-32603, -32005, -32004, -32016]);

export function classifySendFailure(err: unknown): SendFailure {
  // Not a failure of the request (a bad argument, a bug): sending the same again cannot help.
  if (!isRpcFailure(err)) return SendFailure.Refused;
  if (err.context.kind !== 'rpc') return SendFailure.Transient;
  // Rate limited or a server in trouble, whatever the error object says.
  if (err.context.httpStatus !== undefined && (err.context.httpStatus === 429 || err.context.httpStatus >= 500)) return SendFailure.Transient;
  if (err.context.rpcCode === PREFLIGHT_FAILURE) {
    const reason = (err.context.data as { err?: unknown } | null | undefined)?.err;
    if (reason === 'AlreadyProcessed' || /already been processed/i.test(err.message)) return SendFailure.AlreadyProcessed;
    if (reason === 'BlockhashNotFound' || /blockhash not found/i.test(err.message)) return SendFailure.BlockhashNotFound;
    return SendFailure.Refused;
  }
  if (err.context.rpcCode !== undefined && TRANSIENT_RPC_CODES.has(err.context.rpcCode)) return SendFailure.Transient;
  return SendFailure.Refused;
}
