import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../obs/logger.js';
import { SimHttpServer } from '../http/sim-http-server.js';
import { simSchema } from '../sim-config.js';
import { createSimulator, type Simulator } from '../simulator.js';
import { buildFixtureMarket, testKey, type FixtureMarket } from '../quote-api/testing/market-fixture.js';
import { mountPriceApi } from './price-api.js';

const logger = createLogger({ level: 'silent' });

async function get(base: string, search: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/price/v3${search}`);
  return { status: res.status, body: await res.json() };
}

describe('GET /price/v3 on a fixture market', () => {
  let market: FixtureMarket;
  let server: SimHttpServer;

  beforeEach(async () => {
    market = buildFixtureMarket();
    server = new SimHttpServer({ port: 0, logger });
    mountPriceApi(server, { market });
    await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it('answers each known mint with usdPrice, blockId (the slot), decimals and priceChange24h, keyed by mint', async () => {
    const [a, b] = market.tokens();
    const { status, body } = await get(server.url, `?ids=${a!.mint},${b!.mint}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      [a!.mint]: { usdPrice: a!.referencePriceUsd, blockId: Number(market.slot()), decimals: a!.decimals, priceChange24h: null },
      [b!.mint]: { usdPrice: b!.referencePriceUsd, blockId: Number(market.slot()), decimals: b!.decimals, priceChange24h: null },
    });
  });

  it('omits unknown mints and answers an empty object when none is known', async () => {
    const [a] = market.tokens();
    expect((await get(server.url, `?ids=${a!.mint},${testKey(901)}`)).body).toEqual({
      [a!.mint]: expect.objectContaining({ usdPrice: a!.referencePriceUsd }),
    });
    expect(await get(server.url, `?ids=${testKey(902)}`)).toEqual({ status: 200, body: {} });
  });

  it('counts repeated ids once against the limit of 50', async () => {
    const [a] = market.tokens();
    const ids = Array.from({ length: 80 }, () => a!.mint).join(',');
    expect((await get(server.url, `?ids=${ids}`)).status).toBe(200);
  });

  it('refuses more than 50 ids with 400 naming the parameter', async () => {
    const ids = Array.from({ length: 51 }, (_, i) => testKey(1000 + i)).join(',');
    const { status, body } = await get(server.url, `?ids=${ids}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('TP_ERR_BAD_PARAMETER');
    expect(body.error.message).toMatch(/^ids: at most 50/);
  });

  it('refuses a missing or empty ids with 400', async () => {
    for (const search of ['', '?ids=', '?ids=,,', '?other=1']) {
      const { status, body } = await get(server.url, search);
      expect(status).toBe(400);
      expect(body.error.message).toMatch(/^ids: missing/);
    }
  });
});

describe('GET /price/v3 on the simulator', () => {
  let sim: Simulator;
  let base: string;

  beforeAll(async () => {
    const config = loadConfig(simSchema, {
      env: {},
      flags: { seed: '9', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '3', 'pools-per-kind': '1' },
    }).values;
    sim = createSimulator(config, { manual: true, logger });
    base = (await sim.start()).http;
  });
  afterAll(async () => {
    await sim.close();
  });

  it("serves the reference oracle's current prices next to /quote, moving as the slots advance", async () => {
    const mints = sim.chain.tokens().map((t) => t.mint);
    const first = (await get(base, `?ids=${mints.join(',')}`)).body;
    for (const token of sim.chain.tokens()) {
      expect(first[token.mint]).toEqual({ usdPrice: token.referencePriceUsd, blockId: Number(sim.chain.slot()), decimals: token.decimals, priceChange24h: null });
    }
    sim.chain.advanceSlot(10);
    const later = (await get(base, `?ids=${mints.join(',')}`)).body;
    for (const token of sim.chain.tokens()) {
      expect(later[token.mint].usdPrice).toBe(sim.chain.token(token.mint)!.referencePriceUsd);
      expect(later[token.mint].blockId).toBe(Number(sim.chain.slot()));
    }
    expect(later[mints[0]!].blockId).toBeGreaterThan(first[mints[0]!].blockId);
    expect((await fetch(`${base}/quote`)).status).not.toBe(404);
  });
});
