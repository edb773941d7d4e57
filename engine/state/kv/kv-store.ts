/**
 * The key-value store under the platform's key space (key-space.ts): the few operations it needs,
 * implemented over Redis (redis-store.ts) and over an in-process map (memory-store.ts, the
 * embedded default for `npm start`) with the same semantics, so the same tests run on both.
 *
 * Values are strings (the key space stores JSON). A `ttlMs` of undefined means persistent.
 * Failures to reach the store are TpErrors with code TP_ERR_KV_UNAVAILABLE.
 */

export interface KvEntry {
  key: string;
  value: string;
  /** Expiry in ms; undefined = persistent. */
  ttlMs?: number;
}

/** What readiness needs from a dependency: whether it answers, and how fast. */
export interface DependencyStatus {
  name: string;
  /** `redis://host:port` (no password), `embedded`, … */
  target: string;
  ok: boolean;
  /** Round trip of the probe, ms (when ok). */
  latencyMs?: number;
  /** Why not ok, as the client reported it. */
  error?: string;
}

export interface KvStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Values in key order, null where missing. */
  mget(keys: readonly string[]): Promise<(string | null)[]>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Many sets in one round trip (a pipeline on Redis); not atomic as a whole. */
  setMany(entries: readonly KvEntry[]): Promise<void>;
  /** SET NX PX: stores only when the key is absent; whether it stored. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key only while it holds `expected` (atomically); whether it deleted. */
  deleteIfEquals(key: string, expected: string): Promise<boolean>;
  /** Sets a new expiry only while the key holds `expected` (atomically); whether it did. */
  expireIfEquals(key: string, expected: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<boolean>;
  /** Remaining ms to live: -1 persistent, -2 missing (Redis PTTL). */
  pttl(key: string): Promise<number>;
  /** Keys starting with `prefix` (SCAN on Redis; for tools and tests, not hot paths). */
  keys(prefix: string): Promise<string[]>;
  /** A round trip; reports instead of throwing. */
  status(): Promise<DependencyStatus>;
  close(): Promise<void>;
}
