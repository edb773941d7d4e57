/**
 * `scanner.stateSource` geyser: the scanner's pool state taken from a Yellowstone gRPC (Geyser)
 * account stream instead of being re-read over RPC after each block entry.
 *
 * - `reader` (StreamedAccountReader) answers the pool loader's reads from the stream's held accounts
 *   (first read of an account over RPC, then followed on the stream), so decoding, the event and the
 *   sink (the pool cache, or the bus) are the block-entry path's, unchanged.
 * - `track(loader)` wraps the loader to learn which accounts (pool, vaults, tick or bin arrays) each
 *   pool was read from.
 * - `attach(scanner)`: an applied write (slot/write-version rule of GeyserAccountStream) of any of a
 *   pool's accounts makes the scanner read and publish that pool again; the writes of one slot that
 *   arrive together are coalesced into one refresh per pool. The stream's slots drive the scanner's
 *   slot clock and liveness (/health).
 */
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
}

export class GeyserStateSource {
  readonly stream: GeyserAccountStream;
  readonly reader: StreamedAccountReader;
  /** Pools read from each followed account. */
  private readonly poolsOf = new Map<string, Set<string>>();
  /** Pools to refresh at the next turn, with the newest slot written. */
  private readonly pending = new Map<string, bigint>();
  private flushScheduled = false;
  private scanner: Scanner | undefined;

  constructor(options: GeyserStateSourceOptions) {
    for (const pool of options.pools) this.poolsOf.set(pool, new Set([pool]));
    this.stream = new GeyserAccountStream({
      endpoint: options.endpoint,
      accounts: options.pools,
      readAccounts: options.readAccounts,
      onUpdate: (u) => this.onUpdate(u),
      onSlot: (slot) => this.scanner?.noteSlot(slot),
      logger: options.logger.child({ component: 'geyser' }),
    });
    this.reader = new StreamedAccountReader(this.stream, options.fallback, options.pools);
  }

  /** `loader`, recording the accounts each pool it loads was read from (LoadedPool.accounts). */
  track(loader: PoolLoader): PoolLoader {
    return {
      load: async (addresses, options) => {
        const results: PoolLoadResult[] = await loader.load(addresses, options);
        for (const r of results) {
          if (!r.ok || r.value.accounts === undefined) continue;
          for (const account of r.value.accounts.keys()) {
            let pools = this.poolsOf.get(account);
            if (pools === undefined) this.poolsOf.set(account, (pools = new Set()));
            pools.add(r.value.address);
          }
        }
        return results;
      },
    };
  }

  /** Refreshes go to `scanner` from now on. */
  attach(scanner: Scanner): void {
    this.scanner = scanner;
  }

  private onUpdate(update: AccountUpdate): void {
    const pools = this.poolsOf.get(update.address);
    if (pools === undefined) return;
    for (const pool of pools) {
      const have = this.pending.get(pool);
      if (have === undefined || update.slot > have) this.pending.set(pool, update.slot);
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const monitored = new Set(this.scanner?.pools ?? []);
    for (const [pool, slot] of this.pending) if (monitored.has(pool)) this.scanner!.refresh(pool, slot);
    this.pending.clear();
  }
}
