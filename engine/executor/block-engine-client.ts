import { createHash } from 'node:crypto';

import { ErrorCode, TpError } from '../errors.js';
import { JsonRpcHttpClient } from '../rpc/index.js';

/**
 * A Jito block engine's bundle API over JSON-RPC (docs/wire-formats.md §8): sendBundle,
 * getBundleStatuses, getInflightBundleStatuses and getTipAccounts (asked once, then cached).
 * Failures are RpcFailure (kind rpc / timeout / http / network / malformed), as ChainClient's.
 */

/** The path of the bundle methods; a URL with no path of its own gets it. */
export const BUNDLES_PATH = '/api/v1/bundles';
/** The block engine takes at most 5 transactions per bundle and 5 ids per status query. */
export const MAX_BUNDLE_TRANSACTIONS = 5;

export interface BlockEngineClientOptions {
  /** `http(s)://host[:port]` (BUNDLES_PATH is added) or the full bundles URL. */
  url: string;
  /** Sent as `x-jito-auth` (the spec's block-engine uuid), when given. */
  uuid?: string;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
}

/** A landed (or failed) bundle as getBundleStatuses reports it. */
export interface BundleStatusInfo {
  bundleId: string;
  /** The bundle's transaction signatures, in order. */
  transactions: string[];
  slot: bigint;
  confirmationStatus: string | null;
  /** null when it landed (`{Ok: null}`), else the `Err` value. */
  err: unknown;
}

export const InflightBundleStatus = { Invalid: 'Invalid', Pending: 'Pending', Failed: 'Failed', Landed: 'Landed' } as const;
export type InflightBundleStatus = (typeof InflightBundleStatus)[keyof typeof InflightBundleStatus];

export interface InflightBundleInfo {
  bundleId: string;
  status: InflightBundleStatus;
  landedSlot: bigint | null;
}

const INFLIGHT_STATUSES = new Set<string>(Object.values(InflightBundleStatus));

/** Jito's bundle id: the hex SHA-256 of the transactions' first signatures (base58) joined by ",". */
export function bundleIdOf(signatures: readonly string[]): string {
  return createHash('sha256').update(signatures.join(',')).digest('hex');
}

export class BlockEngineClient {
  readonly url: string;
  private readonly rpc: JsonRpcHttpClient;
  private tipAccounts: Promise<string[]> | undefined;

  constructor(options: BlockEngineClientOptions) {
    const u = new URL(options.url);
    if (u.pathname === '/' || u.pathname === '') u.pathname = BUNDLES_PATH;
    this.url = u.toString();
    this.rpc = new JsonRpcHttpClient({
      url: this.url,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.uuid === undefined ? {} : { headers: { 'x-jito-auth': options.uuid } }),
    });
  }

  async close(): Promise<void> {
    await this.rpc.close();
  }

  /** Submits signed transactions (base64), run in order, all or none, in one slot; the bundle id. */
  async sendBundle(transactions: readonly Uint8Array[]): Promise<string> {
    if (transactions.length === 0 || transactions.length > MAX_BUNDLE_TRANSACTIONS) {
      throw new TpError(ErrorCode.BadParameter, `a bundle holds 1 to ${MAX_BUNDLE_TRANSACTIONS} transactions, got ${transactions.length}`, {
        context: { parameter: 'transactions', value: transactions.length, max: MAX_BUNDLE_TRANSACTIONS },
      });
    }
    const method = 'sendBundle';
    const { result } = await this.rpc.call(method, [transactions.map((tx) => Buffer.from(tx).toString('base64')), { encoding: 'base64' }]);
    if (typeof result !== 'string' || result === '') throw this.rpc.malformed(method, 'no bundle id');
    return result;
  }

  /** Statuses in the order of `bundleIds` (at most 5): null for a bundle that has not landed (or is unknown). */
  async getBundleStatuses(bundleIds: readonly string[]): Promise<(BundleStatusInfo | null)[]> {
    const method = 'getBundleStatuses';
    const { result } = await this.rpc.call(method, [bundleIds]);
    const value = valueOf(result, bundleIds.length);
    if (value === undefined) throw this.rpc.malformed(method, 'value does not match the bundle ids');
    return value.map((v) => {
      if (v === null) return null;
      const s = v as { bundle_id?: unknown; transactions?: unknown; slot?: unknown; confirmation_status?: unknown; err?: unknown };
      if (typeof s.bundle_id !== 'string' || !Array.isArray(s.transactions) || !Number.isSafeInteger(s.slot)) {
        throw this.rpc.malformed(method, 'a status is not {bundle_id, transactions, slot, confirmation_status, err}');
      }
      const err = s.err as { Ok?: unknown; Err?: unknown } | null | undefined;
      return {
        bundleId: s.bundle_id,
        transactions: (s.transactions as unknown[]).map(String),
        slot: BigInt(s.slot as number),
        confirmationStatus: typeof s.confirmation_status === 'string' ? s.confirmation_status : null,
        err: err === null || err === undefined || 'Ok' in err ? null : (err.Err ?? err),
      };
    });
  }

  /** Pending / Landed / Failed / Invalid (unknown, or older than the block engine's 5-minute window) per id (at most 5). */
  async getInflightBundleStatuses(bundleIds: readonly string[]): Promise<InflightBundleInfo[]> {
    const method = 'getInflightBundleStatuses';
    const { result } = await this.rpc.call(method, [bundleIds]);
    const value = valueOf(result, bundleIds.length);
    if (value === undefined) throw this.rpc.malformed(method, 'value does not match the bundle ids');
    return value.map((v) => {
      const s = v as { bundle_id?: unknown; status?: unknown; landed_slot?: unknown } | null;
      if (s === null || typeof s.bundle_id !== 'string' || typeof s.status !== 'string' || !INFLIGHT_STATUSES.has(s.status)) {
        throw this.rpc.malformed(method, 'a status is not {bundle_id, status, landed_slot}');
      }
      return { bundleId: s.bundle_id, status: s.status as InflightBundleStatus, landedSlot: typeof s.landed_slot === 'number' ? BigInt(s.landed_slot) : null };
    });
  }

  /** The block engine's tip accounts: asked once, then kept (a failed ask is asked again next time). */
  getTipAccounts(): Promise<string[]> {
    this.tipAccounts ??= this.rpc.call('getTipAccounts', []).then(({ result }) => {
      if (!Array.isArray(result) || result.length === 0 || !result.every((a) => typeof a === 'string')) {
        throw this.rpc.malformed('getTipAccounts', 'result is not a non-empty list of addresses');
      }
      return result as string[];
    });
    this.tipAccounts.catch(() => {
      this.tipAccounts = undefined;
    });
    return this.tipAccounts;
  }
}

/** `result.value` when it is a list of `length` items. */
function valueOf(result: unknown, length: number): unknown[] | undefined {
  const value = (result as { value?: unknown } | null)?.value;
  return Array.isArray(value) && value.length === length ? value : undefined;
}
