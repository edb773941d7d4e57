import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLogger } from '../obs/index.js';
import { createScannerMetrics } from '../obs/index.js';
import { createServerDatabase, type TestDatabase } from './db/testing.js';
import { KeySpace } from './kv/key-space.js';
import { RedisStore } from './kv/redis-store.js';
import { TEST_REDIS_URL, testPrefix } from './kv/testing.js';
import { openSplitQuoteCache, startSplitServiceState } from './split-service-state.js';

const logger = createLogger({ level: 'silent' });

describe('platform state of a split service', () => {
  let t: TestDatabase;
  let store: RedisStore;
  let keys: KeySpace;
  beforeAll(async () => {
    t = await createServerDatabase();
    store = await RedisStore.connect({ url: TEST_REDIS_URL });
    keys = new KeySpace(store, testPrefix());
  });
  afterAll(async () => {
    for (const key of await store.keys(keys.prefix)) await store.del(key);
    await store.close();
    await t?.drop();
  });

  it('the quote cache of a quote service: Redis with REDIS_URL (written and read), else in-process (written only)', async () => {
    const shared = await openSplitQuoteCache({ env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: keys.prefix, TIDEPOOL_CONFIG: '/nonexistent.json' }, logger });
    expect(shared.cache.keys.store.kind).toBe('redis');
    expect(shared.cache.keys.prefix).toBe(keys.prefix);
    expect((await shared.dependencyStatus()).map((d) => [d.name, d.ok])).toEqual([['redis', true]]);
    await shared.close();
    const local = await openSplitQuoteCache({ env: {}, logger });
    expect(local.cache.keys.store.kind).toBe('memory');
    await local.close();
    await expect(openSplitQuoteCache({ env: { REDIS_URL: 'redis://127.0.0.1:1' }, logger })).rejects.toMatchObject({ code: 'TP_ERR_KV_UNAVAILABLE' });
  });

  it('keeps nothing without REDIS_URL or DATABASE_URL', async () => {
    expect(await startSplitServiceState({ service: 'scanner', env: {}, logger })).toBeUndefined();
  });

  it('a scanner with both beats in Redis and writes scanner_metrics rows; readiness sees both', async () => {
    const metrics = createScannerMetrics();
    const state = await startSplitServiceState({
      service: 'scanner',
      env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: keys.prefix, DATABASE_URL: t.url!, TIDEPOOL_CONFIG: '/nonexistent.json' },
      logger,
      scanner: { metrics, scannerId: 'split-scanner' },
    });
    expect(state).toBeDefined();
    expect((await keys.getHealth('scanner'))?.status).toBe('ok');
    const deps = await state!.dependencyStatus();
    expect(deps.map((d) => [d.name, d.ok])).toEqual([
      ['redis', true],
      ['postgres', true],
    ]);
    metrics.eventsPublished.inc(5);
    await state!.close();
    expect((await keys.getHealth('scanner'))?.status).toBe('stopped');
    const rows = await t.db.query<{ events: number }>("SELECT events_processed AS events FROM scanner_metrics WHERE scanner_id = 'split-scanner'");
    expect(rows.map((r) => r.events)).toEqual([5]);
  });
});
