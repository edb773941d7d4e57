/**
 * The pool state a `pool_update` MarketEvent announced, carried in the event itself
 * (`data.state`, schemas/market-event.schema.json, format 1), so that a replay of the
 * MARKET_EVENTS stream (`tidepool backtest`) quotes on the state of that moment, not on the chain's
 * state of today.
 *
 * What is carried: the accounts the market scanner's pool load read (`LoadedPool.accounts`: the
 * pool account, its tick or bin arrays and Raydium AmmConfig, the reserve vaults, the two mints
 * when read), each with its owner, lamports, context slot and base64 bytes; an account that does
 * not exist is `{address, missing: true}`. The replay loads the pool again from these bytes with
 * the same `RpcPoolLoader` (`event-state-replay.ts`): there is one decoder.
 *
 * Size. A full state is every account: about 2 KB of JSON for a dexa_amm pool, 70 to 100 KB for a
 * concentrated or DLMM pool (seven tick or bin arrays of ~10 KB, base64 adds a third). So after the
 * first state of a pool only the accounts whose bytes changed since the previous state this
 * writer gave are sent (`full: false`, `previousSlot` naming the state it builds on): on a swap
 * that is the pool account and the two vaults, 2 to 3 KB. A full state is sent again when
 * `snapshotIntervalMs` has passed since the pool's last one, and after a publish of the pool's
 * events failed (`forget`). A replay therefore starts reading `snapshotIntervalMs` before the
 * range it reports on (its warm-up), and a delta whose `previousSlot` is not the state it holds is
 * refused (a gap), never applied on a wrong base.
 */
import { createHash } from 'node:crypto';

import type { LoadedPool } from '../pools/index.js';
import type { AccountData } from '../rpc/index.js';

export const EVENT_STATE_FORMAT = 1;
/** Default time between two full states of one pool. */
export const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/** One account of an event state: as read, or missing (no account at the address). */
export type EventStateAccount =
  | { address: string; owner: string; lamports: string; executable: boolean; slot: string; data: string }
  | { address: string; missing: true };

/** `data.state` of a pool_update MarketEvent (format 1). */
export interface EventState {
  format: typeof EVENT_STATE_FORMAT;
  /** Every account of the pool (true), or only those changed since the state at `previousSlot`. */
  full: boolean;
  /** Deltas: the slot of the pool's previous state, the one this delta applies to. */
  previousSlot?: string;
  /** The loader's setting the accounts were chosen under: tick or bin arrays each side of the current one. */
  arraysEachSide: number;
  /** The two mints were read (Token-2022 transfer fees): the replay reads them too. */
  mints: boolean;
  /** The epoch of the load, for mints charging transfer fees. */
  epoch?: string;
  accounts: EventStateAccount[];
}

export interface EventStateWriterOptions {
  /** Time between two full states of one pool. Default 60 s. */
  snapshotIntervalMs?: number;
  /** The scanner loader's `arraysEachSide`. */
  arraysEachSide: number;
}

interface PoolMemo {
  slot: bigint;
  fullAt: number;
  /** Digest of each account as last sent. */
  digests: Map<string, string>;
}

function digestOf(account: AccountData | null): string {
  if (account === null) return '-';
  return `${account.owner}:${account.lamports}:${createHash('sha256').update(account.data).digest('base64')}`;
}

export function eventStateAccountOf(address: string, account: AccountData | null): EventStateAccount {
  if (account === null) return { address, missing: true };
  return { address, owner: account.owner, lamports: account.lamports.toString(), executable: account.executable, slot: account.slot.toString(), data: Buffer.from(account.data).toString('base64') };
}

/** Decides, per pool, what state each pool_update carries. One per publisher. */
export class EventStateWriter {
  private readonly memos = new Map<string, PoolMemo>();
  private readonly snapshotIntervalMs: number;

  constructor(private readonly options: EventStateWriterOptions) {
    this.snapshotIntervalMs = options.snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS;
  }

  /** The state of `loaded` seen at `at` (Unix ms); undefined when the load kept no accounts. */
  stateOf(loaded: LoadedPool, at: number): EventState | undefined {
    const accounts = loaded.accounts;
    if (accounts === undefined) return undefined;
    const memo = this.memos.get(loaded.address);
    const full = memo === undefined || at - memo.fullAt >= this.snapshotIntervalMs || loaded.slot <= memo.slot;
    const digests = new Map<string, string>();
    const out: EventStateAccount[] = [];
    for (const [address, account] of accounts) {
      const digest = digestOf(account);
      digests.set(address, digest);
      // The pool account always: its slot is the state's.
      if (full || address === loaded.address || memo.digests.get(address) !== digest) out.push(eventStateAccountOf(address, account));
    }
    const state: EventState = { format: EVENT_STATE_FORMAT, full, arraysEachSide: this.options.arraysEachSide, mints: loaded.mints !== undefined, accounts: out };
    if (!full) state.previousSlot = memo.slot.toString();
    if (loaded.epoch !== undefined) state.epoch = loaded.epoch.toString();
    if (!full) for (const [address, digest] of memo.digests) if (!digests.has(address)) digests.set(address, digest);
    this.memos.set(loaded.address, { slot: loaded.slot, fullAt: full ? at : memo.fullAt, digests });
    return state;
  }

  /** The pool's next state is full (a publish of its events was not stored). */
  forget(pool: string): void {
    this.memos.delete(pool);
  }
}
