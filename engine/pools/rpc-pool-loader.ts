/**
 * PoolLoader over Solana JSON-RPC: pool accounts and their swap context read through a batched,
 * coalesced AccountReader (getMultipleAccounts: AccountFetcher on this thread, WorkerAccountFetcher
 * from an RPC worker thread), decoded with the decoder registry.
 *
 * Raydium AMM v4 (`dexa_amm` AmmInfo) keeps its reserves in two vault token accounts: they are
 * always read with the pool (whatever `readReserves` says), the pool's reserves are their balances
 * less need_take_pnl (withAmmVaultAccounts), and the loaded pool's `slot` is the newest of the pool
 * account's and the vaults' context slots (what the state was read at). A vault read that fails is
 * an 'rpc' failure, a vault that is missing or not the pool's token account a 'decode' failure:
 * there is no AMM quote without them. Spec 02's simplified layout (an explicit registry setting)
 * has its reserves in the pool account and reads no vault.
 *
 * Rounds. Round 1 asks for every pool account of the call, together with the context accounts
 * (tick or bin arrays, Raydium AmmConfig, reserve vaults) remembered from each pool's previous
 * load; the fetcher packs them into as few getMultipleAccounts calls as its batch size allows, so
 * a steady-state reload is one round, usually one call. Once the pools are decoded, round 2 asks
 * for whatever context account was not in round 1: a pool seen for the first time, or whose tick,
 * active bin or array bitmap moved to other arrays.
 *
 * Failures are answers, one per pool: 'missing' (no account at the address), 'unknown_owner' (a
 * program the registry does not know), 'decode' (bytes that are not a pool account), 'rpc' (a
 * read of the pool or of one of its context accounts failed). A context account that does not
 * exist is simply absent from the context: the swap math refuses past the data it has.
 *
 * Allocation: array addresses are derived once per pool and array (PDAs cost a few sha256 and
 * curve checks), and a context account whose bytes did not change since the last load keeps its
 * decoded value.
 *
 * Mints (`readMints`): the pool's two mint accounts are read with its context accounts (round 1
 * once known, round 2 the first time; a mint shared by several pools is one key of the call) and
 * decoded with either token program's layout (`LoadedPool.mints`); when either has a Token-2022
 * TransferFeeConfig the pool also gets `transferFees` (both configs and the current epoch from
 * `epochs`), ready for `quoteSwap(pool, req, context, transferFees)`. A mint read that fails is an
 * 'rpc' failure of the pool, a mint that is missing or does not decode a 'decode' failure, and a
 * fee-charging pool without an epoch an 'rpc' failure: a quote without its fees would be wrong.
 *
 * Prefetch (`PoolLoadOptions.prefetch`, a route template of the executor): accounts read in round
 * 1 beside the pools, for pools the loader does not remember yet (a new process, an executor just
 * restarted). They are only a guess of what the pools' plans will name: a pool still reads what its
 * own decode plans, a planned account the prefetch held needs no second round, one it did not is
 * read in round 2 as without a prefetch, and a prefetched account no plan names is dropped.
 * `plannedAccounts(pool)` says what a pool's plan named on its last load (to write the template).
 */
import { hash } from 'node:crypto';

import { compactBinArray, compactTickArray } from '../dex/index.js';
import {
  DEFAULT_ARRAYS_EACH_SIDE,
  Dex,
  arrayBitmapOf,
  assembleSwapState,
  currentArrayKey,
  decodeMint,
  decodeSwapAccount,
  reserveAccountsOf,
  swapArrayAddress,
  swapArrayKeys,
  tokenAccountAmount,
  withAmmVaultAccounts,
  type DecodedAccount,
  type DecodedMint,
  type DecodedPool,
  type DecoderRegistry,
} from '../dex/index.js';
import type { AccountReader } from '../rpc/index.js';
import type { AccountData } from '../rpc/index.js';
import { ErrorCode, TpError, isTpError, invalidArgument } from '../errors.js';
import type { EpochSource } from './epoch-clock.js';
import type { LoadedPool, PoolLoader, PoolLoadFailure, PoolLoadResult } from './types.js';
import { abortable } from '../rpc/index.js';

export interface RpcPoolLoaderOptions {
  /** AccountFetcher, or WorkerAccountFetcher to read off the calling thread. */
  fetcher: AccountReader;
  registry: DecoderRegistry;
  /** Tick or bin arrays read on each side of the current one. Default 3. */
  arraysEachSide?: number;
  /** Read the vault balances of CL and DLMM pools into `reserves`. Default true. (AMM v4 vaults are always read.) */
  readReserves?: boolean;
  /**
   * Unix seconds stamped on each context as `nowSeconds` (DLMM volatility, Raydium's dynamic fee).
   * Default none: the math then takes the pool's last update time.
   */
  clock?: () => bigint;
  /** Pools whose context addresses and decodes are remembered (least recently loaded dropped). Default 10,000. */
  maxRemembered?: number;
  /** Also read and decode each pool's two mints (see the module comment). Default false. */
  readMints?: boolean;
  /** The current epoch, for pools whose mints charge a transfer fee (EpochClock). */
  epochs?: EpochSource;
  /** Keep every account read for a pool on its LoadedPool (`accounts`): the market scanner's event state. Default false. */
  keepAccounts?: boolean;
}

export interface PoolLoadOptions {
  /**
   * Read only after the call (AccountFetcher `fresh`): never join a read already in flight. Use it
   * when the state must postdate something just seen (a transaction). Default true.
   */
  fresh?: boolean;
  /**
   * Stops the load: it rejects with the signal's reason and reads and decodes nothing more; its reads
   * stop waiting, and a getMultipleAccounts call that only they were waiting for is aborted.
   */
  signal?: AbortSignal;
  /** Context accounts read in round 1 beside the pools (see the module comment, Prefetch). */
  prefetch?: readonly string[];
}

/** A load with the number of read rounds it took (1: every account was known before the pools were decoded). */
export interface PoolLoadRounds {
  results: PoolLoadResult[];
  rounds: 1 | 2;
}

/** What a pool's last load planned to read beside the pool account, in reading order. */
export interface PlannedAccounts {
  /** The pool account's owner program. */
  owner: string;
  dex: Dex;
  /** Tick or bin arrays (ascending), Raydium's AmmConfig, the reserve vaults read, the mints (readMints). */
  accounts: string[];
}

export interface RpcPoolLoaderStats {
  /** load() calls. */
  loads: number;
  /** Pools asked for, over all calls (duplicates within a call counted once). */
  pools: number;
  /** Loads that needed a second round (new pools, moved prices). */
  secondRounds: number;
  /** Array addresses derived (PDAs). */
  derivedAddresses: number;
  /** Context account decodes skipped because the bytes had not changed. */
  reusedDecodes: number;
  /** Mint accounts decoded (unchanged bytes reuse the last decode). */
  mintDecodes: number;
  /** SHA-256 digests computed (bytes read again as the same object, e.g. held by an account stream, reuse theirs). */
  digests: number;
}

/** What a read gave: the account, null when it does not exist, or the error of its call. */
type Read = AccountData | null | Error;

interface CachedDecode {
  /** digestOf the bytes it was decoded from. */
  digest: string;
  value: DecodedAccount | undefined;
}

/** What the loader remembers of a pool between loads. */
interface PoolMemo {
  programId: string;
  dex: Dex;
  /** Digest of the last pool account bytes, and their decode (before any AmmConfig is applied). */
  poolDigest: string;
  pool: DecodedPool;
  /** The current array key and the bitmap `swapAccounts` were chosen under. */
  center: number | undefined;
  bitmap: readonly bigint[] | undefined;
  /** Arrays (ascending), then the Raydium AmmConfig. */
  swapAccounts: string[];
  reserveAccounts: readonly [string, string] | undefined;
  /** Read reserveAccounts on this load: readReserves, or an AMM v4 pool (its quotes need them). */
  readsReserves: boolean;
  /** Token A and B mints (read with readMints). */
  mints: readonly [string, string];
  /** Array addresses by key. */
  pdas: Map<number, string>;
  decoded: Map<string, CachedDecode>;
}

/** A pool of the call between the rounds. */
interface Pending {
  address: string;
  account: AccountData;
  memo: PoolMemo;
}

const MAX_REMEMBERED_PDAS = 64;
/** Mint decodes kept by address (many pools share few mints). */
const MAX_REMEMBERED_MINTS = 4096;

/** The epoch of a load: the value, the failure, or none asked (no source). */
type EpochRead = bigint | Error | undefined;

export class RpcPoolLoader implements PoolLoader {
  readonly stats: RpcPoolLoaderStats = { loads: 0, pools: 0, secondRounds: 0, derivedAddresses: 0, reusedDecodes: 0, mintDecodes: 0, digests: 0 };
  /**
   * The digest of each bytes object digested, while it lives: a reader that hands out the same
   * object for unchanged bytes (StreamedAccountReader: an account stream's held state) is not hashed
   * again on every load. Account bytes are never written in place once read.
   */
  private readonly digestsOf = new WeakMap<Uint8Array, string>();
  private readonly fetcher: AccountReader;
  private readonly registry: DecoderRegistry;
  private readonly arraysEachSide: number;
  private readonly readReserves: boolean;
  private readonly clock: (() => bigint) | undefined;
  private readonly maxRemembered: number;
  private readonly memos = new Map<string, PoolMemo>();
  private readonly keys: number[] = [];
  private readonly readMints: boolean;
  private readonly epochs: EpochSource | undefined;
  private readonly keepAccounts: boolean;
  private readonly mintDecodes = new Map<string, { digest: string; mint: DecodedMint | Error }>();

  constructor(options: RpcPoolLoaderOptions) {
    this.fetcher = options.fetcher;
    this.registry = options.registry;
    this.arraysEachSide = options.arraysEachSide ?? DEFAULT_ARRAYS_EACH_SIDE;
    if (!Number.isInteger(this.arraysEachSide) || this.arraysEachSide < 0 || this.arraysEachSide > 64) {
      throw invalidArgument('arraysEachSide', this.arraysEachSide, `arraysEachSide must be 0..64, got ${this.arraysEachSide}`);
    }
    this.readReserves = options.readReserves ?? true;
    this.clock = options.clock;
    this.maxRemembered = Math.max(0, options.maxRemembered ?? 10_000);
    this.readMints = options.readMints ?? false;
    this.epochs = options.epochs;
    this.keepAccounts = options.keepAccounts ?? false;
  }

  /** Pools whose context is remembered. */
  get remembered(): number {
    return this.memos.size;
  }

  /** Whether the loader remembers the pool's context accounts (its next load reads them in round 1). */
  knows(address: string): boolean {
    return this.memos.has(address);
  }

  /** What the pool's last load planned to read beside it; undefined for a pool not remembered. */
  plannedAccounts(address: string): PlannedAccounts | undefined {
    const memo = this.memos.get(address);
    if (memo === undefined) return undefined;
    const accounts = [...memo.swapAccounts];
    if (memo.reserveAccounts !== undefined && memo.readsReserves) accounts.push(...memo.reserveAccounts);
    if (this.readMints) accounts.push(...memo.mints);
    return { owner: memo.programId, dex: memo.dex, accounts };
  }

  async load(addresses: readonly string[], options: PoolLoadOptions = {}): Promise<PoolLoadResult[]> {
    return (await this.loadWithRounds(addresses, options)).results;
  }

  /** `load`, telling how many read rounds it took. */
  async loadWithRounds(addresses: readonly string[], options: PoolLoadOptions = {}): Promise<PoolLoadRounds> {
    const signal = options.signal;
    signal?.throwIfAborted();
    this.stats.loads++;
    const fresh = options.fresh ?? true;
    const reads = new Map<string, Read | Promise<Read>>();
    const want = (address: string): void => {
      if (!reads.has(address)) reads.set(address, settle(this.fetcher.fetch(address, signal === undefined ? { fresh } : { fresh, signal })));
    };
    // The epoch, beside the reads (EpochClock answers from memory most of the time).
    const epoch: Promise<EpochRead> | undefined = this.readMints && this.epochs !== undefined ? this.epochs.current().then((e) => e, asError) : undefined;

    // Round 1: the pools, and the context accounts of the pools we know.
    for (const address of addresses) {
      if (reads.has(address)) continue;
      want(address);
      this.stats.pools++;
      const memo = this.memos.get(address);
      if (memo === undefined) continue;
      for (const a of memo.swapAccounts) want(a);
      if (memo.reserveAccounts !== undefined && memo.readsReserves) {
        want(memo.reserveAccounts[0]);
        want(memo.reserveAccounts[1]);
      }
      if (this.readMints) {
        want(memo.mints[0]);
        want(memo.mints[1]);
      }
    }
    for (const a of options.prefetch ?? []) want(a);
    await abortable(resolveAll(reads), signal);

    const outcomes = new Map<string, PoolLoadResult | Pending>();
    let round2 = false;
    for (const address of addresses) {
      if (outcomes.has(address)) continue;
      const outcome = this.decodePool(address, reads.get(address) as Read);
      outcomes.set(address, outcome);
      if ('ok' in outcome) continue;
      const memo = outcome.memo;
      for (const a of memo.swapAccounts) {
        if (!reads.has(a)) {
          want(a);
          round2 = true;
        }
      }
      if (memo.reserveAccounts !== undefined && memo.readsReserves) {
        for (const a of memo.reserveAccounts) {
          if (!reads.has(a)) {
            want(a);
            round2 = true;
          }
        }
      }
      if (this.readMints) {
        for (const a of memo.mints) {
          if (!reads.has(a)) {
            want(a);
            round2 = true;
          }
        }
      }
    }

    // Round 2: context accounts not read yet.
    if (round2) {
      this.stats.secondRounds++;
      await abortable(resolveAll(reads), signal);
    }

    const nowSeconds = this.clock?.();
    const epochRead = epoch === undefined ? undefined : await abortable(epoch, signal);
    const results = new Array<PoolLoadResult>(addresses.length);
    for (let i = 0; i < addresses.length; i++) {
      const address = addresses[i]!;
      let outcome = outcomes.get(address)!;
      if (!('ok' in outcome)) {
        const pending = outcome;
        outcome = this.assemble(pending, reads as Map<string, Read>, nowSeconds);
        if (this.readMints && outcome.ok) outcome = this.withMints(outcome.value, pending, reads as Map<string, Read>, epochRead);
        if (this.keepAccounts && outcome.ok) outcome = ok({ ...outcome.value, accounts: this.accountsOf(pending, reads as Map<string, Read>) });
        outcomes.set(address, outcome);
      }
      results[i] = outcome;
    }
    return { results, rounds: round2 ? 2 : 1 };
  }

  /** Every account read for the pending pool (a read that failed has already failed the pool). */
  private accountsOf(pending: Pending, reads: Map<string, Read>): Map<string, AccountData | null> {
    const { memo } = pending;
    const accounts = new Map<string, AccountData | null>([[pending.address, pending.account]]);
    const keep = (address: string): void => {
      const read = reads.get(address);
      if (read !== undefined && !(read instanceof Error)) accounts.set(address, read);
    };
    for (const a of memo.swapAccounts) keep(a);
    if (memo.reserveAccounts !== undefined && memo.readsReserves) for (const a of memo.reserveAccounts) keep(a);
    if (this.readMints) for (const a of memo.mints) keep(a);
    return accounts;
  }

  /** The loaded pool with its mints decoded and, when either charges a fee, its transferFees. */
  private withMints(loaded: LoadedPool, pending: Pending, reads: Map<string, Read>, epoch: EpochRead): PoolLoadResult {
    const address = loaded.address;
    const mints: (DecodedMint | null)[] = [];
    for (const mintAddress of pending.memo.mints) {
      const read = reads.get(mintAddress);
      if (read instanceof Error) return failure(address, 'rpc', `mint ${mintAddress} read failed: ${read.message}`);
      if (read === null || read === undefined) return failure(address, 'decode', `mint ${mintAddress} of ${address} does not exist`);
      const mint = this.decodeMintCached(mintAddress, read);
      if (mint instanceof Error) return failure(address, 'decode', `mint ${mintAddress} of ${address}: ${mint.message}`);
      mints.push(mint);
    }
    const [mintA, mintB] = mints as [DecodedMint, DecodedMint];
    const value: LoadedPool = { ...loaded, mints: [mintA, mintB] };
    if (typeof epoch === 'bigint') value.epoch = epoch;
    const tokenA = mintA.transferFeeConfig;
    const tokenB = mintB.transferFeeConfig;
    if (tokenA !== undefined || tokenB !== undefined) {
      if (typeof epoch !== 'bigint') {
        return failure(address, 'rpc', `the pool's mints charge transfer fees and the epoch is unknown${epoch instanceof Error ? `: ${epoch.message}` : ' (no epoch source)'}`);
      }
      value.transferFees = { epoch, tokenA, tokenB };
    }
    return ok(value);
  }

  private decodeMintCached(address: string, read: AccountData): DecodedMint | Error {
    const digest = this.digestOf(read.data);
    const cached = this.mintDecodes.get(address);
    if (cached !== undefined && cached.digest === digest) return cached.mint;
    this.stats.mintDecodes++;
    let mint: DecodedMint | Error;
    try {
      mint = decodeMint(read.owner, read.data, address);
    } catch (err) {
      mint = asError(err);
    }
    if (this.mintDecodes.size >= MAX_REMEMBERED_MINTS) this.mintDecodes.clear();
    this.mintDecodes.set(address, { digest, mint });
    return mint;
  }

  /** The pool account decoded and its context accounts planned, or why not. */
  private decodePool(address: string, read: Read): PoolLoadResult | Pending {
    if (read instanceof Error) return failure(address, 'rpc', `pool account read failed: ${read.message}`);
    if (read === null) {
      this.memos.delete(address);
      return failure(address, 'missing', `no account at ${address}`);
    }
    let memo = this.memos.get(address);
    if (memo !== undefined && memo.programId !== read.owner) {
      this.memos.delete(address);
      memo = undefined;
    }
    const poolDigest = this.digestOf(read.data);
    if (memo !== undefined && memo.poolDigest === poolDigest) {
      // Unchanged pool bytes: the same decode, the same context accounts.
      this.touch(address, memo);
      return { address, account: read, memo };
    }

    let pool: DecodedPool;
    try {
      const decoded = this.registry.decodeAccount(read.owner, read.data, address);
      if (decoded.kind !== 'pool') {
        return failure(address, 'decode', `${address} is a ${decoded.dex} ${decoded.kind} account, not a pool`);
      }
      pool = decoded.pool;
    } catch (err) {
      if (isTpError(err, ErrorCode.UnknownOwner)) {
        return failure(address, 'unknown_owner', `${address} is owned by ${read.owner}, a program with no decoder`);
      }
      return failure(address, 'decode', `${address}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (pool.address === undefined) pool = { ...pool, address };

    if (memo === undefined) {
      memo = {
        programId: read.owner,
        dex: pool.dex,
        poolDigest,
        pool,
        center: undefined,
        bitmap: undefined,
        swapAccounts: [],
        reserveAccounts: undefined,
        readsReserves: false,
        mints: [pool.tokenA, pool.tokenB],
        pdas: new Map(),
        decoded: new Map(),
      };
      this.plan(memo, pool, true);
    } else {
      memo.poolDigest = poolDigest;
      memo.pool = pool;
      memo.mints = [pool.tokenA, pool.tokenB];
      this.plan(memo, pool, false);
    }
    this.touch(address, memo);
    return { address, account: read, memo };
  }

  /** Chooses the pool's context accounts again when its current array or bitmap moved. */
  private plan(memo: PoolMemo, pool: DecodedPool, first: boolean): void {
    memo.reserveAccounts = reserveAccountsOf(pool);
    memo.readsReserves = this.readReserves || pool.dex === Dex.Amm;
    if (pool.dex === Dex.Amm) return;
    const center = currentArrayKey(pool);
    const bitmap = arrayBitmapOf(pool);
    const ammConfig = pool.dex === Dex.Clmm ? pool.ammConfig : undefined;
    if (!first && center === memo.center && sameBitmap(memo.bitmap, bitmap) && lastIs(memo.swapAccounts, ammConfig)) return;
    memo.center = center;
    memo.bitmap = bitmap;
    this.keys.length = 0;
    const keys = swapArrayKeys(pool, { arraysEachSide: this.arraysEachSide }, this.keys);
    const accounts: string[] = [];
    if (memo.pdas.size > MAX_REMEMBERED_PDAS) memo.pdas.clear();
    for (const key of keys) {
      let address = memo.pdas.get(key);
      if (address === undefined) {
        address = swapArrayAddress(pool, memo.programId, key);
        memo.pdas.set(key, address);
        this.stats.derivedAddresses++;
      }
      accounts.push(address);
    }
    keys.length = 0;
    if (ammConfig !== undefined) accounts.push(ammConfig);
    memo.swapAccounts = accounts;
    // Forget the decodes of accounts no longer read.
    for (const address of memo.decoded.keys()) if (!accounts.includes(address)) memo.decoded.delete(address);
  }

  /** The loaded pool from its context reads, or the read failure that prevents it. */
  private assemble(pending: Pending, reads: Map<string, Read>, nowSeconds: bigint | undefined): PoolLoadResult {
    const { address, account, memo } = pending;
    const pool = memo.pool;
    let reserves: readonly [bigint, bigint] | undefined;
    if (pool.dex === Dex.Amm) {
      if (memo.reserveAccounts === undefined) {
        // Spec 02's simplified layout: the reserves are the account's own fields.
        return ok({ address, dex: pool.dex, pool, context: undefined, slot: account.slot, data: account.data, reserves: [pool.reserveA, pool.reserveB] });
      }
      const [vaultA, vaultB] = memo.reserveAccounts;
      const x = reads.get(vaultA);
      const y = reads.get(vaultB);
      if (x instanceof Error) return failure(address, 'rpc', `vault ${vaultA} read failed: ${x.message}`);
      if (y instanceof Error) return failure(address, 'rpc', `vault ${vaultB} read failed: ${y.message}`);
      const withVaults = withAmmVaultAccounts(pool, x, y);
      if (typeof withVaults === 'string') return failure(address, 'decode', `AMM ${address}: ${withVaults}`);
      let slot = account.slot;
      if (x !== null && x !== undefined && x.slot > slot) slot = x.slot;
      if (y !== null && y !== undefined && y.slot > slot) slot = y.slot;
      return ok({ address, dex: pool.dex, pool: withVaults, context: undefined, slot, data: account.data, reserves: [withVaults.reserveA, withVaults.reserveB] });
    }
    const decoded = new Array<DecodedAccount | undefined>(memo.swapAccounts.length);
    for (let i = 0; i < memo.swapAccounts.length; i++) {
      const a = memo.swapAccounts[i]!;
      const read = reads.get(a);
      if (read instanceof Error) return failure(address, 'rpc', `context account ${a} read failed: ${read.message}`);
      decoded[i] = this.decodeContext(memo, a, read ?? null);
    }
    if (memo.reserveAccounts !== undefined && this.readReserves) {
      const x = reads.get(memo.reserveAccounts[0]);
      const y = reads.get(memo.reserveAccounts[1]);
      if (x instanceof Error) return failure(address, 'rpc', `reserve account read failed: ${x.message}`);
      if (y instanceof Error) return failure(address, 'rpc', `reserve account read failed: ${y.message}`);
      const amountA = x === null || x === undefined ? undefined : tokenAccountAmount(x.data);
      const amountB = y === null || y === undefined ? undefined : tokenAccountAmount(y.data);
      if (amountA !== undefined && amountB !== undefined) reserves = [amountA, amountB];
    }
    const state = assembleSwapState(pool, decoded, nowSeconds);
    const loaded: LoadedPool = { address, dex: pool.dex, pool: state.pool, context: state.context, slot: account.slot, data: account.data };
    if (reserves !== undefined) loaded.reserves = reserves;
    return ok(loaded);
  }

  private decodeContext(memo: PoolMemo, address: string, read: AccountData | null): DecodedAccount | undefined {
    if (read === null) {
      memo.decoded.delete(address);
      return undefined;
    }
    const cached = memo.decoded.get(address);
    const digest = this.digestOf(read.data);
    if (cached !== undefined && cached.digest === digest) {
      this.stats.reusedDecodes++;
      return cached.value;
    }
    const value = compactDecoded(decodeSwapAccount(this.registry, memo.pool, address, read));
    memo.decoded.set(address, { digest, value });
    return value;
  }

  /**
   * What the loader remembers of an account's bytes: a SHA-256 digest, not the bytes (1,000 pools'
   * tick and bin arrays are tens of MB), to tell a changed account from an unchanged one.
   */
  private digestOf(data: Uint8Array): string {
    let digest = this.digestsOf.get(data);
    if (digest === undefined) {
      digest = hash('sha256', data, 'base64');
      this.digestsOf.set(data, digest);
      this.stats.digests++;
    }
    return digest;
  }

  /** Marks the pool most recently loaded; drops the least recent past maxRemembered. */
  private touch(address: string, memo: PoolMemo): void {
    this.memos.delete(address);
    if (this.maxRemembered === 0) return;
    this.memos.set(address, memo);
    if (this.memos.size > this.maxRemembered) {
      const oldest = this.memos.keys().next().value;
      if (oldest !== undefined) this.memos.delete(oldest);
    }
  }
}

export function createRpcPoolLoader(options: RpcPoolLoaderOptions): RpcPoolLoader {
  return new RpcPoolLoader(options);
}

function ok(value: LoadedPool): PoolLoadResult {
  return { ok: true, value };
}

function failure(address: string, reason: PoolLoadFailure['reason'], message: string): PoolLoadResult {
  return { ok: false, error: { address, reason, message } };
}

/** `err` when it is an Error; a thrown value that is not one becomes TpError(Internal) with it as the cause. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new TpError(ErrorCode.Internal, `non-Error thrown: ${String(err)}`, { cause: err });
}

function settle(promise: Promise<AccountData | null>): Promise<Read> {
  return promise.then((account) => account, asError);
}

/** Replaces every promise of the map by its value. */
async function resolveAll(reads: Map<string, Read | Promise<Read>>): Promise<void> {
  for (const [address, read] of reads) {
    if (read instanceof Promise) reads.set(address, await read);
  }
}

/** Remembered decodes are kept compact (initialized ticks only, shared zero bins): see compact-context.ts. */
function compactDecoded(account: DecodedAccount | undefined): DecodedAccount | undefined {
  if (account?.kind === 'tickArray') return { ...account, tickArray: compactTickArray(account.tickArray) };
  if (account?.kind === 'binArray') return { ...account, binArray: compactBinArray(account.binArray) };
  return account;
}

function sameBitmap(a: readonly bigint[] | undefined, b: readonly bigint[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function lastIs(accounts: readonly string[], ammConfig: string | undefined): boolean {
  return ammConfig === undefined || accounts[accounts.length - 1] === ammConfig;
}
