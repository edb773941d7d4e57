import type { DependencyStatus, KvEntry, KvStore } from './kv-store.js';

/**
 * KvStore in this process: the embedded default when no Redis URL is configured. The same
 * semantics as Redis for what the key space uses: expiry in ms (a key past its expiry is gone for
 * every read), SET NX, compare-and-delete and compare-and-expire (atomic by construction: one
 * thread, no await between the check and the act). Expired keys are dropped when read and by a
 * sweep every `sweepMs`, so memory stays bounded by the live keys. Nothing is shared with other
 * processes and nothing survives the process.
 */

interface Slot {
  value: string;
  /** ms since epoch (of `now()`); Infinity = persistent. */
  expiresAt: number;
}

export interface MemoryStoreOptions {
  /** Clock in ms. Default Date.now. */
  now?: () => number;
  /** Default 10 s. */
  sweepMs?: number;
}

export class MemoryStore implements KvStore {
  readonly kind = 'memory' as const;
  readonly target = 'in-process';
  private readonly map = new Map<string, Slot>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), options.sweepMs ?? 10_000);
    this.sweeper.unref();
  }

  /** Live keys (tests). */
  get size(): number {
    this.sweep();
    return this.map.size;
  }

  private live(key: string): Slot | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    if (slot.expiresAt <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return slot;
  }

  private put(key: string, value: string, ttlMs: number | undefined): void {
    this.map.set(key, { value, expiresAt: ttlMs === undefined ? Infinity : this.now() + ttlMs });
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async mget(keys: readonly string[]): Promise<(string | null)[]> {
    return keys.map((k) => this.live(k)?.value ?? null);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.put(key, value, ttlMs);
  }

  async setMany(entries: readonly KvEntry[]): Promise<void> {
    for (const e of entries) this.put(e.key, e.value, e.ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key) !== undefined) return false;
    this.put(key, value, ttlMs);
    return true;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    if (this.live(key)?.value !== expected) return false;
    this.map.delete(key);
    return true;
  }

  async expireIfEquals(key: string, expected: string, ttlMs: number): Promise<boolean> {
    const slot = this.live(key);
    if (slot?.value !== expected) return false;
    slot.expiresAt = this.now() + ttlMs;
    return true;
  }

  async del(key: string): Promise<boolean> {
    const had = this.live(key) !== undefined;
    this.map.delete(key);
    return had;
  }

  async pttl(key: string): Promise<number> {
    const slot = this.live(key);
    if (slot === undefined) return -2;
    return slot.expiresAt === Infinity ? -1 : slot.expiresAt - this.now();
  }

  async keys(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for (const key of this.map.keys()) if (key.startsWith(prefix) && this.live(key) !== undefined) out.push(key);
    return out.sort();
  }

  async status(): Promise<DependencyStatus> {
    return { name: 'kv', target: this.target, ok: true, latencyMs: 0 };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, slot] of this.map) if (slot.expiresAt <= now) this.map.delete(key);
  }
}
