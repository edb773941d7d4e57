import { TOKEN_PROGRAM_ID, WSOL_MINT, base58, type Commitment } from '../chain/index.js';
import { rpcFailure } from './rpc-errors.js';
import { JsonRpcHttpClient } from './json-rpc-http-client.js';

export type { Commitment };

/**
 * The platform's Solana JSON-RPC client: what wallets and executors need beyond the scanner's
 * account reads. u64 values (balances, token amounts, fees) never pass through a JS number:
 * balances are read from the reply text, token amounts from the account bytes or their decimal
 * strings. Failures are RpcFailure (kind rpc / timeout / http / network / malformed), as
 * engine/rpc's; a JSON-RPC error is kind rpc whatever the HTTP status it came with.
 */



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

/** A landed transaction as it moved one owner's balances (getTransaction's meta). */
export interface LandedTransaction {
  slot: bigint;
  /** The TransactionError; null when it succeeded. */
  err: unknown;
  /** The fee its fee payer paid, lamports. */
  fee: bigint;
  /** post − pre lamports of the owner's account; 0 when the transaction does not load it. */
  lamports: bigint;
  /** post − pre per mint, summed over the token accounts whose `owner` is the owner. */
  tokens: Map<string, bigint>;
  /**
   * Lamports paid into rent of the owner's token accounts the transaction created and left open
   * (in its post token balances, not in its pre ones, with no lamports before): each one's post
   * lamports less, for wrapped SOL, its token amount. A wSOL account created and closed in the
   * same transaction is in neither (its rent came back).
   */
  rent: bigint;
}

export interface SimulationOutcome {
  /** The slot the simulation ran on. */
  slot: bigint;
  /** The TransactionError; null when it would succeed. */
  err: unknown;
  logs: string[];
  unitsConsumed: number;
}

export interface PrioritizationFee {
  slot: bigint;
  /** Micro-lamports per compute unit. */
  prioritizationFee: bigint;
}

export interface ChainClientOptions {
  /** The node's URL; or `endpoints`, several, with failover (a call no endpoint answers goes to the next). */
  url?: string;
  endpoints?: readonly string[];
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Default `confirmed`. */
  commitment?: Commitment;
  /**
   * Keep-alive connections per endpoint (default 4). A call that finds them all busy waits for one
   * to come free: a client whose sends must not queue behind its status polls (the executor's) sizes
   * it to the calls it can have in flight at once.
   */
  connections?: number;
}

/** JSON-RPC error code of a failed preflight (the transaction was not submitted). */
export const PREFLIGHT_FAILURE = -32002;

const VALUE_U64_RE = /"value"\s*:\s*(\d+)/;

export class ChainClient {
  readonly commitment: Commitment;
  private readonly rpc: JsonRpcHttpClient;

  constructor(options: ChainClientOptions) {
    const urls = options.endpoints ?? (options.url === undefined ? [] : [options.url]);
    this.rpc = new JsonRpcHttpClient({ urls, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), ...(options.connections === undefined ? {} : { connections: options.connections }) });
    this.commitment = options.commitment ?? 'confirmed';
  }

  /** The endpoint in use, its secrets masked. */
  get url(): string {
    return this.rpc.url;
  }

  async close(): Promise<void> {
    await this.rpc.close();
  }

  /** One call; the reply text after checking it is a result (RpcFailure otherwise). */
  call(method: string, params: unknown[]): Promise<{ text: string; result: unknown }> {
    return this.rpc.call(method, params);
  }

  /** `getHealth`: "ok", or throws. */
  async getHealth(): Promise<string> {
    const { result } = await this.call('getHealth', []);
    return String(result);
  }

  async getSlot(): Promise<bigint> {
    const { text } = await this.call('getSlot', [{ commitment: this.commitment }]);
    const m = /"result"\s*:\s*(\d+)/.exec(text);
    if (m === null) throw rpcFailure('malformed', 'getSlot: no slot', { endpoint: this.url, method: 'getSlot' });
    return BigInt(m[1]!);
  }

  /** Lamports of `address` (0 for a missing account). */
  async getBalance(address: string): Promise<bigint> {
    const { text } = await this.call('getBalance', [address, { commitment: this.commitment }]);
    const m = VALUE_U64_RE.exec(text);
    if (m === null) throw rpcFailure('malformed', 'getBalance: no value', { endpoint: this.url, method: 'getBalance' });
    return BigInt(m[1]!);
  }

  /** Every SPL Token account of `owner`, decoded from its bytes (base64). */
  async getTokenAccountsByOwner(owner: string, programId = TOKEN_PROGRAM_ID): Promise<TokenAccountInfo[]> {
    const method = 'getTokenAccountsByOwner';
    const { result } = await this.call(method, [owner, { programId }, { encoding: 'base64', commitment: this.commitment }]);
    const value = (result as { value?: unknown } | null)?.value;
    if (!Array.isArray(value)) throw rpcFailure('malformed', `${method}: result.value is not an array`, { endpoint: this.url, method });
    const out: TokenAccountInfo[] = [];
    for (const item of value as { pubkey?: unknown; account?: { data?: unknown } }[]) {
      const data = item?.account?.data;
      if (typeof item?.pubkey !== 'string' || !Array.isArray(data) || typeof data[0] !== 'string' || data[1] !== 'base64') {
        throw rpcFailure('malformed', `${method}: an item is not {pubkey, account: {data: [base64, "base64"]}}`, { endpoint: this.url, method });
      }
      const bytes = Buffer.from(data[0], 'base64');
      if (bytes.length < 72) throw rpcFailure('malformed', `${method}: token account ${item.pubkey} is ${bytes.length} bytes`, { endpoint: this.url, method });
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
      throw rpcFailure('malformed', 'getLatestBlockhash: no blockhash', { endpoint: this.url, method: 'getLatestBlockhash' });
    }
    return { blockhash, lastValidBlockHeight: BigInt(m[1]!) };
  }

  async getBlockHeight(): Promise<bigint> {
    const { text } = await this.call('getBlockHeight', [{ commitment: this.commitment }]);
    const m = /"result"\s*:\s*(\d+)/.exec(text);
    if (m === null) throw rpcFailure('malformed', 'getBlockHeight: no height', { endpoint: this.url, method: 'getBlockHeight' });
    return BigInt(m[1]!);
  }

  /** Submits signed bytes (base64); the signature. A failed preflight is an RpcFailure with rpcCode -32002. */
  async sendTransaction(tx: Uint8Array, options: { skipPreflight?: boolean } = {}): Promise<string> {
    const { result } = await this.call('sendTransaction', [
      Buffer.from(tx).toString('base64'),
      { encoding: 'base64', skipPreflight: options.skipPreflight ?? false, preflightCommitment: this.commitment },
    ]);
    if (typeof result !== 'string') throw rpcFailure('malformed', 'sendTransaction: no signature', { endpoint: this.url, method: 'sendTransaction' });
    return result;
  }

  /** Statuses in order, null for unknown signatures (searching history). */
  async getSignatureStatuses(signatures: readonly string[]): Promise<(SignatureStatusInfo | null)[]> {
    const { result } = await this.call('getSignatureStatuses', [signatures, { searchTransactionHistory: true }]);
    const value = (result as { value?: unknown } | null)?.value;
    if (!Array.isArray(value) || value.length !== signatures.length) {
      throw rpcFailure('malformed', 'getSignatureStatuses: value does not match the signatures', { endpoint: this.url, method: 'getSignatureStatuses' });
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

  /**
   * A landed transaction's slot, error, fee and the balance changes of `owner` (lamports at the
   * owner's account index, tokens from the token balances whose owner is `owner`, per mint); null
   * while the node does not have it at the client's commitment (confirmed at least: nodes refuse
   * processed). Lamports and the fee are read from the reply text, token amounts from their strings.
   */
  async getTransaction(signature: string, owner: string): Promise<LandedTransaction | null> {
    const method = 'getTransaction';
    const commitment = this.commitment === 'processed' ? 'confirmed' : this.commitment;
    const { text, result } = await this.call(method, [signature, { encoding: 'json', commitment, maxSupportedTransactionVersion: 0 }]);
    if (result === null) return null;
    const r = result as {
      slot?: unknown;
      transaction?: { message?: { accountKeys?: unknown } };
      meta?: { err?: unknown; loadedAddresses?: { writable?: unknown; readonly?: unknown }; preTokenBalances?: unknown; postTokenBalances?: unknown } | null;
    };
    const keys = r.transaction?.message?.accountKeys;
    const meta = r.meta;
    if (typeof r.slot !== 'number' || !isStringArray(keys) || meta === null || meta === undefined) {
      throw this.rpc.malformed(method, 'no slot, account keys or meta');
    }
    const allKeys = [...keys, ...stringsOr(meta.loadedAddresses?.writable), ...stringsOr(meta.loadedAddresses?.readonly)];
    const fee = FEE_RE.exec(text);
    const pre = u64ArrayAt(text, 'preBalances');
    const post = u64ArrayAt(text, 'postBalances');
    if (fee === null || pre === undefined || post === undefined || pre.length !== allKeys.length || post.length !== allKeys.length) {
      throw this.rpc.malformed(method, 'fee or pre/post balances missing or not one per account');
    }
    const index = allKeys.indexOf(owner);
    const tokens = new Map<string, bigint>();
    const addTokens = (list: unknown, sign: bigint): void => {
      if (list === undefined || list === null) return;
      if (!Array.isArray(list)) throw this.rpc.malformed(method, 'token balances are not a list');
      for (const b of list as { owner?: unknown; mint?: unknown; uiTokenAmount?: { amount?: unknown } }[]) {
        if (b?.owner !== owner) continue;
        const amount = b.uiTokenAmount?.amount;
        if (typeof b.mint !== 'string' || typeof amount !== 'string' || !/^\d+$/.test(amount)) throw this.rpc.malformed(method, 'a token balance has no mint or amount');
        tokens.set(b.mint, (tokens.get(b.mint) ?? 0n) + sign * BigInt(amount));
      }
    };
    addTokens(meta.postTokenBalances, 1n);
    addTokens(meta.preTokenBalances, -1n);
    const existed = new Set<number>();
    for (const b of (meta.preTokenBalances ?? []) as { accountIndex?: unknown }[]) if (typeof b?.accountIndex === 'number') existed.add(b.accountIndex);
    let rent = 0n;
    for (const b of (meta.postTokenBalances ?? []) as { accountIndex?: unknown; owner?: unknown; mint?: unknown; uiTokenAmount?: { amount?: unknown } }[]) {
      const i = b?.accountIndex;
      if (b?.owner !== owner || typeof i !== 'number' || existed.has(i) || pre[i] !== 0n || post[i] === undefined) continue;
      rent += post[i]! - (b.mint === WSOL_MINT ? BigInt(b.uiTokenAmount!.amount as string) : 0n);
    }
    return {
      slot: BigInt(r.slot),
      err: meta.err ?? null,
      fee: BigInt(fee[1]!),
      lamports: index < 0 ? 0n : post[index]! - pre[index]!,
      tokens,
      rent,
    };
  }

  /** Runs signed bytes on the node's bank without keeping anything (signatures not verified). */
  async simulateTransaction(tx: Uint8Array, options: { replaceRecentBlockhash?: boolean } = {}): Promise<SimulationOutcome> {
    const method = 'simulateTransaction';
    const { text, result } = await this.call(method, [
      Buffer.from(tx).toString('base64'),
      { encoding: 'base64', commitment: this.commitment, replaceRecentBlockhash: options.replaceRecentBlockhash ?? false },
    ]);
    const value = (result as { value?: { err?: unknown; logs?: unknown; unitsConsumed?: unknown } } | null)?.value;
    const slot = CONTEXT_SLOT_RE.exec(text);
    if (value === undefined || value === null || slot === null) throw this.rpc.malformed(method, 'no value or context slot');
    return {
      slot: BigInt(slot[1]!),
      err: value.err ?? null,
      logs: stringsOr(value.logs),
      unitsConsumed: typeof value.unitsConsumed === 'number' ? value.unitsConsumed : 0,
    };
  }

  /** The recent slots' minimum compute-unit prices for transactions writing all of `accounts` (any, when empty). */
  async getRecentPrioritizationFees(accounts: readonly string[] = []): Promise<PrioritizationFee[]> {
    const method = 'getRecentPrioritizationFees';
    const { text, result } = await this.call(method, accounts.length === 0 ? [] : [accounts]);
    if (!Array.isArray(result)) throw this.rpc.malformed(method, 'result is not a list');
    const out: PrioritizationFee[] = [];
    for (const m of text.slice(text.indexOf('"result"')).matchAll(/\{([^{}]*)\}/g)) {
      const fee = /"prioritizationFee"\s*:\s*(\d+)/.exec(m[1]!);
      const slot = /"slot"\s*:\s*(\d+)/.exec(m[1]!);
      if (fee === null || slot === null) throw this.rpc.malformed(method, 'an item is not {prioritizationFee, slot}');
      out.push({ slot: BigInt(slot[1]!), prioritizationFee: BigInt(fee[1]!) });
    }
    if (out.length !== result.length) throw this.rpc.malformed(method, 'items could not be read');
    return out;
  }

  /** Lamports an account of `size` data bytes needs to be rent exempt. */
  async getMinimumBalanceForRentExemption(size: number): Promise<bigint> {
    const method = 'getMinimumBalanceForRentExemption';
    const { text } = await this.call(method, [size, { commitment: this.commitment }]);
    const m = RESULT_U64_RE.exec(text);
    if (m === null) throw this.rpc.malformed(method, 'no lamports');
    return BigInt(m[1]!);
  }
}

const FEE_RE = /"fee"\s*:\s*(\d+)/;
const CONTEXT_SLOT_RE = /"context"\s*:\s*\{[^{}]*"slot"\s*:\s*(\d+)/;
const RESULT_U64_RE = /"result"\s*:\s*(\d+)/;

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function stringsOr(v: unknown): string[] {
  return isStringArray(v) ? v : [];
}

/** The u64 list `"name":[…]` of a reply, read from its text (no JS number in between). */
function u64ArrayAt(text: string, name: string): bigint[] | undefined {
  const m = new RegExp(`"${name}"\\s*:\\s*\\[([\\d,\\s]*)\\]`).exec(text);
  if (m === null) return undefined;
  const body = m[1]!.trim();
  return body === '' ? [] : body.split(',').map((x) => BigInt(x.trim()));
}
