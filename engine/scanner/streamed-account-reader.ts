/**
 * An AccountReader (what RpcPoolLoader reads through) that answers from a Geyser account stream:
 * an account the stream holds is returned as held, with no RPC call (its `slot` is the slot of its
 * last write); any other account is read through `fallback` (getMultipleAccounts) and from then on
 * followed by the stream, so a pool's vaults, tick or bin arrays and configs, learned on its first
 * load, come from the stream afterwards. An account that does not exist is held too (as absent, at
 * the read's slot): its creation arrives on the stream, and until then the loader is answered
 * without a read.
 *
 * Ahead (`prefetch`): accounts a swap may soon need (the tick or bin arrays ahead of a pool's price)
 * are followed and read once beforehand, off the loader's path, with one getMultipleAccounts per
 * 100 keys (`readAccounts`), so the load that needs them finds them held; a fetch of an account
 * whose read ahead is in flight waits for that read instead of making its own.
 */
import { MAX_KEYS_PER_CALL, type AccountData, type AccountFetcherStats, type AccountReader, type MultipleAccountsResult } from '../rpc/index.js';
import { RPC_WRITE_VERSION, type GeyserAccountStream } from './geyser-stream.js';

export class StreamedAccountReader implements AccountReader {
  /** Reads answered from the stream. */
  streamed = 0;
  /** Reads the stream could not answer, read over RPC (`fallback`) on the loader's path: the stream's misses. */
  misses = 0;
  /** Accounts read ahead (`prefetch`), and the getMultipleAccounts calls that read them. */
  readonly ahead = { accounts: 0, calls: 0, failedCalls: 0 };
  private readonly followed: Set<string>;
  /** Accounts whose read ahead is in flight, with the read. */
  private readonly prefetching = new Map<string, Promise<void>>();

  constructor(
    private readonly stream: GeyserAccountStream,
    private readonly fallback: AccountReader,
    followed: readonly string[],
    /** One getMultipleAccounts (≤ 100 keys), for `prefetch`; without it `prefetch` only follows. */
    private readonly readAccounts?: (addresses: readonly string[]) => Promise<MultipleAccountsResult>,
  ) {
    this.followed = new Set(followed);
  }

  get stats(): AccountFetcherStats {
    return this.fallback.stats;
  }

  get queued(): number {
    return this.fallback.queued;
  }

  get outstanding(): number {
    return this.fallback.outstanding;
  }

  /** How many accounts the reader has the stream follow. */
  get following(): number {
    return this.followed.size;
  }

  async fetch(address: string, options?: { fresh?: boolean }): Promise<AccountData | null> {
    let held = this.stream.get(address);
    if (held === undefined) {
      const ahead = this.prefetching.get(address);
      if (ahead !== undefined) {
        await ahead;
        held = this.stream.get(address);
      }
    }
    if (held !== undefined) {
      this.streamed++;
      return held.account === null ? null : { ...held.account, slot: held.slot };
    }
    this.follow([address]);
    this.misses++;
    const read = await this.fallback.fetch(address, options);
    this.hold(address, read, read?.slot ?? 0n);
    return read;
  }

  /**
   * Follows `addresses` on the stream and reads those not held (nor being read) once over RPC, so
   * a later fetch finds them held. Resolves when they are; a read that fails is logged by nobody and
   * leaves its accounts to the fetch that needs them.
   */
  async prefetch(addresses: readonly string[]): Promise<void> {
    this.follow(addresses);
    const read = this.readAccounts;
    if (read === undefined) return;
    const wanted = addresses.filter((a) => this.stream.get(a) === undefined && !this.prefetching.has(a));
    const calls: Promise<void>[] = [];
    for (let i = 0; i < wanted.length; i += MAX_KEYS_PER_CALL) {
      const chunk = wanted.slice(i, i + MAX_KEYS_PER_CALL);
      const call = this.readAhead(read, chunk);
      for (const a of chunk) this.prefetching.set(a, call);
      calls.push(call);
    }
    await Promise.all(calls);
  }

  private async readAhead(read: (addresses: readonly string[]) => Promise<MultipleAccountsResult>, chunk: readonly string[]): Promise<void> {
    this.ahead.calls++;
    this.ahead.accounts += chunk.length;
    try {
      const result = await read(chunk);
      chunk.forEach((address, k) => this.hold(address, result.accounts[k] ?? null, result.slot));
    } catch {
      this.ahead.failedCalls++;
    } finally {
      for (const a of chunk) this.prefetching.delete(a);
    }
  }

  /**
   * Holds an RPC read on the stream: an account as the last write of the read's slot, until the
   * stream has a newer one; an absent account at slot 0, write version 0, so any write of it (its
   * creation) replaces it.
   */
  private hold(address: string, read: AccountData | null, slot: bigint): void {
    if (read === null) this.stream.apply({ address, account: null, slot: 0n, writeVersion: 0n, source: 'rpc' });
    else this.stream.apply({ address, account: read, slot, writeVersion: RPC_WRITE_VERSION, source: 'rpc' });
  }

  /** Adds `addresses` to the stream's filter (one filter write per turn: GeyserAccountStream.setAccounts). */
  private follow(addresses: readonly string[]): void {
    const before = this.followed.size;
    for (const a of addresses) this.followed.add(a);
    if (this.followed.size !== before) this.stream.setAccounts([...this.followed]);
  }
}
