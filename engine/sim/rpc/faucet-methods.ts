import { rpcError, RpcErrorCode, type Commitment } from '../chain-backend.js';
import type { RpcMethodContext } from './rpc-backend.js';
import { flattenedCommitment, invalidType, readString, readStruct, readU64, trailingArgs, verifyHash, verifyPubkey } from './rpc-params.js';

/**
 * requestAirdrop, as agave answers it, and simRequestTokens, the simulator's own token faucet
 * (engine/sim/faucet.ts makes both grants real transactions).
 */

const U64_MAX = (1n << 64n) - 1n;

/**
 * `[pubkey, lamports u64, {recentBlockhash?, commitment?}]` → the airdrop transaction's signature.
 * As the node: parameters by serde (-32602), then no faucet → -32600 `Invalid request`, then the
 * pubkey (`Invalid param: WrongSize` / `Invalid`) and the blockhash; the faucet's refusal (over
 * the per-request cap) is -32603 `Internal error`.
 */
export function requestAirdrop(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 2, 1);
  const pubkey = readString(args[0]);
  const lamports = readU64(args[1]);
  // A JSON integer past u64 reaches serde as a float.
  if (lamports > U64_MAX) throw invalidType(args[1], 'u64');
  const config = readStruct(args[2], 'RpcRequestAirdropConfig');
  let commitment: Commitment | undefined;
  let recentBlockhash: string | undefined;
  if (config !== null) {
    for (const key in config) {
      const x = config[key];
      if (key === 'recentBlockhash' && x !== null) recentBlockhash = readString(x);
      else if (key === 'commitment') commitment = flattenedCommitment(x);
    }
  }
  const backend = ctx.backend;
  if (backend.requestAirdrop === undefined) throw rpcError(RpcErrorCode.InvalidRequest, 'Invalid request');
  verifyPubkey(pubkey);
  if (recentBlockhash !== undefined) verifyHash(recentBlockhash);
  const signature = backend.requestAirdrop(pubkey, lamports, {
    ...(commitment !== undefined ? { commitment } : {}),
    ...(recentBlockhash !== undefined ? { recentBlockhash } : {}),
  });
  return JSON.stringify(signature);
}

/**
 * Simulator only (a real node answers -32601): `[owner pubkey, token (mint or symbol), amount
 * (u64 or decimal string of atoms), {commitment?}]` → `{signature, tokenAccount, mint, symbol,
 * amount}` with the amount as a decimal string. Refusals are -32602 with the reason.
 */
export function simRequestTokens(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 3, 1);
  const owner = readString(args[0]);
  const token = readString(args[1]);
  const amount = readAtoms(args[2]);
  const config = readStruct(args[3], 'SimRequestTokensConfig');
  const commitment = config === null ? undefined : flattenedCommitment(config['commitment']);
  const backend = ctx.backend;
  if (backend.requestTokens === undefined) throw rpcError(RpcErrorCode.MethodNotFound, 'Method not found');
  verifyPubkey(owner);
  const grant = backend.requestTokens(owner, token, amount, commitment);
  return JSON.stringify({ signature: grant.signature, tokenAccount: grant.tokenAccount, mint: grant.mint, symbol: grant.symbol, amount: grant.amount.toString() });
}

/** A u64 of atoms: a JSON integer, or a decimal string (amounts past 2^53 keep their digits). */
function readAtoms(v: unknown): bigint {
  if (typeof v === 'string') {
    if (!/^\d{1,20}$/.test(v) || BigInt(v) > U64_MAX) throw invalidType(v, 'u64 or a decimal string of a u64');
    return BigInt(v);
  }
  const n = readU64(v);
  if (n > U64_MAX) throw invalidType(v, 'u64');
  return n;
}
