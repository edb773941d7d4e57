import { Pool } from 'undici';

import { base58 } from '../chain/index.js';
import { RpcFailure } from '../rpc/index.js';

/**
 * The platform's Solana JSON-RPC client: what wallets (and later executors) need beyond the
 * scanner's account reads. u64 values (balances, token amounts) never pass through a JS number:
 * balances are read from the reply text, token amounts from the account bytes.
 * Failures are RpcFailure (kind rpc / timeout / http / network / malformed), as engine/rpc's.
 */

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

export interface TokenAccountInfo {
  /** The token account's address. */
  address: string;
  mint: string;
  /** The token-account owner (the wallet). */
  owner: string;
  amount: bigint;
}

export interface SignatureStatusInfo {
  slot: bigint;
  confirmations: number | null;
  err: unknown;
  confirmationStatus: Commitment | null;
}

export interface ChainClientOptions {
  url: string;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Default `confirmed`. */
  commitment?: Commitment;
}

/** JSON-RPC error code of a failed preflight (the transaction was not submitted). */
export const PREFLIGHT_FAILURE = -32002;

const VALUE_U64_RE = /"value"\s*:\s*(\d+)/;

export class ChainClient {
  readonly url: string;
  readonly commitment: Commitment;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly timeoutMs: number;
  private id = 0;

  constructor(options: ChainClientOptions) {
    const u = new URL(options.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError(`not an http(s) RPC URL: ${options.url}`);
    this.url = options.url;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.commitment = options.commitment ?? 'confirmed';
    this.path = `${u.pathname}${u.search}`;
    this.pool = new Pool(u.origin, {
      connections: 4,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** One call; the reply text after checking it is a result (RpcFailure otherwise). */
  async call(method: string, params: unknown[]): Promise<{ text: string; result: unknown }> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params });
    let text: string;
    try {
      const res = await this.pool.request({ path: this.path, method: 'POST', headers: { 'content-type': 'application/json' }, body });
      text = await res.body.text();
      if (res.statusCode !== 200) {
        throw new RpcFailure('http', `${method}: HTTP ${res.statusCode}`, { endpoint: this.url, method, httpStatus: res.statusCode });
      }
    } catch (err) {
      if (err instanceof RpcFailure) throw err;
      const code = (err as { code?: string }).code ?? '';
      const kind = /TIMEOUT/.test(code) ? 'timeout' : 'network';
      throw new RpcFailure(kind, `${method}: ${(err as Error).message}${code ? ` (${code})` : ''}`, { endpoint: this.url, method, cause: err });
    }
    let reply: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch (err) {
      throw new RpcFailure('malformed', `${method}: reply is not JSON`, { endpoint: this.url, method, cause: err });
    }
    if (reply.error !== undefined && reply.error !== null) {
      const code = typeof reply.error.code === 'number' ? reply.error.code : undefined;
      const message = typeof reply.error.message === 'string' ? reply.error.message : 'unknown error';
      const failure = new RpcFailure('rpc', `${method}: ${message}${code === undefined ? '' : ` (${code})`}`, { endpoint: this.url, method, rpcCode: code });
      (failure as RpcFailure & { data?: unknown }).data = reply.error.data;
      throw failure;
    }
    if (!('result' in reply)) throw new RpcFailure('malformed', `${method}: no result`, { endpoint: this.url, method });
    return { text, result: reply.result };
  }

  /** `getHealth`: "ok", or throws. */
  async getHealth(): Promise<string> {
    const { result } = await this.call('getHealth', []);
    return String(result);
  }

  async getSlot(): Promise<bigint> {
    const { text } = await this.call('getSlot', [{ commitment: this.commitment }]);
    const m = /"result"\s*:\s*(\d+)/.exec(text);
    if (m === null) throw new RpcFailure('malformed', 'getSlot: no slot', { endpoint: this.url, method: 'getSlot' });
    return BigInt(m[1]!);
  }

  /** Lamports of `address` (0 for a missing account). */
  async getBalance(address: string): Promise<bigint> {
    const { text } = await this.call('getBalance', [address, { commitment: this.commitment }]);
    const m = VALUE_U64_RE.exec(text);
    if (m === null) throw new RpcFailure('malformed', 'getBalance: no value', { endpoint: this.url, method: 'getBalance' });
    return BigInt(m[1]!);
  }

  /** Every SPL Token account of `owner`, decoded from its bytes (base64). */
  async getTokenAccountsByOwner(owner: string, programId = TOKEN_PROGRAM_ID): Promise<TokenAccountInfo[]> {
    const method = 'getTokenAccountsByOwner';
    const { result } = await this.call(method, [owner, { programId }, { encoding: 'base64', commitment: this.commitment }]);
    const value = (result as { value?: unknown } | null)?.value;
    if (!Array.isArray(value)) throw new RpcFailure('malformed', `${method}: result.value is not an array`, { endpoint: this.url, method });
    const out: TokenAccountInfo[] = [];
    for (const item of value as { pubkey?: unknown; account?: { data?: unknown } }[]) {
      const data = item?.account?.data;
      if (typeof item?.pubkey !== 'string' || !Array.isArray(data) || typeof data[0] !== 'string' || data[1] !== 'base64') {
        throw new RpcFailure('malformed', `${method}: an item is not {pubkey, account: {data: [base64, "base64"]}}`, { endpoint: this.url, method });
      }
      const bytes = Buffer.from(data[0], 'base64');
      if (bytes.length < 72) throw new RpcFailure('malformed', `${method}: token account ${item.pubkey} is ${bytes.length} bytes`, { endpoint: this.url, method });
      out.push({
        address: item.pubkey,
        mint: base58.encode(bytes.subarray(0, 32)),
        owner: base58.encode(bytes.subarray(32, 64)),
        amount: bytes.readBigUInt64LE(64),
      });
    }
    return out;
  }

  async getLatestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> {
    const { text, result } = await this.call('getLatestBlockhash', [{ commitment: this.commitment }]);
    const blockhash = (result as { value?: { blockhash?: unknown } } | null)?.value?.blockhash;
    const m = /"lastValidBlockHeight"\s*:\s*(\d+)/.exec(text);
    if (typeof blockhash !== 'string' || m === null) {
      throw new RpcFailure('malformed', 'getLatestBlockhash: no blockhash', { endpoint: this.url, method: 'getLatestBlockhash' });
    }
    return { blockhash, lastValidBlockHeight: BigInt(m[1]!) };
  }

  async getBlockHeight(): Promise<bigint> {
    const { text } = await this.call('getBlockHeight', [{ commitment: this.commitment }]);
    const m = /"result"\s*:\s*(\d+)/.exec(text);
    if (m === null) throw new RpcFailure('malformed', 'getBlockHeight: no height', { endpoint: this.url, method: 'getBlockHeight' });
    return BigInt(m[1]!);
  }

  /** Submits signed bytes (base64); the signature. A failed preflight is an RpcFailure with rpcCode -32002. */
  async sendTransaction(tx: Uint8Array, options: { skipPreflight?: boolean } = {}): Promise<string> {
    const { result } = await this.call('sendTransaction', [
      Buffer.from(tx).toString('base64'),
      { encoding: 'base64', skipPreflight: options.skipPreflight ?? false, preflightCommitment: this.commitment },
    ]);
    if (typeof result !== 'string') throw new RpcFailure('malformed', 'sendTransaction: no signature', { endpoint: this.url, method: 'sendTransaction' });
    return result;
  }

  /** Statuses in order, null for unknown signatures (searching history). */
  async getSignatureStatuses(signatures: readonly string[]): Promise<(SignatureStatusInfo | null)[]> {
    const { result } = await this.call('getSignatureStatuses', [signatures, { searchTransactionHistory: true }]);
    const value = (result as { value?: unknown } | null)?.value;
    if (!Array.isArray(value) || value.length !== signatures.length) {
      throw new RpcFailure('malformed', 'getSignatureStatuses: value does not match the signatures', { endpoint: this.url, method: 'getSignatureStatuses' });
    }
    return value.map((v: unknown) => {
      if (v === null) return null;
      const s = v as { slot?: unknown; confirmations?: unknown; err?: unknown; confirmationStatus?: unknown };
      return {
        slot: BigInt(typeof s.slot === 'number' ? s.slot : 0),
        confirmations: typeof s.confirmations === 'number' ? s.confirmations : null,
        err: s.err ?? null,
        confirmationStatus: (typeof s.confirmationStatus === 'string' ? s.confirmationStatus : null) as Commitment | null,
      };
    });
  }
}
