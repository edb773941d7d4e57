import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { KEY_TTL_MS, KeySpace } from './key-space.js';
import type { KvStore } from './kv-store.js';
import { RedisStore } from './redis-store.js';
import { KV_BACKENDS, type TestKeySpace } from './testing.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function expectTtl(ttl: number, expected: number | undefined): void {
  if (expected === undefined) expect(ttl).toBe(-1);
  else {
    expect(ttl).toBeGreaterThan(expected - 5_000);
    expect(ttl).toBeLessThanOrEqual(expected);
  }
}

describe.each(KV_BACKENDS)('key space on $name', ({ create }) => {
  let t: TestKeySpace;
  beforeAll(async () => {
    t = await create();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('writes every pattern of spec 03 under the prefix with its TTL, values as JSON', async () => {
    const k = t.keys;
    const p = k.prefix;
    await k.setPrice(SOL, 'dexa_amm', { price: 151.25, timestamp: 1_700_000_000_000 });
    await k.setQuote(SOL, USDC, 18_446_744_073_709_551_615n, { outputAmount: 123n, source: 'cache' });
    await k.setVolume(SOL, { volume: '900000000000', averageTradeSize: '1500000' });
    await k.setRouteTemplate('ab12', { version: 1, writtenAt: 1_700_000_000_003, pools: [{ address: 'P', owner: 'Prog', dex: 'dexa_amm', accounts: ['VaultA', 'VaultB', SOL, USDC] }] });
    await k.setWalletBalance('Wallet1', SOL, { expected: '5000000000', actual: '4999995000', lastSync: 1_700_000_000_001 });
    await k.setStrategyState('grid-1', { level: 3, filled: '10' });
    await k.setHealth('quote-service', { status: 'ok', lastHeartbeat: 1_700_000_000_002 });
    const lock = await k.acquireExecutorLock('wallet-uuid', 'tx-1');
    expect(lock).not.toBeNull();

    const expected: [string, number | undefined][] = [
      [`${p}price:${SOL}:dexa_amm`, KEY_TTL_MS.price],
      [`${p}quote:${SOL}:${USDC}:18446744073709551615`, KEY_TTL_MS.quote],
      [`${p}volume:${SOL}:24h`, KEY_TTL_MS.volume],
      [`${p}route_template:ab12`, KEY_TTL_MS.routeTemplate],
      [`${p}wallet:balance:Wallet1:${SOL}`, undefined],
      [`${p}strategy:state:grid-1`, undefined],
      [`${p}system:health:quote-service`, undefined],
      [`${p}lock:executor:wallet-uuid`, KEY_TTL_MS.executorLock],
    ];
    expect(await t.store.keys(p)).toEqual(expected.map(([key]) => key).sort());
    for (const [key, ttl] of expected) expectTtl(await t.store.pttl(key), ttl);
    expect(KEY_TTL_MS).toMatchObject({ price: 300_000, quote: 300_000, volume: 43_200_000, routeTemplate: 43_200_000, executorLock: 30_000 });

    expect(await k.getPrice(SOL, 'dexa_amm')).toEqual({ price: 151.25, timestamp: 1_700_000_000_000 });
    expect(JSON.parse((await k.getQuoteText(SOL, USDC, 18_446_744_073_709_551_615n))!)).toEqual({ outputAmount: '123', source: 'cache' });
    expect(await k.getVolume(SOL)).toEqual({ volume: '900000000000', averageTradeSize: '1500000' });
    expect(await k.getWalletBalance('Wallet1', SOL)).toEqual({ expected: '5000000000', actual: '4999995000', lastSync: 1_700_000_000_001 });
    expect(await k.getStrategyState('grid-1')).toEqual({ level: 3, filled: '10' });
    expect(await k.getHealth('quote-service')).toEqual({ status: 'ok', lastHeartbeat: 1_700_000_000_002 });
    expect(await k.getRouteTemplate('ab12')).toEqual({ version: 1, writtenAt: 1_700_000_000_003, pools: [{ address: 'P', owner: 'Prog', dex: 'dexa_amm', accounts: ['VaultA', 'VaultB', SOL, USDC] }] });
    expect(await k.deleteRouteTemplate('ab12')).toBe(true);
    expect(await k.getRouteTemplate('ab12')).toBeNull();
    expect(await k.executorLockHolder('wallet-uuid')).toMatchObject({ transactionId: 'tx-1', owner: lock!.value.owner });
    await lock!.release();
  });

  it('keeps two prefixes apart on one store', async () => {
    const other = new KeySpace(t.store, `${t.keys.prefix}other:`);
    await other.setHealth('scanner', { status: 'down', lastHeartbeat: 1 });
    expect(await t.keys.getHealth('scanner')).toBeNull();
    expect(await other.getHealth('scanner')).toEqual({ status: 'down', lastHeartbeat: 1 });
  });

  it('executor lock: one of two contenders wins; a non-owner cannot release or extend it', async () => {
    const [a, b] = await Promise.all([t.keys.acquireExecutorLock('w-contend', 'tx-a'), t.keys.acquireExecutorLock('w-contend', 'tx-b')]);
    const winners = [a, b].filter((l) => l !== null);
    expect(winners).toHaveLength(1);
    const held = winners[0]!;
    expect((await t.keys.executorLockHolder('w-contend'))?.transactionId).toBe(held.value.transactionId);

    // Someone who does not hold it (a stale holder's token) is refused, and the lock stays.
    const key = t.keys.executorLockKey('w-contend');
    const forged = JSON.stringify({ ...held.value, owner: 'not-the-owner' });
    expect(await t.store.deleteIfEquals(key, forged)).toBe(false);
    expect(await t.store.expireIfEquals(key, forged, 60_000)).toBe(false);
    expect(await held.held()).toBe(true);
    expect(await t.keys.acquireExecutorLock('w-contend', 'tx-c')).toBeNull();

    expect(await held.extend()).toBe(true);
    expectTtl(await t.store.pttl(key), 30_000);
    expect(await held.release()).toBe(true);
    expect(await held.release()).toBe(false);
    const next = await t.keys.acquireExecutorLock('w-contend', 'tx-c');
    expect(next?.value.transactionId).toBe('tx-c');
    await next!.release();
  });

  it('executor lock: a SET NX sent again after a lost reply finds its own token and holds the lock', async () => {
    // ioredis resends a command whose reply a dropped connection lost: the first SET stored the
    // lock, the resent one finds the key taken. The lock is this holder's all the same.
    const resent: KvStore = Object.create(t.store) as KvStore;
    resent.setIfAbsent = async (key, value, ttlMs) => {
      await t.store.setIfAbsent(key, value, ttlMs);
      return false;
    };
    const keys = new KeySpace(resent, t.keys.prefix);
    const lock = await keys.acquireExecutorLock('w-resent', 'tx-1');
    expect(lock).not.toBeNull();
    expect(await lock!.held()).toBe(true);
    expect(await keys.acquireExecutorLock('w-resent', 'tx-2')).toBeNull();
    expect(await lock!.release()).toBe(true);
  });

  it('executor lock: an expired lock is free for the next contender, and the old holder can no longer release it', async () => {
    const first = await t.keys.acquireExecutorLock('w-expiry', 'tx-1', 150);
    expect(first).not.toBeNull();
    expect(await t.keys.acquireExecutorLock('w-expiry', 'tx-2')).toBeNull();
    await until(async () => (await t.store.pttl(t.keys.executorLockKey('w-expiry'))) === -2);
    const second = await t.keys.acquireExecutorLock('w-expiry', 'tx-2');
    expect(second?.value.transactionId).toBe('tx-2');
    expect(await first!.release()).toBe(false);
    expect(await first!.extend()).toBe(false);
    expect(await second!.held()).toBe(true);
    await second!.release();
  });
});

describe('key space on a Redis that is down', () => {
  it('fails to connect with TP_ERR_KV_UNAVAILABLE naming the target', async () => {
    const err = await RedisStore.connect({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 1000 }).catch((e: unknown) => e);
    expect(isTpError(err, ErrorCode.KvUnavailable)).toBe(true);
    expect((err as Error).message).toMatch(/^Redis redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  it('a command after the connection is gone fails fast with TP_ERR_KV_UNAVAILABLE', async () => {
    const store = await RedisStore.connect({ url: 'redis://127.0.0.1:6379' });
    await store.close();
    const keys = new KeySpace(store, 'tp-test:closed:');
    await expect(keys.getHealth('x')).rejects.toMatchObject({ code: ErrorCode.KvUnavailable });
    expect((await store.status()).ok).toBe(false);
  });
});
