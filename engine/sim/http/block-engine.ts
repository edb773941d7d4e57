import type { Logger } from '../../obs/index.js';
import { rpcError, type ChainBackend, type BundleStatus } from '../chain-backend.js';
import { FaultInjector } from '../faults.js';
import { deriveBundleId, firstSignature, transactionId } from './bundle-id.js';
import { decodeTransaction, invalidParams, serveJsonRpc, txEncoding, type JsonRpcMethod } from './json-rpc.js';
import type { RouteRegistry } from './router.js';

/**
 * The Jito block engine's JSON-RPC API (docs/wire-formats.md §8): sendBundle,
 * getBundleStatuses, getTipAccounts and getInflightBundleStatuses, plus the transaction proxy.
 * The bundle methods answer on every block-engine path, so a client using either the bundles
 * endpoint or the per-method endpoints works.
 */

export const BlockEnginePath = {
  Bundles: '/api/v1/bundles',
  InflightBundleStatuses: '/api/v1/getInflightBundleStatuses',
  BundleStatuses: '/api/v1/getBundleStatuses',
  TipAccounts: '/api/v1/getTipAccounts',
  Transactions: '/api/v1/transactions',
} as const;

export const MAX_BUNDLE_TRANSACTIONS = 5;
/** Ids per getBundleStatuses / getInflightBundleStatuses call. */
export const MAX_BUNDLE_IDS_PER_QUERY = 5;
/** getInflightBundleStatuses looks back this far. */
export const INFLIGHT_WINDOW_MS = 5 * 60 * 1000;
/** Error the block engine answers when no leader will take a bundle soon; used for rejectBundles. */
export const BUNDLE_DROPPED_CODE = -32000;
export const BUNDLE_DROPPED_MESSAGE = 'Bundle Dropped, no connected leader up soon';

export type BlockEngineBackend = Pick<ChainBackend, 'slot' | 'sendBundle' | 'bundleStatus' | 'tipAccounts' | 'sendTransaction'>;

export interface BlockEngineOptions {
  backend: BlockEngineBackend;
  /** `rejectBundles` makes sendBundle fail as the block engine does when it drops a bundle. */
  faults?: FaultInjector;
  logger: Logger;
  /** Clock for the in-flight window; tests pass their own. */
  now?: () => number;
}

export type InflightStatus = 'Invalid' | 'Pending' | 'Failed' | 'Landed';

export interface BlockEngineStats {
  bundlesAccepted: number;
  bundlesRejected: number;
  transactionsForwarded: number;
}

export class BlockEngine {
  private readonly backend: BlockEngineBackend;
  private readonly faults: FaultInjector;
  private readonly log: Logger;
  private readonly now: () => number;
  /** Accepted bundle id → time accepted, insertion-ordered so expiry pops from the front. */
  private readonly inflight = new Map<string, number>();
  private warnedIdMismatch = false;
  private readonly counters: BlockEngineStats = { bundlesAccepted: 0, bundlesRejected: 0, transactionsForwarded: 0 };
  private readonly bundleMethods: ReadonlyMap<string, JsonRpcMethod>;
  private readonly transactionMethods: ReadonlyMap<string, JsonRpcMethod>;

  constructor(options: BlockEngineOptions) {
    this.backend = options.backend;
    this.faults = options.faults ?? new FaultInjector();
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.bundleMethods = new Map<string, JsonRpcMethod>([
      ['sendBundle', (params) => this.sendBundle(params)],
      ['getBundleStatuses', (params) => this.getBundleStatuses(params)],
      ['getInflightBundleStatuses', (params) => this.getInflightBundleStatuses(params)],
      ['getTipAccounts', () => this.backend.tipAccounts()],
    ]);
    this.transactionMethods = new Map<string, JsonRpcMethod>([
      ['sendTransaction', (params, req, res) => {
        const bundleOnly = new URL(req.url ?? '/', 'http://sim.local').searchParams.get('bundleOnly') === 'true';
        return this.sendTransaction(params, bundleOnly, (id) => res.setHeader('x-bundle-id', id));
      }],
    ]);
  }

  /** Plugs the block-engine routes into `server`. */
  mount(server: RouteRegistry): this {
    const onInternal = (err: unknown, method: string): void => this.log.error({ err, method }, 'block engine method failed');
    const bundles = (req: Parameters<typeof serveJsonRpc>[0], res: Parameters<typeof serveJsonRpc>[1]) =>
      serveJsonRpc(req, res, this.bundleMethods, onInternal);
    server.route('POST', BlockEnginePath.Bundles, bundles);
    server.route('POST', BlockEnginePath.InflightBundleStatuses, bundles);
    server.route('POST', BlockEnginePath.BundleStatuses, bundles);
    server.route('POST', BlockEnginePath.TipAccounts, bundles);
    server.route('POST', BlockEnginePath.Transactions, (req, res) => serveJsonRpc(req, res, this.transactionMethods, onInternal));
    return this;
  }

  stats(): BlockEngineStats {
    return { ...this.counters };
  }

  /** params: [[tx…≤5], {encoding}?] → bundle id. */
  sendBundle(params: unknown[]): string {
    const [txsParam, config] = params;
    if (!Array.isArray(txsParam)) throw invalidParams('the first parameter must be a list of transactions');
    if (txsParam.length === 0) throw invalidParams('a bundle needs at least one transaction');
    if (txsParam.length > MAX_BUNDLE_TRANSACTIONS) {
      throw invalidParams(`a bundle holds at most ${MAX_BUNDLE_TRANSACTIONS} transactions, got ${txsParam.length}`);
    }
    const encoding = txEncoding(config);
    const txs = txsParam.map((text, i) => {
      const tx = decodeTransaction(text, encoding, i);
      if (firstSignature(tx) === undefined) throw invalidParams(`transaction ${i} could not be deserialized`);
      return tx;
    });
    if (this.faults.rejectBundles) {
      this.counters.bundlesRejected++;
      throw rpcError(BUNDLE_DROPPED_CODE, BUNDLE_DROPPED_MESSAGE);
    }
    return this.acceptBundle(txs);
  }

  /** params: [[bundle_id ≤5]] → RpcResponse, value[i] null when the bundle has not landed. */
  getBundleStatuses(params: unknown[]): { context: { slot: number }; value: (object | null)[] } {
    const ids = bundleIds(params);
    return {
      context: { slot: Number(this.backend.slot()) },
      value: ids.map((id) => {
        const status = this.backend.bundleStatus(id);
        return status === null ? null : statusJson(status);
      }),
    };
  }

  /** params: [[bundle_id ≤5]] → RpcResponse of {bundle_id, status, landed_slot}. */
  getInflightBundleStatuses(params: unknown[]): {
    context: { slot: number };
    value: { bundle_id: string; status: InflightStatus; landed_slot: number | null }[];
  } {
    const ids = bundleIds(params);
    this.expireInflight();
    return {
      context: { slot: Number(this.backend.slot()) },
      value: ids.map((id) => {
        const status = this.backend.bundleStatus(id);
        if (status !== null) {
          const landed = status.err === null || status.err === undefined;
          return { bundle_id: id, status: landed ? 'Landed' : 'Failed', landed_slot: landed ? Number(status.slot) : null };
        }
        return { bundle_id: id, status: this.inflight.has(id) ? 'Pending' : 'Invalid', landed_slot: null };
      }),
    };
  }

  /**
   * The transaction proxy: params [tx, {encoding}?] → signature. Forwarded with preflight skipped,
   * as the block engine forwards; with bundleOnly it goes as a one-transaction bundle instead.
   */
  sendTransaction(params: unknown[], bundleOnly: boolean, onBundleId: (id: string) => void): string {
    const [text, config] = params;
    const tx = decodeTransaction(text, txEncoding(config), 0);
    if (firstSignature(tx) === undefined) throw invalidParams('transaction 0 could not be deserialized');
    if (bundleOnly) {
      if (this.faults.rejectBundles) {
        this.counters.bundlesRejected++;
        throw rpcError(BUNDLE_DROPPED_CODE, BUNDLE_DROPPED_MESSAGE);
      }
      onBundleId(this.acceptBundle([tx]));
      return transactionId(tx);
    }
    const signature = this.backend.sendTransaction(tx, { skipPreflight: true });
    this.counters.transactionsForwarded++;
    return signature;
  }

  private acceptBundle(txs: Uint8Array[]): string {
    const id = this.backend.sendBundle(txs);
    const derived = deriveBundleId(txs);
    if (id !== derived && !this.warnedIdMismatch) {
      this.warnedIdMismatch = true;
      this.log.warn({ backendId: id, jitoId: derived }, 'chain bundle id differs from the Jito derivation (deriveBundleId)');
    }
    this.counters.bundlesAccepted++;
    this.expireInflight();
    this.inflight.delete(id); // re-inserted at the back, keeping the map in time order
    this.inflight.set(id, this.now());
    return id;
  }

  private expireInflight(): void {
    const horizon = this.now() - INFLIGHT_WINDOW_MS;
    for (const [id, at] of this.inflight) {
      if (at > horizon) break;
      this.inflight.delete(id);
    }
  }
}

function bundleIds(params: unknown[]): string[] {
  const ids = params[0];
  if (!Array.isArray(ids) || ids.length === 0) throw invalidParams('the first parameter must be a non-empty list of bundle ids');
  if (ids.length > MAX_BUNDLE_IDS_PER_QUERY) {
    throw invalidParams(`at most ${MAX_BUNDLE_IDS_PER_QUERY} bundle ids per request, got ${ids.length}`);
  }
  for (const [i, id] of ids.entries()) {
    if (typeof id !== 'string' || id.length === 0) throw invalidParams(`bundle id ${i} must be a string`);
  }
  return ids as string[];
}

/** A landed bundle as getBundleStatuses reports it; err is the Rust Result, {Ok: null} on success. */
function statusJson(status: BundleStatus): object {
  return {
    bundle_id: status.bundleId,
    transactions: status.transactions,
    slot: Number(status.slot),
    confirmation_status: status.confirmationStatus,
    err: status.err === null || status.err === undefined ? { Ok: null } : { Err: status.err },
  };
}
