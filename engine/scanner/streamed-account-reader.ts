/**
 * An AccountReader (what RpcPoolLoader reads through) that answers from a Geyser account stream:
 * an account the stream holds is returned as held, with no RPC call (its `slot` is the slot of its
 * last write); any other account is read through `fallback` (getMultipleAccounts) and from then on
 * followed by the stream, so a pool's vaults, tick or bin arrays and configs, learned on its first
 * load, come from the stream afterwards. This is how the scanner's pool loader, decode and event
 * path serve state from either source unchanged.
 */
import type { AccountData, AccountFetcherStats, AccountReader } from '../rpc/index.js';
import { RPC_WRITE_VERSION, type GeyserAccountStream } from './geyser-stream.js';

export class StreamedAccountReader implements AccountReader {
  /** Reads answered from the stream. */
  streamed = 0;
  /** Reads the stream could not answer, read over RPC (`fallback`): the stream's misses. */
  misses = 0;
  private readonly followed: Set<string>;

  constructor(
    private readonly stream: GeyserAccountStream,
    private readonly fallback: AccountReader,
    followed: readonly string[],
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

  async fetch(address: string, options?: { fresh?: boolean }): Promise<AccountData | null> {
    const held = this.stream.get(address);
    if (held !== undefined) {
      this.streamed++;
      return held.account === null ? null : { ...held.account, slot: held.slot };
    }
    if (!this.followed.has(address)) {
      this.followed.add(address);
      this.stream.setAccounts([...this.followed]);
    }
    this.misses++;
    const read = await this.fallback.fetch(address, options);
    // Held from now on as the last write of the read's slot, until the stream has a newer one.
    if (read !== null) this.stream.apply({ address, account: read, slot: read.slot, writeVersion: RPC_WRITE_VERSION, source: 'rpc' });
    return read;
  }
}
