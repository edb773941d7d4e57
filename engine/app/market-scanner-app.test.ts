import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOCAL_NATS_URL, TEST_STREAM_MAX_BYTES_SCALE } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { ErrorCode, isTpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { TEST_REDIS_URL, createRedisKeySpace } from '../state/kv/testing.js';
import { decodeMarketEvent, type MarketEvent } from '../messages/index.js';
import { openPriceGap } from '../sim/index.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { createMarketScannerApp, marketScannerSchema, marketWsUrl, type MarketScannerConfig } from './market-scanner-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { PARSE_WORKER, RPC_WORKER, eventually } from './testing.js';

const logger = createLogger({ name: 'market-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let endpoints: SimEndpoints;
let nc: NatsConnection;

beforeAll(async () => {
  ({ sim, endpoints } = await fx.manualSimulator({ seed: 12 }));
  ({ nc } = await fx.bus('MS'));
});

afterAll(() => fx.close());

function settings(mode: string, prefix: string, extra: Record<string, string> = {}) {
  const stream = endpoints.stream;
  return loadConfig(marketScannerSchema, {
    env: {},
    flags: {
      mode,
      'blockstream-host': stream.slice(0, stream.lastIndexOf(':')),
      'blockstream-port': stream.slice(stream.lastIndexOf(':') + 1),
      'rpc-endpoints': endpoints.rpc,
      'health-port': '0',
      'metrics-port': '0',
      'parse-workers': '1',
      'subject-prefix': prefix,
      'bus-servers': LOCAL_NATS_URL,
      'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE),
      'large-swap-bps': '10',
      'poll-interval': '50',
      'dedup-window-ms': '30000',
      ...extra,
    },
  });
}

async function marketEvents(prefix: string, type: string): Promise<MarketEvent[] | undefined> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(`${prefix}MARKET_EVENTS`, { subjects_filter: `${prefix}market.events.*.${type}` }).catch(() => undefined);
  if (info === undefined || info.state.messages === 0) return undefined;
  const out: MarketEvent[] = [];
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const m = await jsm.streams.getMessage(`${prefix}MARKET_EVENTS`, { last_by_subj: subject });
    out.push(decodeMarketEvent(m.data));
  }
  return out.length > 0 ? out : undefined;
}

async function largeSwapCount(prefix: string): Promise<number> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(`${prefix}MARKET_EVENTS`, { subjects_filter: `${prefix}market.events.*.large_swap` }).catch(() => undefined);
  return Object.values(info?.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

describe('tidepool market-scanner', () => {
  it.each(['blockstream', 'rpc-polling'])('in %s mode creates the platform streams and publishes a large swap on a watched pool', async (mode) => {
    const { prefix, dropStreams } = fx.busPrefix('MS');
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm' && p.transferFees === undefined)!;
    const app = await createMarketScannerApp(settings(mode, prefix, { accounts: pool.address }), { logger, accounts: [pool.address], parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
    try {
      await app.start();
      const jsm = await nc.jetstreamManager();
      // Spec 03's stream, with the duplicate window of dedupWindowMs (30 s here, the default is 2 min).
      const info = await eventually(async () => {
        const i = await jsm.streams.info(`${prefix}MARKET_EVENTS`).catch(() => undefined);
        return i?.config.duplicate_window === 30_000 * 1_000_000 ? i : undefined;
      }, 10_000, 'the market events stream with its duplicate window');
      expect(info.config.subjects).toEqual([`${prefix}market.events.>`]);
      expect(info.config.max_age).toBe(7 * 86_400 * 1e9);
      const opportunities = await eventually(() => jsm.streams.info(`${prefix}TRADE_OPPORTUNITIES`).catch(() => undefined), 10_000, 'the opportunities stream');
      expect(opportunities.config.max_age).toBe(86_400 * 1e9);
      // blockstream mode sees the pool only once a transaction touches it; polling reads it at once.
      if (mode === 'rpc-polling') {
        const [first] = await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
        // market.eventState is on by default: the first state of a pool is carried in full.
        expect(first!.data['state']).toMatchObject({ format: 1, full: true, accounts: expect.arrayContaining([expect.objectContaining({ address: pool.address })]) });
      }
      else {
        openPriceGap(sim.chain, { pool: pool.address, gapBps: 5 });
        sim.chain.advanceSlot();
        await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
      }
      const gap = openPriceGap(sim.chain, { pool: pool.address, gapBps: 50, direction: 'down' });
      sim.chain.advanceSlot();
      const swaps = await eventually(() => marketEvents(prefix, 'large_swap'), 10_000, 'a large_swap');
      expect(swaps[0]).toMatchObject({ type: 'large_swap', protocol: 'dexa_amm', poolAddress: pool.address });
      expect(swaps[0]!.data['inputMint']).toBe(gap.inputMint);
      if (mode === 'blockstream') expect(swaps[0]!.data['signature']).toBe(gap.signature);
    } finally {
      await app.close();
      // The four streams reserve 36 GiB of the server's storage between them: give it back at once.
      await dropStreams();
    }
  });

  it('in blockstream mode on scanner.stateSource geyser publishes a large swap from the account stream, under its signature', async () => {
    const { prefix, dropStreams } = fx.busPrefix('MSG');
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm' && p.transferFees === undefined)!;
    // The block-entry stream points at a closed port: only the account stream can bring the swap.
    const flags = { accounts: pool.address, 'state-source': 'geyser', 'geyser-url': `http://${endpoints.geyser}`, 'blockstream-port': '1' };
    const app = await createMarketScannerApp(settings('blockstream', prefix, flags), { logger, accounts: [pool.address], parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
    try {
      await app.start();
      const geyser = sim.servers.geyser;
      await eventually(() => (geyser.stats().subscribers > 0 ? true : undefined), 10_000, 'the Geyser subscription');
      const jsm = await nc.jetstreamManager();
      await eventually(() => jsm.streams.info(`${prefix}MARKET_EVENTS`).catch(() => undefined), 10_000, 'the market events stream');
      // The stream's first slot: the pool is read once (its vaults then join the filter). A swap
      // before that read has returned would reach the scanner through the read, with no signature.
      sim.chain.advanceSlot();
      await eventually(() => (geyser.stats().filteredAccounts > 1 ? true : undefined), 10_000, 'the pool\'s vaults followed');
      const first = openPriceGap(sim.chain, { pool: pool.address, gapBps: 5 });
      sim.chain.advanceSlot();
      await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
      const gap = openPriceGap(sim.chain, { pool: pool.address, gapBps: 50, direction: 'down' });
      sim.chain.advanceSlot();
      const swaps = await eventually(() => marketEvents(prefix, 'large_swap'), 10_000, 'a large_swap');
      expect(swaps[0]).toMatchObject({ type: 'large_swap', protocol: 'dexa_amm', poolAddress: pool.address });
      // Both swaps take more than large-swap-bps of the reserve (the first one's 25 bps, seen once a
      // transaction's writes reach the scanner together); the subject keeps the newest.
      expect([first.signature, gap.signature]).toContain(swaps[0]!.data['signature']);
    } finally {
      await app.close();
      await dropStreams();
    }
  });

  it('refuses scanner.stateSource geyser outside blockstream mode', async () => {
    const flags = { 'state-source': 'geyser', 'geyser-url': `http://${endpoints.geyser}` };
    await expect(createMarketScannerApp(settings('rpc-polling', 'X_', flags), { logger, accounts: ['11111111111111111111111111111111'] })).rejects.toSatisfy((e: unknown) => isTpError(e, ErrorCode.ConfigInvalid));
    await expect(createMarketScannerApp(settings('websocket', 'X_', flags), { logger, accounts: ['11111111111111111111111111111111'] })).rejects.toSatisfy((e: unknown) => isTpError(e, ErrorCode.ConfigInvalid));
  });

  it('leaves the pool state out of pool_update with --event-state false', async () => {
    const { prefix, dropStreams } = fx.busPrefix('MS');
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm' && p.transferFees === undefined)!;
    const app = await createMarketScannerApp(settings('rpc-polling', prefix, { accounts: pool.address, 'event-state': 'false' }), { logger, accounts: [pool.address], parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
    try {
      await app.start();
      const [first] = await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
      expect(first!.poolAddress).toBe(pool.address);
      expect(first!.data['state']).toBeUndefined();
    } finally {
      await app.close();
      await dropStreams();
    }
  });

  it('in websocket mode publishes from accountSubscribe notifications, and subscribes again after the PubSub connection drops', async () => {
    const { prefix, dropStreams } = fx.busPrefix('MS');
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm' && p.transferFees === undefined)!;
    const app = await createMarketScannerApp(settings('websocket', prefix, { accounts: pool.address, 'ws-url': endpoints.ws }), { logger, accounts: [pool.address], rpcWorkerFilename: RPC_WORKER });
    try {
      await app.start();
      const source = app.pubsub!;
      await eventually(() => (source.subscribed === 1 ? true : undefined), 10_000, 'the pool subscribed');
      // The catch-up load after subscribing publishes the current state.
      await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
      // A swap moves an AMM v4 pool's vaults, not its account: they are followed once subscribed.
      await eventually(() => (source.vaultsSubscribed === 2 ? true : undefined), 10_000, 'the vaults subscribed');
      const gap = openPriceGap(sim.chain, { pool: pool.address, gapBps: 50, direction: 'down' });
      sim.chain.advanceSlot();
      const swaps = await eventually(() => marketEvents(prefix, 'large_swap'), 10_000, 'a large_swap');
      expect(swaps[0]).toMatchObject({ type: 'large_swap', protocol: 'dexa_amm', poolAddress: pool.address });
      expect(swaps[0]!.data['inputMint']).toBe(gap.inputMint);
      expect(source.stats.notifications).toBeGreaterThan(0);
      expect(source.stats.malformed).toBe(0);

      // The server cuts the connection: the source connects again and subscribes again.
      const swapsBefore = await largeSwapCount(prefix);
      sim.servers.ws.dropAll();
      await eventually(() => (source.stats.connects >= 2 && source.subscribed === 1 && source.vaultsSubscribed === 2 ? true : undefined), 15_000, 'subscribed again, vaults too');
      const notificationsBefore = source.stats.notifications;
      openPriceGap(sim.chain, { pool: pool.address, gapBps: 50, direction: 'up' });
      sim.chain.advanceSlot();
      await eventually(async () => ((await largeSwapCount(prefix)) > swapsBefore ? true : undefined), 10_000, 'a large_swap after the drop');
      expect(source.stats.notifications).toBeGreaterThan(notificationsBefore);
    } finally {
      await app.close();
      await dropStreams();
    }
  });

  it.each(['rpc-polling', 'websocket'])('in %s mode answers /health, /ready and /metrics on health.port and writes its heartbeat, then stopped', async (mode) => {
    const { prefix, dropStreams } = fx.busPrefix('MS');
    const kv = await createRedisKeySpace();
    const { keys } = kv;
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm' && p.transferFees === undefined)!;
    const extra = { accounts: pool.address, 'redis-url': TEST_REDIS_URL, 'redis-key-prefix': keys.prefix, ...(mode === 'websocket' ? { 'ws-url': endpoints.ws } : {}) };
    const app = await createMarketScannerApp(settings(mode, prefix, extra), { logger, accounts: [pool.address], rpcWorkerFilename: RPC_WORKER });
    try {
      const { http } = await app.start();
      expect(http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${http}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', mode, accounts: 1 });
      await eventually(async () => ((await fetch(`${http}/ready`)).status === 200 ? true : undefined), 10_000, 'ready once the streams exist');
      expect(await (await fetch(`${http}/ready`)).json()).toMatchObject({ status: 'ready', bus: true, streams: true });
      await eventually(() => marketEvents(prefix, 'pool_update'), 10_000, 'a first pool_update');
      const metrics = await (await fetch(`${http}/metrics`)).text();
      expect(metrics).toMatch(/market_messages_published_total\{kind="event"\} [1-9]/);
      // The first beat may say degraded (the bus was still connecting); the one at connect says ok.
      await eventually(async () => ((await keys.getHealth('market-scanner'))?.status === 'ok' ? true : undefined), 5_000, 'an ok heartbeat');
    } finally {
      await app.close();
      expect(await keys.getHealth('market-scanner')).toMatchObject({ status: 'stopped' });
      await kv.drop();
      await dropStreams();
    }
  });

  it('derives the PubSub URL from the first RPC endpoint as Solana serves it, unless market.wsUrl is set', () => {
    const at = (flags: Record<string, string>) => marketWsUrl(loadConfig(marketScannerSchema, { env: {}, flags }).values as MarketScannerConfig);
    expect(at({ 'rpc-endpoints': 'http://127.0.0.1:8899' })).toBe('ws://127.0.0.1:8900/');
    expect(at({ 'rpc-endpoints': 'https://rpc.example.com:443/key,http://127.0.0.1:8899' })).toBe('wss://rpc.example.com/key');
    expect(at({ 'rpc-endpoints': 'http://127.0.0.1:8899', 'ws-url': 'ws://10.0.0.2:9000' })).toBe('ws://10.0.0.2:9000');
  });

  it('refuses a websocket URL that is not ws:// and accounts that are not addresses', async () => {
    await expect(createMarketScannerApp(settings('websocket', 'X_', { 'ws-url': 'http://127.0.0.1:1' }), { logger, accounts: ['11111111111111111111111111111111'] })).rejects.toSatisfy((e: unknown) => isTpError(e, ErrorCode.ConfigInvalid));
    await expect(createMarketScannerApp(settings('rpc-polling', 'X_'), { logger, accounts: ['not-an-address'] })).rejects.toSatisfy((e: unknown) => isTpError(e, ErrorCode.ConfigInvalid));
  });
});
