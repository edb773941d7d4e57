import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache, poolStateOfLoaded } from '../cache/index.js';
import { Dex, type AmmPool } from '../dex/index.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { createLogger } from '../obs/logger.js';
import type { LoadedPool } from '../pools/index.js';
import { PoolValidator } from './pool-validator.js';
import { defaultQuoteConfig } from '../quote-service/quote-config.js';
import { createQuoteService, type QuoteService } from '../quote-service/quote-service.js';
import { CountingLoader, manualSimulator } from './testing.js';

/**
 * hybridMode.validateInterval on the simulator: the cache filled from the simulator's JSON-RPC by
 * the real pool loader, one pool's cached state then made wrong; the validation reads the sample
 * again, counts the mismatch and refreshes the pool.
 */

const sim = manualSimulator(7);
const chain = sim.chain;
let rpcUrl = '';
beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});
afterAll(async () => {
  await sim.close();
});

async function loadAll(loader: CountingLoader): Promise<LoadedPool[]> {
  const results = await loader.load(chain.pools().map((p) => p.address));
  return results.map((r) => {
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  });
}

/** An AMM pool's state with half its A reserve: not what the chain holds. */
function wrongState(loaded: LoadedPool): LoadedPool {
  const pool = loaded.pool as AmmPool;
  return { ...loaded, pool: { ...pool, reserveA: pool.reserveA / 2n } };
}

describe('PoolValidator', () => {
  it('finds nothing on a cache that matches the chain, then counts and refreshes a pool whose cached state is wrong', async () => {
    const loader = new CountingLoader(rpcUrl);
    const cache = new PoolCache({ stalenessThresholdMs: 60_000 });
    const loaded = await loadAll(loader);
    for (const pool of loaded) cache.upsert(poolStateOfLoaded(pool));
    const metrics = createQuoteMetrics();
    const validator = new PoolValidator({ cache, loader, metrics, intervalMs: 60_000, sampleSize: 100 });

    const clean = await validator.validateOnce();
    expect(clean).toMatchObject({ checked: loaded.length, mismatches: 0 });

    // Same slot, another state: the cache is wrong (two states cannot share a slot).
    const amm = loaded.find((p) => p.dex === Dex.Amm)!;
    cache.upsert(poolStateOfLoaded(wrongState(amm)), true);
    expect((cache.poolAt(cache.idOf(amm.address)) as AmmPool).reserveA).toBe((amm.pool as AmmPool).reserveA / 2n);
    const round = await validator.validateOnce();
    expect(round).toMatchObject({ checked: loaded.length, mismatches: 1, pools: [amm.address] });
    expect(cache.poolAt(cache.idOf(amm.address))).toEqual(amm.pool);
    const text = await metrics.registry.metrics();
    expect(text).toContain(`quote_service_cache_validation_checks_total ${2 * loaded.length}`);
    expect(text).toContain('quote_service_cache_validation_mismatches_total 1');

    // The cache behind the chain (an older slot, another state): refreshed under the slot rule.
    const other = new PoolCache({ stalenessThresholdMs: 60_000 });
    other.upsert(poolStateOfLoaded(wrongState(amm)));
    const now = chain.advanceSlot();
    const second = new PoolValidator({ cache: other, loader, metrics: createQuoteMetrics(), intervalMs: 60_000 });
    expect(await second.validateOnce()).toMatchObject({ checked: 1, mismatches: 1 });
    expect(other.slotOf(amm.address)).toBe(now);
    expect((other.poolAt(other.idOf(amm.address)) as AmmPool).reserveA).toBe((chain.pool(amm.address)!.pool as AmmPool).reserveA);
  });

  it('samples round-robin: every pool within ceil(pools / sampleSize) rounds', async () => {
    const loader = new CountingLoader(rpcUrl);
    const cache = new PoolCache({ stalenessThresholdMs: 60_000 });
    const loaded = await loadAll(loader);
    for (const pool of loaded) cache.upsert(poolStateOfLoaded(pool));
    const validator = new PoolValidator({ cache, loader, metrics: createQuoteMetrics(), intervalMs: 60_000, sampleSize: 3 });
    const amm = loaded.find((p) => p.dex === Dex.Amm)!;
    cache.upsert(poolStateOfLoaded(wrongState(amm)), true);
    let found = 0;
    let checked = 0;
    for (let i = 0; i < Math.ceil(loaded.length / 3); i++) {
      const round = await validator.validateOnce();
      found += round.mismatches;
      checked += round.checked;
    }
    expect(found).toBe(1);
    expect(checked).toBe(3 * Math.ceil(loaded.length / 3));
  });
});

describe('hybridMode.validateInterval in the quote service', () => {
  let service: QuoteService | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('runs on its interval and shows the mismatch on GET /metrics', async () => {
    const loader = new CountingLoader(rpcUrl);
    const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, 'bus.enabled': false, 'hybridMode.validateInterval': 1000 });
    const cache = new PoolCache({ stalenessThresholdMs: 60_000 });
    const loaded = await loadAll(loader);
    for (const pool of loaded) cache.upsert(poolStateOfLoaded(pool));
    const amm = loaded.find((p) => p.dex === Dex.Amm)!;
    cache.upsert(poolStateOfLoaded(wrongState(amm)), true);
    service = createQuoteService(config, { cache, loader, logger: createLogger({ name: 'validation-test', level: 'silent' }) });
    expect(service.validator).toBeDefined();
    const { metricsPort } = await service.start();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      if (/quote_service_cache_validation_mismatches_total 1\b/.test(text)) break;
      if (Date.now() > deadline) throw new Error(`no mismatch counted:\n${text.split('\n').filter((l) => l.includes('validation')).join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(cache.poolAt(cache.idOf(amm.address))).toEqual(amm.pool);
  });
});
