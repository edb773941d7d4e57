/**
 * `scanner.stateSource` geyser: the scanner's pool state taken from a Yellowstone gRPC (Geyser)
 * account stream instead of being re-read over RPC after each block entry.
 *
 * - `reader` (StreamedAccountReader) answers the pool loader's reads from the stream's held accounts
 *   (first read of an account over RPC, then followed on the stream), so decoding, the event and the
 *   sink (the pool cache, or the bus) are the block-entry path's, unchanged.
 * - `track(loader)` wraps the loader to learn which accounts (pool, vaults, tick or bin arrays) each
 *   pool was read from, and stamps each loaded state with the version of the newest write it
 *   includes: `slot` = the newest slot among its accounts' held writes, `writeVersion` = the highest
 *   write version within that slot. So a tick or bin array written without its pool account moves
 *   the state forward (the cache and the scanner order states by slot, then write version).
 * - `attach(scanner)`: an applied write (slot/write-version rule of GeyserAccountStream) of any of a
 *   pool's accounts makes the scanner read and publish that pool again, under the signature of the
 *   transaction that wrote it (txn_signature), once per pool and transaction. A transaction's writes
 *   arrive together (one socket write of the server) and in a row: the refresh of a transaction's
 *   pools starts as soon as the stream moves past it (a write of another transaction, or a slot
 *   update), without waiting for the rest of what arrived with it to be decoded; the last
 *   transaction of a read is refreshed at the end of the turn (setImmediate), when nothing more of
 *   it can be in that read. The stream's slots drive the scanner's
 *   slot clock and liveness (/health). Each monitored pool is read once when the stream is live (at
 *   its first slot, or the first after the pool joined), so every account of it is followed from
 *   then on even if the pool account itself is never written.
 */
import { performance } from 'node:perf_hooks';

import { DEFAULT_ARRAYS_EACH_SIDE, Dex, arrayBitmapOf, currentArrayKey, lookaheadArrayKeys, swapArrayAddress, type DecodedPool } from '../dex/index.js';
import { invalidArgument } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { PoolLoader, PoolLoadResult } from '../pools/index.js';
import type { AccountReader, MultipleAccountsResult } from '../rpc/index.js';
import { GeyserAccountStream, type AccountUpdate } from './geyser-stream.js';
import type { Scanner } from './scanner.js';
import { StreamedAccountReader } from './streamed-account-reader.js';

export interface GeyserStateSourceOptions {
  /** host:port of the Geyser endpoint (scanner-config geyserEndpoint). */
  endpoint: string;
  /** Monitored pools at start. */
  pools: readonly string[];
  /** RPC reads for accounts not yet held. */
  fallback: AccountReader;
  /** One getMultipleAccounts: the gap heal. */
  readAccounts: (addresses: readonly string[]) => Promise<MultipleAccountsResult>;
  logger: Logger;
  /** Arrays followed ahead of each pool's read window, each side (scanner.geyserArraysAhead). Default DEFAULT_GEYSER_ARRAYS_AHEAD. */
  arraysAhead?: number;
  /** The pool loader's arraysEachSide. Default DEFAULT_ARRAYS_EACH_SIDE. */
  arraysEachSide?: number;
}

/** Arrays followed ahead of a pool's read window on each side, by default. */
export const DEFAULT_GEYSER_ARRAYS_AHEAD = 2;
/** Most arrays followed ahead on each side (with the loader's window, within lookaheadArrayKeys' 64). */
export const MAX_GEYSER_ARRAYS_AHEAD = 16;
/** Array addresses remembered per pool (PDA derivations cost a few sha256 and curve checks each). */
const MAX_REMEMBERED_ARRAY_ADDRESSES = 256;

/** What the arrays ahead of a pool were last chosen from. */
interface AheadMemo {
  /** The decoded pool of the last load looked at (an unchanged pool account decodes to the same object). */
  pool: DecodedPool;
  center: number | undefined;
  bitmap: readonly bigint[] | undefined;
  /** Array key → address. */
  addresses: Map<number, string>;
}

/** One transaction's write of a pool's account, waiting for the refresh. */
interface PendingWrite {
  slot: bigint;
  /** 64 bytes; undefined when the stream did not name the transaction (or an RPC heal). */
  signature: Uint8Array | undefined;
  receivedAt: number;
}

export class GeyserStateSource {
  readonly stream: GeyserAccountStream;
  readonly reader: StreamedAccountReader;
  /** Pools read from each followed account. */
  private readonly poolsOf = new Map<string, Set<string>>();
  /** Pools to refresh at the next turn: per pool, each writing transaction (by signature) with its slot. */
  private readonly pending = new Map<string, Map<string, PendingWrite>>();
  /** The transaction (signature key) whose writes are arriving; undefined when nothing is pending. */
  private arriving: string | undefined;
  private flushScheduled = false;
  /** Monitored pools, as of the scanner's list `monitoredOf` (rebuilt when it changes). */
  private monitored = new Set<string>();
  private monitoredOf: readonly string[] | undefined;
  /** Monitored pools read once through `track` (their accounts followed), or asked to be. */
  private readonly primed = new Set<string>();
  private scanner: Scanner | undefined;
  private readonly arraysAhead: number;
  private readonly arraysEachSide: number;
  private readonly ahead = new Map<string, AheadMemo>();
  private readonly log: Logger;

  constructor(options: GeyserStateSourceOptions) {
    for (const pool of options.pools) this.poolsOf.set(pool, new Set([pool]));
    this.stream = new GeyserAccountStream({
      endpoint: options.endpoint,
      accounts: options.pools,
      readAccounts: options.readAccounts,
      onUpdate: (u) => this.onUpdate(u),
      onSlot: (slot) => this.onSlot(slot),
      logger: options.logger.child({ component: 'geyser' }),
    });
    this.reader = new StreamedAccountReader(this.stream, options.fallback, options.pools, options.readAccounts);
    this.arraysAhead = options.arraysAhead ?? DEFAULT_GEYSER_ARRAYS_AHEAD;
    this.arraysEachSide = options.arraysEachSide ?? DEFAULT_ARRAYS_EACH_SIDE;
    // lookaheadArrayKeys takes at most 64 arrays each side in all.
    const most = Math.min(MAX_GEYSER_ARRAYS_AHEAD, 64 - this.arraysEachSide);
    if (!Number.isInteger(this.arraysAhead) || this.arraysAhead < 0 || this.arraysAhead > most) {
      throw invalidArgument('arraysAhead', this.arraysAhead, `arraysAhead must be 0..${most}, got ${this.arraysAhead}`);
    }
    this.log = options.logger;
  }

  /** `loader`, recording the accounts each pool it loads was read from (LoadedPool.accounts). */
  track(loader: PoolLoader): PoolLoader {
    return {
      load: async (addresses, options) => {
        for (const address of addresses) this.primed.add(address);
        const results: PoolLoadResult[] = await loader.load(addresses, options);
        for (const r of results) {
          if (!r.ok || r.value.accounts === undefined) continue;
          let slot = r.value.slot;
          let writeVersion = 0n;
          for (const account of r.value.accounts.keys()) {
            let pools = this.poolsOf.get(account);
            if (pools === undefined) this.poolsOf.set(account, (pools = new Set()));
            pools.add(r.value.address);
            const held = this.stream.get(account);
            if (held === undefined || held.slot < slot) continue;
            if (held.slot > slot) {
              slot = held.slot;
              writeVersion = held.writeVersion;
            } else if (held.writeVersion > writeVersion) writeVersion = held.writeVersion;
          }
          r.value.slot = slot;
          if (writeVersion > 0n) r.value.writeVersion = writeVersion;
        }
        // After the results are handed back: the derivations and reads ahead stay off the load's path.
        if (this.arraysAhead > 0) setImmediate(() => this.followAhead(results));
        return results;
      },
    };
  }

  /** Follows and reads the arrays ahead of each loaded pool whose current array or bitmap moved. */
  private followAhead(results: readonly PoolLoadResult[]): void {
    const addresses: string[] = [];
    for (const r of results) {
      if (!r.ok || r.value.pool.dex === Dex.Amm) continue;
      const { pool, address } = r.value;
      let memo = this.ahead.get(address);
      if (memo?.pool === pool) continue;
      const center = currentArrayKey(pool);
      const bitmap = arrayBitmapOf(pool);
      if (memo !== undefined && memo.center === center && sameBitmap(memo.bitmap, bitmap)) {
        memo.pool = pool;
        continue;
      }
      const owner = r.value.accounts?.get(address)?.owner ?? this.stream.get(address)?.account?.owner;
      if (owner === undefined) continue;
      if (memo === undefined) this.ahead.set(address, (memo = { pool, center, bitmap, addresses: new Map() }));
      Object.assign(memo, { pool, center, bitmap });
      if (memo.addresses.size > MAX_REMEMBERED_ARRAY_ADDRESSES) memo.addresses.clear();
      try {
        for (const key of lookaheadArrayKeys(pool, this.arraysAhead, { arraysEachSide: this.arraysEachSide })) {
          let array = memo.addresses.get(key);
          if (array === undefined) memo.addresses.set(key, (array = swapArrayAddress(pool, owner, key)));
          addresses.push(array);
        }
      } catch (err) {
        // Runs in its own turn: a throw here would end the process, and the loads need none of it.
        this.log.warn({ err, pool: address }, 'arrays ahead not derived');
      }
    }
    if (addresses.length === 0) return;
    this.reader.prefetch(addresses).catch((err: unknown) => this.log.warn({ err }, 'reading arrays ahead failed'));
  }

  /** Refreshes go to `scanner` from now on. */
  attach(scanner: Scanner): void {
    this.scanner = scanner;
  }

  /**
   * A slot of the stream: the scanner's clock; and each monitored pool not read through the tracked
   * loader yet (at start, or added since) is read once, so its vaults and tick or bin arrays are
   * followed before any write of the pool account itself.
   */
  private onSlot(slot: bigint): void {
    const scanner = this.scanner;
    if (scanner === undefined) return;
    // A slot update ends the writes before it.
    if (this.arriving !== undefined) this.flush();
    scanner.noteSlot(slot);
    for (const pool of scanner.pools) {
      if (this.primed.has(pool)) continue;
      this.primed.add(pool);
      scanner.refresh(pool, slot);
    }
  }

  private onUpdate(update: AccountUpdate): void {
    const pools = this.poolsOf.get(update.address);
    if (pools === undefined) return;
    const key = update.signature === undefined ? '' : Buffer.from(update.signature.buffer, update.signature.byteOffset, 64).toString('latin1');
    // A write of another transaction: the one before it is complete, its pools are refreshed now.
    if (this.arriving !== undefined && this.arriving !== key) this.flush();
    this.arriving = key;
    const receivedAt = performance.now();
    for (const pool of pools) {
      let writes = this.pending.get(pool);
      if (writes === undefined) this.pending.set(pool, (writes = new Map()));
      const have = writes.get(key);
      if (have === undefined) writes.set(key, { slot: update.slot, signature: update.signature, receivedAt });
      else if (update.slot > have.slot) have.slot = update.slot;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Refreshes every pending pool and transaction (the scheduled immediate, if any, finds none). */
  private flush(): void {
    this.arriving = undefined;
    if (this.pending.size === 0) return;
    const scanner = this.scanner;
    const pools = scanner?.pools ?? [];
    if (pools !== this.monitoredOf) {
      this.monitoredOf = pools;
      this.monitored = new Set(pools);
    }
    // Taken before refreshing: a refresh may apply an RPC read, whose write is pending anew.
    const pending = [...this.pending];
    this.pending.clear();
    for (const [pool, writes] of pending) {
      if (!this.monitored.has(pool)) continue;
      for (const w of writes.values()) scanner!.refresh(pool, w.slot, w.signature, w.receivedAt);
    }
  }
}

function sameBitmap(a: readonly bigint[] | undefined, b: readonly bigint[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
