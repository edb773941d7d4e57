/**
 * The executor's choice of a worker wallet for one trade (spec 03): among the enabled wallets of
 * tier `worker`, the first (least recently used first) whose `lock:executor:{wallet_id}` this
 * executor can take (SET NX, 30 s, released only by its owner) and whose balances cover the trade:
 * the input mint's tokens summed over its token accounts ≥ the input, and lamports ≥ fees + tip + a
 * reserve for the rent of token accounts the route may create (`LAMPORT_RESERVE`).
 *
 * Balances (issue 23): the wallets' state kept in sync here, not read on a trade's path. Read from
 * the chain (getBalance, getTokenAccountsByOwner) at `warm` and whenever what is kept cannot be
 * trusted: none yet, older than `holdingsMaxAgeMs`, forgotten after a trade whose effect is not
 * known (expired, aborted, an error), or short of the need (a top-up the executor did not see is
 * read before a wallet is passed over). A trade that landed adds its balance changes (getTransaction's
 * post − pre of the wallet: lamports, and the trade's mints); one refused before anything was paid
 * changes nothing. The executor's trades are the only ones it sees; another payer's (a rebalancing
 * transfer out) shows when the state is read again, and until then a node's preflight refuses what
 * the wallet cannot pay, which forgets the state.
 *
 * Outcomes: a wallet (locked, with its opened key), or
 * - `busy`: every wallet that could pay is locked by a trade in flight (here or in another
 *   executor): the opportunity should wait and come back, not be dropped;
 * - `none`: no enabled worker wallet holds enough: the opportunity is skipped.
 *
 * Keys are opened once per wallet (scrypt is slow) and kept in memory for the process.
 *
 * A wallet this executor holds for a trade in flight is passed over without asking Redis (its lock
 * cannot be free): with as many trades in flight as wallets, that was one failed SET NX round trip
 * per trade on average before the wallet's balances could be read (issue 23). Give a held wallet
 * back with `release`, never with `held.lock.release()` alone.
 */
import type { Keypair } from '../chain/index.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient } from '../rpc/index.js';
import type { ExecutorLock, KeySpace } from '../state/index.js';
import type { BalanceChanges } from './submission.js';
import { type WalletManager, WalletTier, type WalletRecord } from '../wallets/index.js';

/** Lamports kept aside beyond fees and tip: rent of up to two new token accounts, and change. */
export const LAMPORT_RESERVE = 5_000_000n;

export interface WalletNeed {
  mint: string;
  amount: bigint;
  /** Fees and tip, lamports. */
  lamports: bigint;
}

export interface HeldWallet {
  wallet: WalletRecord;
  keypair: Keypair;
  lock: ExecutorLock;
}

/** A wallet's balances: lamports, tokens by mint over its token accounts, when they were read. */
interface Holdings {
  lamports: bigint;
  tokens: Map<string, bigint>;
  at: number;
}

export type WalletChoice = { kind: 'held'; held: HeldWallet } | { kind: 'busy' } | { kind: 'none'; reason: string };

export interface WorkerWalletsOptions {
  wallets: WalletManager;
  keys: KeySpace;
  chain: ChainClient;
  /** How long the wallet list is reused before it is read again (beside a trade, not before it), ms (default 5,000). */
  listTtlMs?: number;
  /** Lock TTL (spec 03: 30 s; tests shorten it). */
  lockTtlMs?: number;
  /** Balances kept longer than this are read from the chain again before a trade, ms (default 60,000). */
  holdingsMaxAgeMs?: number;
  logger?: Logger;
}

export class WorkerWallets {
  private list: WalletRecord[] = [];
  private listReadAt = -Infinity;
  private listRead: Promise<void> | undefined;
  private readonly keypairs = new Map<string, Keypair>();
  private readonly lastUsed = new Map<string, number>();
  private useCounter = 0;
  /** Wallets this process holds for a trade in flight (their locks are ours). */
  private readonly heldHere = new Set<string>();
  /** What each wallet holds, as last read or settled (see the module comment), by wallet id. */
  private readonly kept = new Map<string, Holdings>();

  constructor(private readonly options: WorkerWalletsOptions) {}

  /**
   * The enabled worker wallets, least recently used first. Read from the database the first time;
   * then, once older than `listTtlMs`, read again beside the trade that noticed it, which takes its
   * wallet from the list as last read (issue 23: that read put a PostgreSQL round trip into one
   * trade's wallet every 5 s, after the pools' re-read when the database was slower).
   */
  private async candidates(): Promise<WalletRecord[]> {
    if (Date.now() - this.listReadAt > (this.options.listTtlMs ?? 5_000)) {
      const read = this.readList();
      if (this.listReadAt === -Infinity) await read;
      else read.catch((err: unknown) => this.options.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'worker wallet list not read again; the last one is used'));
    }
    return [...this.list].sort((a, b) => (this.lastUsed.get(a.id) ?? -1) - (this.lastUsed.get(b.id) ?? -1));
  }

  /** Reads the wallet list, one read at a time. */
  private readList(): Promise<void> {
    this.listRead ??= this.options.wallets.repo
      .list({ tier: WalletTier.Worker, enabled: true })
      .then((list) => {
        this.list = list;
        this.listReadAt = Date.now();
      })
      .finally(() => {
        this.listRead = undefined;
      });
    return this.listRead;
  }

  /**
   * Opens the keys of every enabled worker wallet now, so that no trade waits for a key's scrypt
   * derivation (about a hundred milliseconds each) at its first use. Returns how many were opened.
   */
  async warm(): Promise<number> {
    const list = await this.candidates();
    for (const wallet of list) await this.keypairOf(wallet);
    // Their balances too, so that no trade reads them on its path; one that fails is read at its first trade.
    await Promise.all(list.map((w) => this.readHoldings(w).catch((err: unknown) => this.options.logger?.warn({ wallet: w.address, err: err instanceof Error ? err.message : String(err) }, 'worker wallet balances not read; read at its first trade'))));
    return list.length;
  }

  /** The balances kept for a wallet (lamports, tokens by mint), or undefined when none are. */
  holdingsOf(walletId: string): { lamports: bigint; tokens: ReadonlyMap<string, bigint> } | undefined {
    const h = this.kept.get(walletId);
    return h === undefined ? undefined : { lamports: h.lamports, tokens: h.tokens };
  }

  /** The wallet's key, opened once. */
  async keypairOf(wallet: WalletRecord): Promise<Keypair> {
    let kp = this.keypairs.get(wallet.id);
    if (kp === undefined) {
      kp = await this.options.wallets.signer(wallet);
      this.keypairs.set(wallet.id, kp);
    }
    return kp;
  }

  /** What `wallet` holds now, read from the chain and kept. */
  private async readHoldings(wallet: WalletRecord): Promise<Holdings> {
    const at = Date.now();
    const [lamports, accounts] = await Promise.all([this.options.chain.getBalance(wallet.address), this.options.chain.getTokenAccountsByOwner(wallet.address)]);
    const tokens = new Map<string, bigint>();
    for (const a of accounts) tokens.set(a.mint, (tokens.get(a.mint) ?? 0n) + a.amount);
    const h: Holdings = { lamports, tokens, at };
    this.kept.set(wallet.id, h);
    return h;
  }

  /** Whether `wallet` can pay `need`: from the kept balances when they are trusted and enough, else read from the chain. */
  private async covers(wallet: WalletRecord, need: WalletNeed): Promise<boolean> {
    const enough = (h: Holdings): boolean => (h.tokens.get(need.mint) ?? 0n) >= need.amount && h.lamports >= need.lamports + LAMPORT_RESERVE;
    const h = this.kept.get(wallet.id);
    if (h !== undefined && Date.now() - h.at <= (this.options.holdingsMaxAgeMs ?? 60_000) && enough(h)) return true;
    return enough(await this.readHoldings(wallet));
  }

  /** Locks and returns a wallet that can pay `need` (see the module comment). */
  async acquire(need: WalletNeed, transactionId: string): Promise<WalletChoice> {
    let locked = 0;
    const list = await this.candidates();
    if (list.length === 0) return { kind: 'none', reason: 'no enabled worker wallet' };
    for (const wallet of list) {
      if (this.heldHere.has(wallet.id)) {
        locked++;
        continue;
      }
      const lock = await this.options.keys.acquireExecutorLock(wallet.id, transactionId, ...(this.options.lockTtlMs === undefined ? [] : [this.options.lockTtlMs]));
      if (lock === null) {
        locked++;
        continue;
      }
      try {
        if (await this.covers(wallet, need)) {
          const keypair = await this.keypairOf(wallet);
          this.lastUsed.set(wallet.id, ++this.useCounter);
          this.heldHere.add(wallet.id);
          return { kind: 'held', held: { wallet, keypair, lock } };
        }
      } catch (err) {
        await lock.release().catch(() => false);
        throw err;
      }
      await lock.release();
    }
    // Locked wallets may be the ones with the funds: wait for them rather than drop the trade.
    if (locked > 0) return { kind: 'busy' };
    return { kind: 'none', reason: `no enabled worker wallet holds ${need.amount} of ${need.mint} and ${need.lamports + LAMPORT_RESERVE} lamports` };
  }

  /** The address of a wallet id, or undefined. */
  async addressOf(walletId: string): Promise<string | undefined> {
    return this.list.find((w) => w.id === walletId)?.address ?? (await this.options.wallets.repo.byId(walletId))?.address;
  }

  /** A specific wallet (a redelivered trade's), locked; null while another trade holds it. */
  async acquireById(walletId: string, transactionId: string): Promise<HeldWallet | null> {
    const wallet = await this.options.wallets.repo.byId(walletId);
    if (wallet === null || this.heldHere.has(wallet.id)) return null;
    const keypair = await this.keypairOf(wallet);
    const lock = await this.options.keys.acquireExecutorLock(wallet.id, transactionId, ...(this.options.lockTtlMs === undefined ? [] : [this.options.lockTtlMs]));
    if (lock === null) return null;
    this.heldHere.add(wallet.id);
    return { wallet, keypair, lock };
  }

  /**
   * Gives a held wallet back: its lock released, and free again for this executor's next trade.
   * `spent` is what the trade did to its balances: the balance changes of a landed trade (added to
   * the kept balances), null when nothing was paid (a trade refused before or at its send), or
   * undefined when not known (the kept balances are forgotten: read again at its next trade).
   */
  async release(held: HeldWallet, spent?: Pick<BalanceChanges, 'lamports' | 'tokens'> | null): Promise<boolean> {
    const id = held.wallet.id;
    if (spent === undefined) this.kept.delete(id);
    else if (spent !== null) {
      const h = this.kept.get(id);
      if (h !== undefined) {
        h.lamports += spent.lamports;
        for (const [mint, change] of spent.tokens) h.tokens.set(mint, (h.tokens.get(mint) ?? 0n) + change);
      }
    }
    this.heldHere.delete(id);
    return held.lock.release();
  }
}
