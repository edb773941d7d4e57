/**
 * The inverse of `event-state.ts`: the states carried by successive pool_update MarketEvents,
 * applied in stream order, give each pool back as a `LoadedPool`, through the same `RpcPoolLoader`
 * the scanner read it with, whose account reader answers from the states instead of RPC
 * (`StateAccountReader`). No RPC, no clock: the same events give the same pools.
 *
 * `apply(event)` says what became of an event's state:
 * - `applied`: the pool's accounts now are the event's;
 * - `no_state`: the event carries none (an older publisher, or the setting off): nothing is guessed;
 * - `no_base`: a delta for a pool whose full state was not seen (the replay started after it);
 * - `gap`: a delta whose `previousSlot` is not the state held (an event in between was lost); the
 *   pool is unusable until its next full state;
 * - `malformed`: a state that does not read as format 1.
 */
import { createDecoderRegistry, type DecoderRegistry } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { RpcPoolLoader, type LoadedPool, type PoolLoader, type PoolLoadResult } from '../pools/index.js';
import type { AccountData, AccountFetcherStats, AccountReader } from '../rpc/index.js';
import { EVENT_STATE_FORMAT, type EventState, type EventStateAccount } from './event-state.js';
import type { MarketEvent } from '../messages/index.js';

export type EventStateOutcome = 'applied' | 'no_state' | 'no_base' | 'gap' | 'malformed';

/** An AccountReader over a map of accounts: an address not in it does not exist. */
export class StateAccountReader implements AccountReader {
  readonly stats: AccountFetcherStats = { calls: 0, keys: 0, coalesced: 0, refused: 0, failedCalls: 0 };
  readonly queued = 0;
  readonly outstanding = 0;

  constructor(private readonly accounts: ReadonlyMap<string, AccountData | null>) {}

  fetch(address: string): Promise<AccountData | null> {
    this.stats.keys++;
    return Promise.resolve(this.accounts.get(address) ?? null);
  }
}

/** The `data.state` of an event, or a reason it is not a format-1 state. */
export function eventStateOf(event: MarketEvent): EventState | undefined | string {
  const state = event.data['state'];
  if (state === undefined) return undefined;
  if (typeof state !== 'object' || state === null) return 'state is not an object';
  const s = state as Partial<EventState>;
  if (s.format !== EVENT_STATE_FORMAT) return `state format ${String(s.format)} is not ${EVENT_STATE_FORMAT}`;
  if (typeof s.full !== 'boolean' || !Array.isArray(s.accounts) || typeof s.arraysEachSide !== 'number') return 'state lacks full, accounts or arraysEachSide';
  if (!s.full && typeof s.previousSlot !== 'string') return 'a delta state needs previousSlot';
  return s as EventState;
}

function accountDataOf(a: EventStateAccount): AccountData | null {
  if ('missing' in a) return null;
  return { owner: a.owner, lamports: BigInt(a.lamports), executable: a.executable, slot: BigInt(a.slot), data: new Uint8Array(Buffer.from(a.data, 'base64')) };
}

interface PoolReplay {
  slot: bigint;
  arraysEachSide: number;
  mints: boolean;
  epoch: bigint | undefined;
  /** False after a gap, until the next full state. */
  usable: boolean;
}

/** Pools rebuilt from event states; a PoolLoader for PlannerPools with no RPC behind it. */
export class EventStateReplay implements PoolLoader {
  private readonly accounts = new Map<string, AccountData | null>();
  private readonly pools = new Map<string, PoolReplay>();
  private readonly loaders = new Map<string, RpcPoolLoader>();
  private readonly reader = new StateAccountReader(this.accounts);
  private readonly registry: DecoderRegistry;
  /** The epoch the loader's EpochSource answers: the state being loaded's. */
  private epoch: bigint | undefined;

  constructor(options: { registry?: DecoderRegistry } = {}) {
    this.registry = options.registry ?? createDecoderRegistry();
  }

  apply(event: MarketEvent): EventStateOutcome {
    const state = eventStateOf(event);
    if (state === undefined) return 'no_state';
    if (typeof state === 'string') return 'malformed';
    const known = this.pools.get(event.poolAddress);
    if (!state.full) {
      if (known === undefined) return 'no_base';
      if (!known.usable || known.slot.toString() !== state.previousSlot) {
        known.usable = false;
        return 'gap';
      }
    }
    let decoded: [string, AccountData | null][];
    try {
      decoded = state.accounts.map((a) => [a.address, accountDataOf(a)]);
    } catch {
      return 'malformed';
    }
    // A state is of its event: the pool account is in it, and no account was read after the
    // event's slot (a forged state could otherwise pass for a newer one).
    const slot = BigInt(event.slot);
    if (!decoded.some(([address, account]) => address === event.poolAddress && account !== null)) return 'malformed';
    if (decoded.some(([, account]) => account !== null && account.slot > slot)) return 'malformed';
    for (const [address, account] of decoded) this.accounts.set(address, account);
    this.pools.set(event.poolAddress, {
      slot: BigInt(event.slot),
      arraysEachSide: state.arraysEachSide,
      mints: state.mints,
      epoch: state.epoch === undefined ? undefined : BigInt(state.epoch),
      usable: true,
    });
    return 'applied';
  }

  /** Whether a usable state of `pool` was applied. */
  has(pool: string): boolean {
    return this.pools.get(pool)?.usable === true;
  }

  /** PoolLoader: each pool from its last applied state, loaded one at a time (each with its own epoch). */
  async load(addresses: readonly string[]): Promise<PoolLoadResult[]> {
    const results: PoolLoadResult[] = [];
    for (const address of addresses) {
      const pool = this.pools.get(address);
      if (pool === undefined || !pool.usable) {
        results.push({ ok: false, error: { address, reason: 'missing', message: `no usable state of ${address} in the events replayed so far` } });
        continue;
      }
      this.epoch = pool.epoch;
      const [result] = await this.loaderFor(pool).load([address]);
      results.push(result!);
    }
    return results;
  }

  /** One pool loaded from its state, or why not. */
  async loaded(address: string): Promise<LoadedPool | string> {
    const [r] = await this.load([address]);
    return r!.ok ? r!.value : `${r!.error.reason}: ${r!.error.message}`;
  }

  private loaderFor(pool: PoolReplay): RpcPoolLoader {
    const key = `${pool.arraysEachSide}:${pool.mints}`;
    let loader = this.loaders.get(key);
    if (loader === undefined) {
      loader = new RpcPoolLoader({
        fetcher: this.reader,
        registry: this.registry,
        arraysEachSide: pool.arraysEachSide,
        readMints: pool.mints,
        epochs: { current: () => (this.epoch === undefined ? Promise.reject(new TpError(ErrorCode.ConfigFile, 'the event state carries no epoch')) : Promise.resolve(this.epoch)) },
      });
      this.loaders.set(key, loader);
    }
    return loader;
  }
}
