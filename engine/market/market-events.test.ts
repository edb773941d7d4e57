import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensurePlatformStreams } from '../bus/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { createDecoderRegistry, Dex } from '../dex/index.js';
import { RpcPoolLoader, type LoadedPool } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { openPriceGap, type SimEndpoints, type Simulator } from '../sim/index.js';
import { KV_BACKENDS, type TestKeySpace } from '../state/kv/testing.js';
import { decodeMarketEvent, decodePriceUpdate, type MarketEvent } from '../messages/market-event.js';
import { MarketDataSink } from './market-data-sink.js';
import { MarketEventDeriver } from './market-event-deriver.js';
import { MarketPublisher } from './market-publisher.js';
import type { PoolObservation } from './pool-observation.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

function obs(slot: bigint, reserveA: bigint, reserveB: bigint, extra: Partial<PoolObservation> = {}): PoolObservation {
  return { address: POOL, dex: Dex.Amm, tokenA: SOL, tokenB: USDC, slot, reserveA, reserveB, price: Number(reserveB) / Number(reserveA), fee: 0.0025, seenAt: 1_700_000_000_000 + Number(slot), ...extra };
}

describe('MarketEventDeriver thresholds', () => {
  const types = (d: { events: MarketEvent[] }): string[] => d.events.map((e) => e.type);

  it('gives only pool_update for a first state and ignores states that are not newer', () => {
    const d = new MarketEventDeriver({ largeSwapBps: 100, liquidityChangeBps: 50 });
    expect(types(d.observe(obs(10n, 1_000_000n, 150_000_000n), 'sig1'))).toEqual(['pool_update']);
    expect(types(d.observe(obs(10n, 2_000_000n, 150_000_000n), 'sig2'))).toEqual([]);
    expect(types(d.observe(obs(9n, 2_000_000n, 150_000_000n), 'sig2'))).toEqual([]);
  });

  it('calls a swap large at largeSwapBps of the input reserve, not below', () => {
    const d = new MarketEventDeriver({ largeSwapBps: 100, liquidityChangeBps: 50 });
    d.observe(obs(10n, 1_000_000n, 150_000_000n), 'a');
    expect(types(d.observe(obs(11n, 1_009_999n, 148_600_000n), 'b'))).toEqual(['pool_update']); // 99.99 bps in
    const big = d.observe(obs(12n, 1_020_099n, 147_100_000n), 'c'); // 100 bps of 1,009,999 in
    expect(types(big)).toEqual(['pool_update', 'large_swap']);
    const data = big.events[1]!.data;
    expect(data).toMatchObject({ signature: 'c', inputMint: SOL, outputMint: USDC, amountIn: '10100', amountOut: '1500000', shareBps: 100 });
    expect(big.volumes.map((v) => v.token)).toEqual([SOL, USDC]);
    expect(big.volumes[0]!.volume).toBe(9_999n + 10_100n);
  });

  it('calls same-direction reserve moves a liquidity change at liquidityChangeBps', () => {
    const d = new MarketEventDeriver({ largeSwapBps: 100, liquidityChangeBps: 50 });
    d.observe(obs(10n, 1_000_000n, 150_000_000n), 'a');
    expect(types(d.observe(obs(11n, 1_004_000n, 150_600_000n), 'b'))).toEqual(['pool_update']); // 40 bps
    const add = d.observe(obs(12n, 1_010_000n, 151_500_000n), 'c');
    expect(types(add)).toEqual(['pool_update', 'liquidity_change']);
    expect(add.events[1]!.data).toMatchObject({ kind: 'add', reserveABefore: '1004000', reserveAAfter: '1010000' });
    const remove = d.observe(obs(13n, 900_000n, 135_000_000n), 'd');
    expect(remove.events[1]!.data['kind']).toBe('remove');
    // A concentrated pool: active liquidity moved, price did not.
    const cl = new MarketEventDeriver({ largeSwapBps: 100, liquidityChangeBps: 50 });
    cl.observe(obs(10n, 5n, 5n, { dex: Dex.Whirlpool, liquidity: 1_000_000n, price: 2 }), 'x');
    expect(types(cl.observe(obs(11n, 5n, 5n, { dex: Dex.Whirlpool, liquidity: 1_100_000n, price: 2 }), 'y'))).toEqual(['pool_update', 'liquidity_change']);
  });

  it('prices a token over every pool of its pair, best bid and ask after fees', () => {
    const d = new MarketEventDeriver();
    d.observe(obs(10n, 1_000n, 150_000n), 'a');
    const other = d.observe({ ...obs(11n, 300_000n, 2_000n), address: 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ', tokenA: USDC, tokenB: SOL, price: 2_000 / 300_000, fee: 0.003 }, 'b');
    const sol = other.prices.find((p) => p.token === SOL)!;
    expect(sol.quoteToken).toBe(USDC);
    expect(sol.sources.map((s) => s.price).sort()).toEqual([150, 150].map((v, i) => (i === 0 ? 150 : 300_000 / 2_000)));
    expect(sol.bestBid).toBeCloseTo(150 * 0.9975, 9);
    expect(sol.bestAsk).toBeCloseTo(150 * 0.9975 + 150 * 0.0025 * 2, 9);
    expect(decodePriceUpdate(JSON.stringify(sol))).toEqual(sol);
  });
});

describe.each(KV_BACKENDS)('market data from the simulator on the real JetStream ($name key-value store)', ({ create }) => {
  let sim: Simulator;
  let endpoints: SimEndpoints;
  let nc: NatsConnection;
  let kv: TestKeySpace;
  let rpc: RpcClient;
  const prefix = `${uniqueName('MD')}_`;

  beforeAll(async () => {
    sim = manualSimulator(31);
    endpoints = await sim.start();
    nc = await connectLocal();
    await ensurePlatformStreams(await nc.jetstreamManager(), { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    kv = await create();
    rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  });
  afterAll(async () => {
    await rpc?.close();
    await kv?.drop();
    await deleteStreams(nc, ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS'].map((n) => `${prefix}${n}`));
    await nc?.close();
    await sim?.close();
  });

  async function load(address: string): Promise<LoadedPool> {
    const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
    const [r] = await loader.load([address]);
    if (!r!.ok) throw new Error(r!.error.message);
    return r!.value;
  }

  it('publishes pool_update, large_swap and PriceUpdates, drops duplicates, and keeps price: and volume: keys', async () => {
    const publisher = new MarketPublisher({ js: () => nc.jetstream(), keys: kv.keys, bufferSize: 1_000, dedupWindowMs: 60_000, prefix });
    const sink = new MarketDataSink(publisher, { largeSwapBps: 20, liquidityChangeBps: 50 });
    const pools = sim.chain.pools().filter((p) => p.transferFees === undefined && p.dex === Dex.Whirlpool);
    const target = pools.find((p) => pools.some((o) => o !== p && o.pool.tokenA === p.pool.tokenA && o.pool.tokenB === p.pool.tokenB)) ?? pools[0]!;
    await sink.observe(await load(target.address), '');
    const gap = openPriceGap(sim.chain, { pool: target.address, gapBps: 100 });
    sim.chain.advanceSlot();
    const after = await load(target.address);
    await sink.observe(after, gap.signature);
    expect(publisher.stats.events).toBe(3); // pool_update, pool_update, large_swap
    // The same state again is not newer: nothing; the same events again are dropped by id.
    await sink.observe(after, gap.signature);
    expect(publisher.stats.events).toBe(3);
    const jsm = await nc.jetstreamManager();
    const stream = `${prefix}MARKET_EVENTS`;
    const info = await jsm.streams.info(stream, { subjects_filter: '>' });
    const subjects = Object.keys(info.state.subjects ?? {});
    expect(subjects).toContain(`${prefix}market.events.dexc_whirlpool.pool_update`);
    expect(subjects).toContain(`${prefix}market.events.dexc_whirlpool.large_swap`);
    expect(subjects).toContain(`${prefix}market.events.prices.${target.pool.tokenA}`);
    const last = await jsm.streams.getMessage(stream, { last_by_subj: `${prefix}market.events.dexc_whirlpool.large_swap` });
    const swap = decodeMarketEvent(last.data);
    expect(last.header.get('Nats-Msg-Id')).toBe(swap.id);
    expect(swap).toMatchObject({ type: 'large_swap', protocol: 'dexc_whirlpool', poolAddress: target.address, slot: after.slot.toString() });
    expect(swap.data).toMatchObject({ signature: gap.signature, inputMint: gap.inputMint, amountIn: expect.any(String) });
    // Server-side dedup: a second publisher (a replica) sending the same ids is stored once.
    const replica = new MarketPublisher({ js: () => nc.jetstream(), bufferSize: 10, dedupWindowMs: 60_000, prefix });
    const before = (await jsm.streams.info(stream)).state.messages;
    await replica.publish({ events: [swap], prices: [], volumes: [] }, target.address);
    expect(replica.stats.duplicates).toBe(1);
    expect((await jsm.streams.info(stream)).state.messages).toBe(before);
    // Keys.
    const price = await kv.keys.getPrice(target.pool.tokenA, 'dexc_whirlpool');
    expect(price?.price).toBeGreaterThan(0);
    expect(await kv.store.pttl(kv.keys.priceKey(target.pool.tokenA, 'dexc_whirlpool'))).toBeGreaterThan(4 * 60_000);
    const volume = await kv.keys.getVolume(gap.inputMint);
    expect(BigInt(volume!.volume)).toBeGreaterThan(0n);
  });

  it('drops and counts what does not fit in bufferSize or finds no bus', async () => {
    const none = new MarketPublisher({ js: () => undefined, bufferSize: 10, dedupWindowMs: 1_000, prefix });
    const d = new MarketEventDeriver();
    await none.publish(d.observe(obs(1n, 10n, 10n), 's'), POOL);
    expect(none.stats.dropped).toBeGreaterThan(0);
    const tiny = new MarketPublisher({ js: () => nc.jetstream(), bufferSize: 1, dedupWindowMs: 1_000, prefix });
    const d2 = new MarketEventDeriver({ largeSwapBps: 1, liquidityChangeBps: 1 });
    d2.observe(obs(1n, 1_000n, 1_000n), 'a');
    await tiny.publish(d2.observe(obs(2n, 2_000n, 500n), 'b'), POOL); // pool_update + large_swap + 2 prices at once
    expect(tiny.stats.events + tiny.stats.prices).toBe(1);
    expect(tiny.stats.dropped).toBe(3);
  });
});
