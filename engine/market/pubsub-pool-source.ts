/**
 * The market scanner's websocket mode (spec 03: `websocket` via `accountSubscribe`): pool states
 * pushed by a Solana PubSub node instead of read on a timer.
 *
 *   one WebSocket (UpstreamPubsub, the rpc-proxy's PubSub client) ─▶ accountSubscribe per pool
 *   (base64, the RPC reads' commitment) ─▶ accountNotification ─▶ the pool account from the
 *   notification, its context accounts (vaults, tick or bin arrays, AmmConfig) by RPC, decoded by
 *   the same RpcPoolLoader as rpc-polling ─▶ onState (the MarketDataSink)
 *
 * The pool account is never read by RPC while subscribed: `PushedAccountReader` answers the
 * loader with the bytes of the last notification and reads every other account through the RPC
 * fetcher. After every (re)subscription all pools are loaded once by RPC alone, so a state changed
 * while the connection was down is not lost (the node sends no state at subscription).
 *
 * A Raydium AMM v4 swap does not write its pool account (AmmInfo): the reserves are the balances
 * of its two vault token accounts. Once such a pool is loaded its vaults are subscribed too, and
 * a vault's notification loads the pool again (both vaults then come from RPC, so the two balances
 * are read together rather than one pushed and the other older).
 *
 * A lost connection (close, error, missed pong, a subscribe that fails or times out) is opened
 * again after the Backoff delay and every pool subscribed again; the backoff is reset once all
 * are subscribed. A notification that is not an account notification of ours, or whose value is
 * not a base64 account, is counted in `stats.malformed` and skipped. Loads of one pool run one at
 * a time in notification order, so an older state never overtakes a newer one.
 */
import { Backoff, type BackoffOptions } from '../common/index.js';
import { Dex, reserveAccountsOf } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import type { LoadedPool, RpcPoolLoader } from '../pools/index.js';
import type { AccountData, AccountReader } from '../rpc/index.js';
import { connectionLost, UpstreamPubsub, type Notification, type PubsubPeer } from '../rpc-proxy/index.js';

/** Pool accounts are a few KB; a DLMM or CLMM pool with its extension stays well below this. */
const MAX_NOTIFICATION_BYTES = 1 << 20;
const DEFAULT_CALL_TIMEOUT_MS = 10_000;
const MAX_EARLY_NOTIFICATIONS = 1024;

export interface PubsubPoolSourceStats {
  /** Connections opened (the first one included). */
  connects: number;
  /** accountSubscribe calls answered with a subscription id (pools and AMM v4 vaults). */
  subscriptions: number;
  /** Account notifications of a watched pool. */
  notifications: number;
  /** Messages skipped: not an account notification of ours, or not a base64 account. */
  malformed: number;
  /** Pool loads (notification or catch-up) that failed (RPC read of a context account, decode). */
  loadFailures: number;
}

export interface PubsubPoolSourceOptions {
  /** The PubSub URL, ws:// or wss://. */
  wsUrl: string;
  /** The pool accounts subscribed to. */
  accounts: readonly string[];
  /** The loader of the RPC reads (its fetcher is wrapped so the pool account comes from the notification). */
  createLoader: (reader: AccountReader) => RpcPoolLoader;
  /** The RPC fetcher: context accounts, and the catch-up loads. */
  fetcher: AccountReader;
  /** Each loaded pool state; a rejection is logged, never fatal. */
  onState: (pool: LoadedPool) => Promise<void>;
  /** Default 'processed', as the RPC reads. */
  commitment?: 'processed' | 'confirmed' | 'finalized';
  backoff?: BackoffOptions;
  callTimeoutMs?: number;
  logger?: Logger;
}

/** The loader's reader: the pushed pool accounts from memory, everything else by RPC. */
export class PushedAccountReader implements AccountReader {
  readonly pushed = new Map<string, AccountData>();

  constructor(private readonly inner: AccountReader) {}

  fetch(address: string, options?: { fresh?: boolean }): Promise<AccountData | null> {
    const pushed = this.pushed.get(address);
    return pushed === undefined ? this.inner.fetch(address, options) : Promise.resolve(pushed);
  }

  get stats() {
    return this.inner.stats;
  }
  get queued(): number {
    return this.inner.queued;
  }
  get outstanding(): number {
    return this.inner.outstanding;
  }
}

/** The account of an accountNotification's `params.result`, or a reason it is not one. */
export function accountOfNotification(message: unknown): { subscription: number; account: AccountData } | string {
  if (typeof message !== 'object' || message === null) return 'not a JSON object';
  const m = message as { method?: unknown; params?: { subscription?: unknown; result?: { context?: { slot?: unknown }; value?: Record<string, unknown> | null } } };
  if (m.method !== 'accountNotification') return `method ${String(m.method)} is not accountNotification`;
  const subscription = m.params?.subscription;
  if (typeof subscription !== 'number' || !Number.isSafeInteger(subscription)) return 'no subscription id';
  const slot = m.params?.result?.context?.slot;
  if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) return 'no context.slot';
  const value = m.params?.result?.value;
  if (typeof value !== 'object' || value === null) return 'no value';
  const data = value['data'];
  if (!Array.isArray(data) || data.length !== 2 || data[1] !== 'base64' || typeof data[0] !== 'string') return 'value.data is not [base64, "base64"]';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data[0]) || data[0].length % 4 !== 0) return 'value.data is not base64';
  const owner = value['owner'];
  if (typeof owner !== 'string' || owner.length === 0) return 'no value.owner';
  const lamports = value['lamports'];
  if (typeof lamports !== 'number' || !Number.isSafeInteger(lamports) || lamports < 0) return 'no value.lamports';
  return {
    subscription,
    account: { data: new Uint8Array(Buffer.from(data[0], 'base64')), owner, lamports: BigInt(lamports), executable: value['executable'] === true, slot: BigInt(slot) },
  };
}

export class PubsubPoolSource {
  readonly stats: PubsubPoolSourceStats = { connects: 0, subscriptions: 0, notifications: 0, malformed: 0, loadFailures: 0 };
  private readonly peer: PubsubPeer;
  private readonly reader: PushedAccountReader;
  private readonly loader: RpcPoolLoader;
  private readonly backoff: Backoff;
  private readonly commitment: string;
  private readonly callTimeoutMs: number;
  private conn: UpstreamPubsub<PubsubPeer> | undefined;
  /** Subscription id → pool address, for the current connection. */
  private readonly bySubscription = new Map<number, string>();
  /** Subscription id → the pool of an AMM v4 vault subscribed on the current connection. */
  private readonly vaultSubscriptions = new Map<number, string>();
  /** Vaults subscribed (or being subscribed) on the current connection. */
  private readonly watchedVaults = new Set<string>();
  /** The last load of each pool: the next one waits for it. */
  private readonly loads = new Map<string, Promise<void>>();
  /**
   * Notifications that came before their accountSubscribe answer was handled (a node may notify
   * at once, and several messages can arrive in one turn): replayed once the id is known, counted
   * malformed when no subscription claims them.
   */
  private early: { n: Notification; bytes: Buffer }[] | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: PubsubPoolSourceOptions) {
    this.peer = { name: 'pubsub', wsUrl: options.wsUrl };
    this.reader = new PushedAccountReader(options.fetcher);
    this.loader = options.createLoader(this.reader);
    this.backoff = new Backoff(options.backoff);
    this.commitment = options.commitment ?? 'processed';
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /** Pools subscribed on the current connection. */
  get subscribed(): number {
    return this.bySubscription.size;
  }

  /** AMM vault accounts subscribed on the current connection (after the pool's first load on it). */
  get vaultsSubscribed(): number {
    return this.vaultSubscriptions.size;
  }

  /** Opens the connection; subscriptions and the catch-up load follow in the background. */
  start(): void {
    this.connect();
  }

  /** Closes the connection and waits for the loads in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.conn?.close('market scanner closing');
    await Promise.all(this.loads.values());
  }

  private connect(): void {
    if (this.closed) return;
    this.stats.connects++;
    this.bySubscription.clear();
    this.vaultSubscriptions.clear();
    this.watchedVaults.clear();
    const conn = new UpstreamPubsub<PubsubPeer>(
      this.peer,
      {
        onNotification: (c, n, bytes) => this.onNotification(c, n, bytes),
        onLost: (c, reason) => this.onLost(c, reason),
        onUnreadable: (c, bytes) => {
          if (c !== this.conn) return;
          this.stats.malformed++;
          this.options.logger?.warn({ bytes: bytes.length }, 'market scanner skipped a PubSub message that is neither a notification nor an answer');
        },
      },
      { timeoutMs: this.callTimeoutMs, maxPayload: MAX_NOTIFICATION_BYTES },
    );
    this.conn = conn;
    void this.subscribeAll(conn);
  }

  private async subscribeAll(conn: UpstreamPubsub<PubsubPeer>): Promise<void> {
    try {
      await conn.ready;
      // The pool accounts come from RPC again until their first notification on this connection.
      this.reader.pushed.clear();
      this.early = [];
      for (const address of this.options.accounts) {
        const answer = await conn.call('accountSubscribe', Buffer.from(JSON.stringify([address, { encoding: 'base64', commitment: this.commitment }])));
        if ('error' in answer) throw connectionLost(`accountSubscribe ${address}: ${answer.error.toString('utf8')}`);
        const id = Number(answer.result.toString('latin1'));
        if (!Number.isSafeInteger(id) || id < 0) throw connectionLost(`accountSubscribe ${address} answered ${answer.result.toString('utf8')}, not a subscription id`);
        this.bySubscription.set(id, address);
        this.stats.subscriptions++;
        const early: { n: Notification; bytes: Buffer }[] = this.early ?? [];
        this.early = early.filter((e) => e.n.subscription !== id);
        for (const e of early) if (e.n.subscription === id) this.onNotification(conn, e.n, e.bytes);
      }
      this.dropEarly();
      this.backoff.reset();
      this.options.logger?.info({ wsUrl: this.peer.wsUrl, pools: this.bySubscription.size }, 'market scanner subscribed to its pools');
      for (const address of this.options.accounts) this.enqueue(address);
    } catch (err) {
      this.dropEarly();
      if (conn.isLost) return; // onLost schedules the next attempt
      this.options.logger?.warn({ err }, 'market scanner could not subscribe; connecting again');
      conn.close(err instanceof Error ? err.message : String(err));
    }
  }

  private onNotification(conn: UpstreamPubsub<PubsubPeer>, n: Notification, bytes: Buffer): void {
    if (conn !== this.conn) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const got = accountOfNotification(parsed);
    const vaultOf = this.vaultSubscriptions.get(n.subscription);
    if (typeof got !== 'string' && vaultOf !== undefined) {
      this.stats.notifications++;
      this.enqueue(vaultOf);
      return;
    }
    const address = this.bySubscription.get(n.subscription);
    if (typeof got !== 'string' && address === undefined && this.early !== undefined && this.early.length < MAX_EARLY_NOTIFICATIONS) {
      this.early.push({ n, bytes });
      return;
    }
    if (typeof got === 'string' || address === undefined) {
      this.stats.malformed++;
      this.options.logger?.warn({ reason: typeof got === 'string' ? got : `subscription ${n.subscription} is not ours`, method: n.method }, 'market scanner skipped a PubSub message');
      return;
    }
    this.stats.notifications++;
    const previous = this.reader.pushed.get(address);
    if (previous !== undefined && previous.slot > got.account.slot) return;
    this.reader.pushed.set(address, got.account);
    this.enqueue(address);
  }

  private dropEarly(): void {
    for (const e of this.early ?? []) {
      this.stats.malformed++;
      this.options.logger?.warn({ subscription: e.n.subscription }, 'market scanner skipped a notification of a subscription that is not ours');
    }
    this.early = undefined;
  }

  /**
   * Subscribes the vaults of an AMM v4 pool (its reserves) once per connection. A failed subscribe
   * loses the connection, as a pool's does: the next one subscribes everything again.
   */
  private async watchVaults(loaded: LoadedPool): Promise<void> {
    const conn = this.conn;
    if (conn === undefined || conn.isLost || loaded.dex !== Dex.Amm) return;
    const vaults = reserveAccountsOf(loaded.pool) ?? [];
    let added = false;
    for (const vault of vaults) {
      if (this.watchedVaults.has(vault)) continue;
      this.watchedVaults.add(vault);
      try {
        const answer = await conn.call('accountSubscribe', Buffer.from(JSON.stringify([vault, { encoding: 'base64', commitment: this.commitment }])));
        if ('error' in answer) throw connectionLost(`accountSubscribe ${vault}: ${answer.error.toString('utf8')}`);
        const id = Number(answer.result.toString('latin1'));
        if (!Number.isSafeInteger(id) || id < 0) throw connectionLost(`accountSubscribe ${vault} answered ${answer.result.toString('utf8')}, not a subscription id`);
        if (conn !== this.conn) return;
        this.vaultSubscriptions.set(id, loaded.address);
        this.stats.subscriptions++;
        added = true;
      } catch (err) {
        if (conn.isLost || conn !== this.conn) return;
        this.options.logger?.warn({ err, pool: loaded.address, vault }, 'market scanner could not subscribe to a vault; connecting again');
        conn.close(err instanceof Error ? err.message : String(err));
        return;
      }
    }
    // A swap between the load and the subscriptions notified nobody: load once more.
    if (added) this.enqueue(loaded.address);
  }

  private onLost(conn: UpstreamPubsub<PubsubPeer>, reason: string): void {
    if (conn !== this.conn || this.closed) return;
    this.bySubscription.clear();
    this.vaultSubscriptions.clear();
    this.watchedVaults.clear();
    const delay = this.backoff.next();
    this.options.logger?.warn({ reason, retryInMs: Math.round(delay) }, 'market scanner PubSub connection lost');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect();
    }, delay);
  }

  /** Loads the pool after its previous load (pushed account, RPC context) and hands the state on. */
  private enqueue(address: string): void {
    const previous = this.loads.get(address) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        const [result] = await this.loader.load([address]);
        if (result === undefined) return;
        if (!result.ok) {
          this.stats.loadFailures++;
          this.options.logger?.warn({ pool: address, reason: result.error.reason, message: result.error.message }, 'market scanner could not load a pool');
          return;
        }
        void this.watchVaults(result.value);
        await this.options.onState(result.value);
      } catch (err) {
        this.stats.loadFailures++;
        this.options.logger?.error({ err, pool: address }, 'market scanner pool update failed');
      }
    });
    this.loads.set(address, next);
    void next.finally(() => {
      if (this.loads.get(address) === next) this.loads.delete(address);
    });
  }
}
