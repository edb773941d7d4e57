/**
 * A recent blockhash kept warm for the executor's trades (issue 23): read with getLatestBlockhash
 * every `refreshMs` in the background, so a trade signs with one from memory instead of waiting
 * for a read on its path. An answer older than `maxAgeMs` (the refreshes failing, or not started)
 * is not served: the caller waits for a read, shared by every caller meanwhile.
 *
 * Its `lastValidBlockHeight` comes with it, so a trade signed with a blockhash a few hundred
 * milliseconds old expires when that blockhash does (the submitters watch the block height), a
 * few slots sooner than with one read on the path: 150 blocks of validity, one or two spent.
 * Refreshing every slot keeps what a read on the path gave: within a slot, the same blockhash.
 *
 * Two trades of one wallet signed with one blockhash can be the same transaction (same swap, same
 * amounts: same signature; the second would be taken for the first). A caller names the blockhash
 * the wallet signed with last (`avoid`): if that is the one kept, a new one is read.
 */
export interface LatestBlockhash {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

export interface RecentBlockhashOptions {
  /** `ChainClient.getLatestBlockhash`. */
  read: () => Promise<LatestBlockhash>;
  /** Between two background reads, ms. Default 400 (a slot). */
  refreshMs?: number;
  /** Not served older than this, ms. Default 2,000. */
  maxAgeMs?: number;
  /** Milliseconds clock (tests). Default performance.now. */
  now?: () => number;
}

export class RecentBlockhash {
  /** getLatestBlockhash calls made, failed. */
  readonly stats = { reads: 0, failures: 0 };
  private readonly refreshMs: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private last: { value: LatestBlockhash; at: number } | undefined;
  private inFlight: Promise<LatestBlockhash> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RecentBlockhashOptions) {
    this.refreshMs = options.refreshMs ?? 400;
    this.maxAgeMs = options.maxAgeMs ?? 2_000;
    this.now = options.now ?? (() => performance.now());
  }

  /** Reads one now and keeps reading every `refreshMs` until `close`; resolves after the first read (which may fail: then `current` reads). */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.shared().catch(() => undefined), this.refreshMs);
    this.timer.unref();
    await this.shared().catch(() => undefined);
  }

  /** A blockhash at most `maxAgeMs` old, other than `avoid`: from memory, or read now (the chain may still answer `avoid` within its slot). */
  current(avoid?: string): Promise<LatestBlockhash> {
    const last = this.last;
    if (last !== undefined && this.now() - last.at <= this.maxAgeMs && last.value.blockhash !== avoid) return Promise.resolve(last.value);
    return this.shared();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The read in flight, started if none is. */
  private shared(): Promise<LatestBlockhash> {
    if (this.inFlight !== undefined) return this.inFlight;
    const at = this.now();
    this.stats.reads++;
    const read = this.options.read().then(
      (value) => {
        // A read started earlier than the one kept cannot replace it (reads overlap only across a failure).
        if (this.last === undefined || at >= this.last.at) this.last = { value, at };
        return value;
      },
      (err: unknown) => {
        this.stats.failures++;
        throw err;
      },
    );
    this.inFlight = read;
    void read.finally(() => {
      if (this.inFlight === read) this.inFlight = undefined;
    }).catch(() => undefined);
    return read;
  }
}
