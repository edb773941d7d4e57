import { randomBytes } from 'node:crypto';

import { ErrorCode, TpError } from '../../errors.js';
import type { KvEntry, KvStore } from './kv-store.js';

/**
 * The platform's key space (spec 03 "Key-value cache key patterns"): every key pattern, its value
 * and its TTL, in one place. Nothing else in the engine builds these keys.
 *
 * | pattern                              | value (JSON)                                   | TTL        |
 * |--------------------------------------|------------------------------------------------|------------|
 * | price:{token}:{dex}                  | {price, timestamp}                             | 5 min      |
 * | quote:{input}:{output}:{amount}      | the quote response                             | 5 min      |
 * | volume:{token}:24h                   | {volume, averageTradeSize}                     | 12 h       |
 * | route_template:{hash}                | {version, writtenAt, pools: [{address, owner,  | 12 h       |
 * |                                      |  dex, accounts}]} (RouteTemplateValue)         |            |
 * | wallet:balance:{address}:{token}     | {expected, actual, lastSync}                   | persistent |
 * | strategy:state:{strategy_id}         | the strategy's state                           | persistent |
 * | system:health:{service}              | {status, lastHeartbeat}                        | persistent |
 * | lock:executor:{wallet_id}            | {transactionId, owner, acquiredAt}             | 30 s       |
 *
 * Values are JSON with camelCase fields, u64 amounts as decimal strings and times as Unix ms.
 * `amount` in a quote key is the decimal u64. The optional `prefix` (a namespace, e.g.
 * `tidepool:prod:`) goes in front of every key: several deployments, or concurrent tests, can
 * share one Redis without seeing each other's keys.
 */

export const KEY_TTL_MS = {
  price: 5 * 60_000,
  quote: 5 * 60_000,
  volume: 12 * 3_600_000,
  routeTemplate: 12 * 3_600_000,
  walletBalance: undefined,
  strategyState: undefined,
  systemHealth: undefined,
  executorLock: 30_000,
} as const;

export interface PriceValue {
  /** Price of the token in the dex's quote unit, as the scanner computed it. */
  price: number;
  /** Unix ms. */
  timestamp: number;
  /** The mint `price` is counted in, when the writer knows it (the quote cache: the hop's output mint). */
  quoteMint?: string;
}

export interface VolumeValue {
  /** 24 h volume, atoms, decimal. */
  volume: string;
  /** Atoms, decimal. */
  averageTradeSize: string;
}

/**
 * A route's accounts, as the executor read them before a trade (route-template.ts):
 * per pool of the route, in route order, its owner program and DEX (what decodes it) and the
 * accounts its quote depends on, in the order the pool loader reads them (tick or bin arrays
 * ascending, Raydium's AmmConfig, the reserve vaults, the two mints). `{hash}` is the route's hash
 * (routeTemplateHash).
 */
export interface RouteTemplateValue {
  version: 1;
  /** Unix ms. */
  writtenAt: number;
  pools: RouteTemplatePool[];
}

export interface RouteTemplatePool {
  address: string;
  /** The pool account's owner (the DEX program). */
  owner: string;
  dex: string;
  accounts: string[];
}

export interface WalletBalanceValue {
  /** Atoms (lamports for SOL), decimal; null when no expected balance is set. */
  expected: string | null;
  actual: string;
  /** Unix ms. */
  lastSync: number;
}

/**
 * The status a `system:health:{service}` heartbeat records (docs/operations.md, Health): `ok`,
 * `degraded`, `down`, and `stopped` once the service closed. Stored data, so its own vocabulary;
 * a service's `GET /health` answers with engine/common's HealthStatus.
 */
export const HeartbeatStatus = { Ok: 'ok', Degraded: 'degraded', Down: 'down', Stopped: 'stopped' } as const;
export type HeartbeatStatus = (typeof HeartbeatStatus)[keyof typeof HeartbeatStatus];

export interface HealthValue {
  status: HeartbeatStatus;
  /** Unix ms. */
  lastHeartbeat: number;
  /** Optional detail (dependency states, version). */
  detail?: Record<string, unknown>;
}

export interface ExecutorLockValue {
  /** The transaction the executor is running with this wallet. */
  transactionId: string;
  /** Random token of the holder: only it may release or extend the lock. */
  owner: string;
  /** Unix ms. */
  acquiredAt: number;
}

/** JSON with bigint as decimal strings. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function parseJson<T>(text: string | null, key: string): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new TpError(ErrorCode.KvUnavailable, `key ${key} holds a value that is not JSON`, { cause: err, context: { key } });
  }
}

/** A held executor lock. */
export class ExecutorLock {
  constructor(
    private readonly store: KvStore,
    readonly key: string,
    readonly walletId: string,
    readonly value: ExecutorLockValue,
    private readonly text: string,
  ) {}

  /** Deletes the lock if this holder still has it; false when it expired or someone else holds it. */
  release(): Promise<boolean> {
    return this.store.deleteIfEquals(this.key, this.text);
  }

  /** Resets the expiry to `ttlMs` (default 30 s) if this holder still has it. */
  extend(ttlMs: number = KEY_TTL_MS.executorLock): Promise<boolean> {
    return this.store.expireIfEquals(this.key, this.text, ttlMs);
  }

  /** Whether this holder still has it. */
  async held(): Promise<boolean> {
    return (await this.store.get(this.key)) === this.text;
  }
}

export class KeySpace {
  constructor(
    readonly store: KvStore,
    /** Namespace in front of every key; empty by default. */
    readonly prefix = '',
  ) {}

  // ---- keys

  priceKey(token: string, dex: string): string {
    return `${this.prefix}price:${token}:${dex}`;
  }

  quoteKey(input: string, output: string, amount: bigint): string {
    return `${this.prefix}quote:${input}:${output}:${amount.toString()}`;
  }

  volumeKey(token: string): string {
    return `${this.prefix}volume:${token}:24h`;
  }

  routeTemplateKey(hash: string): string {
    return `${this.prefix}route_template:${hash}`;
  }

  walletBalanceKey(address: string, token: string): string {
    return `${this.prefix}wallet:balance:${address}:${token}`;
  }

  strategyStateKey(strategyId: string): string {
    return `${this.prefix}strategy:state:${strategyId}`;
  }

  healthKey(service: string): string {
    return `${this.prefix}system:health:${service}`;
  }

  executorLockKey(walletId: string): string {
    return `${this.prefix}lock:executor:${walletId}`;
  }

  // ---- entries (for batched writers)

  priceEntry(token: string, dex: string, value: PriceValue): KvEntry {
    return { key: this.priceKey(token, dex), value: toJsonText(value), ttlMs: KEY_TTL_MS.price };
  }

  /** `quoteJson` is the quote response as JSON text (the quote service's own encoding). */
  quoteEntry(input: string, output: string, amount: bigint, quoteJson: string): KvEntry {
    return { key: this.quoteKey(input, output, amount), value: quoteJson, ttlMs: KEY_TTL_MS.quote };
  }

  // ---- reads and writes

  setPrice(token: string, dex: string, value: PriceValue): Promise<void> {
    const e = this.priceEntry(token, dex, value);
    return this.store.set(e.key, e.value, e.ttlMs);
  }

  async getPrice(token: string, dex: string): Promise<PriceValue | null> {
    const key = this.priceKey(token, dex);
    return parseJson<PriceValue>(await this.store.get(key), key);
  }

  setQuote(input: string, output: string, amount: bigint, quote: unknown): Promise<void> {
    return this.store.set(this.quoteKey(input, output, amount), toJsonText(quote), KEY_TTL_MS.quote);
  }

  /** The cached quote response as its JSON text (not parsed: a replica may pass it through). */
  getQuoteText(input: string, output: string, amount: bigint): Promise<string | null> {
    return this.store.get(this.quoteKey(input, output, amount));
  }

  setVolume(token: string, value: VolumeValue): Promise<void> {
    return this.store.set(this.volumeKey(token), toJsonText(value), KEY_TTL_MS.volume);
  }

  async getVolume(token: string): Promise<VolumeValue | null> {
    const key = this.volumeKey(token);
    return parseJson<VolumeValue>(await this.store.get(key), key);
  }

  setRouteTemplate(hash: string, template: RouteTemplateValue): Promise<void> {
    return this.store.set(this.routeTemplateKey(hash), toJsonText(template), KEY_TTL_MS.routeTemplate);
  }

  /** Writes the template only where the route has none (SET NX); whether it wrote it. */
  setRouteTemplateIfAbsent(hash: string, template: RouteTemplateValue): Promise<boolean> {
    return this.store.setIfAbsent(this.routeTemplateKey(hash), toJsonText(template), KEY_TTL_MS.routeTemplate);
  }

  async getRouteTemplate(hash: string): Promise<RouteTemplateValue | null> {
    const key = this.routeTemplateKey(hash);
    return parseJson<RouteTemplateValue>(await this.store.get(key), key);
  }

  /** Forgets a route's template (a pool of the route is gone); whether there was one. */
  deleteRouteTemplate(hash: string): Promise<boolean> {
    return this.store.del(this.routeTemplateKey(hash));
  }

  setWalletBalance(address: string, token: string, value: WalletBalanceValue): Promise<void> {
    return this.store.set(this.walletBalanceKey(address, token), toJsonText(value));
  }

  /** Many wallet balances in one round trip. */
  setWalletBalances(values: readonly { address: string; token: string; value: WalletBalanceValue }[]): Promise<void> {
    return this.store.setMany(values.map((v) => ({ key: this.walletBalanceKey(v.address, v.token), value: toJsonText(v.value) })));
  }

  async getWalletBalance(address: string, token: string): Promise<WalletBalanceValue | null> {
    const key = this.walletBalanceKey(address, token);
    return parseJson<WalletBalanceValue>(await this.store.get(key), key);
  }

  setStrategyState(strategyId: string, state: unknown): Promise<void> {
    return this.store.set(this.strategyStateKey(strategyId), toJsonText(state));
  }

  async getStrategyState<T = unknown>(strategyId: string): Promise<T | null> {
    const key = this.strategyStateKey(strategyId);
    return parseJson<T>(await this.store.get(key), key);
  }

  setHealth(service: string, value: HealthValue): Promise<void> {
    return this.store.set(this.healthKey(service), toJsonText(value));
  }

  async getHealth(service: string): Promise<HealthValue | null> {
    const key = this.healthKey(service);
    return parseJson<HealthValue>(await this.store.get(key), key);
  }

  /**
   * Takes `lock:executor:{walletId}` if nobody holds it (SET NX with a 30 s expiry), for
   * `transactionId`, with a fresh random owner token. Null when it is held.
   * `ttlMs` exists for tests of expiry; production uses the spec's 30 s.
   *
   * A refused SET NX is checked once against the key: when it holds this call's own token, the
   * lock is this call's. That is the case where Redis stored the first SET but its reply was lost
   * with the connection, and the client sent the command again after reconnecting (ioredis
   * resends unanswered commands): without the check the wallet would sit locked by nobody for 30 s.
   */
  async acquireExecutorLock(walletId: string, transactionId: string, ttlMs: number = KEY_TTL_MS.executorLock): Promise<ExecutorLock | null> {
    const key = this.executorLockKey(walletId);
    const value: ExecutorLockValue = { transactionId, owner: randomBytes(16).toString('hex'), acquiredAt: Date.now() };
    const text = toJsonText(value);
    if (!(await this.store.setIfAbsent(key, text, ttlMs)) && (await this.store.get(key)) !== text) return null;
    return new ExecutorLock(this.store, key, walletId, value, text);
  }

  /** Who holds the executor lock of a wallet, if anyone. */
  async executorLockHolder(walletId: string): Promise<ExecutorLockValue | null> {
    const key = this.executorLockKey(walletId);
    return parseJson<ExecutorLockValue>(await this.store.get(key), key);
  }
}
