import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually } from '../app/testing.js';
import { PoolCache } from '../cache/index.js';
import { createLogger } from '../obs/logger.js';
import { ConsoleHub, type ConsoleMessage } from './console-hub.js';
import { bucketDelta, bucketQuantile, histogramBuckets, IntervalQuantiles } from './latency-window.js';
import { OpportunityFeed, opportunityRow, type OpportunityRow } from './opportunity-feed.js';
import { paperPnl, type TradeRow } from './platform-feed.js';
import { cachePoolRows } from './pool-rows.js';
import { checkServices, probe } from './service-probes.js';

const EXPOSITION = `# HELP quote_service_quote_latency_seconds Quote latency
# TYPE quote_service_quote_latency_seconds histogram
quote_service_quote_latency_seconds_bucket{le="0.001",source="cache"} 50
quote_service_quote_latency_seconds_bucket{le="0.01",source="cache"} 90
quote_service_quote_latency_seconds_bucket{le="+Inf",source="cache"} 100
quote_service_quote_latency_seconds_bucket{le="0.001",source="rpc"} 0
quote_service_quote_latency_seconds_bucket{le="0.01",source="rpc"} 0
quote_service_quote_latency_seconds_bucket{le="+Inf",source="rpc"} 7
quote_service_quote_latency_seconds_sum{source="cache"} 0.3
`;

describe('latency quantiles from histogram scrapes', () => {
  it('reads the buckets of one series and interpolates quantiles as histogram_quantile does', () => {
    const cache = histogramBuckets(EXPOSITION, 'quote_service_quote_latency_seconds', { source: 'cache' })!;
    expect([...cache]).toEqual([[0.001, 50], [0.01, 90], [Infinity, 100]]);
    expect(bucketQuantile(0.5, cache)).toBe(0.001);
    expect(bucketQuantile(0.25, cache)).toBeCloseTo(0.0005, 10);
    expect(bucketQuantile(0.7, cache)).toBeCloseTo(0.001 + 0.009 * (20 / 40), 10);
    // In +Inf: the highest finite bound.
    expect(bucketQuantile(0.99, cache)).toBe(0.01);
    expect(histogramBuckets(EXPOSITION, 'no_such_histogram')).toBeUndefined();
    expect(bucketQuantile(0.5, new Map([[1, 0], [Infinity, 0]]))).toBeNull();
  });

  it('gives each interval its own quantiles, and nulls before a second scrape or on a missing scrape', () => {
    const q = new IntervalQuantiles({ url: 'x', histogram: 'quote_service_quote_latency_seconds', match: { source: 'cache' }, toMs: 1000 });
    expect(q.next(EXPOSITION)).toEqual([null, null]);
    // 100 more quotes, all between 1 and 10 ms.
    const later = EXPOSITION.replace('le="0.001",source="cache"} 50', 'le="0.001",source="cache"} 50').replace('le="0.01",source="cache"} 90', 'le="0.01",source="cache"} 190').replace('le="+Inf",source="cache"} 100', 'le="+Inf",source="cache"} 200');
    const [p50, p99] = q.next(later);
    expect(p50).toBeCloseTo(1 + 9 * 0.5, 6);
    expect(p99).toBeCloseTo(1 + 9 * 0.99, 6);
    expect(q.next(undefined)).toEqual([null, null]);
    // A counter reset (a restarted service) counts the new values alone.
    expect([...bucketDelta(new Map([[1, 3]]), new Map([[1, 10]]))]).toEqual([[1, 3]]);
  });
});

describe('pool rows from the pool cache', () => {
  it('shows fresh and stale pools apart, and pools without state', async () => {
    let now = 1_000_000;
    const cache = new PoolCache({ stalenessThresholdMs: 1_000, now: () => now });
    const base = { dex: 'dexa_amm', tokenA: 'MintA', tokenB: 'MintB', reserveB: 2n, feeNumerator: 25n, feeDenominator: 10_000n };
    cache.upsert({ ...base, address: 'Old', reserveA: 18_446_744_073_709_551_615n, slot: 5n });
    now += 1_500;
    cache.upsert({ ...base, address: 'New', reserveA: 1n, slot: 9n });
    const rows = await cachePoolRows(cache, () => ['Old', 'New', 'Missing']).rows();
    expect(rows.map((r) => [r.address, r.fresh, r.slot, r.ageMs])).toEqual([
      ['Old', false, '5', 1_500],
      ['New', true, '9', 0],
      ['Missing', false, null, null],
    ]);
    expect(rows[0]!.reserveA).toBe('18446744073709551615');
  });
});

describe('the hub', () => {
  it('resends the pool table when a pool changes or turns stale, not as it ages', async () => {
    let now = 5_000_000;
    const cache = new PoolCache({ stalenessThresholdMs: 10_000, now: () => now });
    const base = { address: 'P', dex: 'dexa_amm', tokenA: 'MintA', tokenB: 'MintB', reserveA: 1n, reserveB: 2n, feeNumerator: 25n, feeDenominator: 10_000n };
    cache.upsert({ ...base, slot: 1n });
    const inner = cachePoolRows(cache, () => ['P']);
    let polls = 0;
    const counted = { rows: () => (polls++, inner.rows()), close: () => inner.close() };
    const hub = new ConsoleHub({ services: [], pools: counted, latency: {}, logger: createLogger({ name: 't', level: 'silent' }), poolsMs: 5, servicesMs: 60_000, metricsMs: 60_000, platformMs: 60_000 });
    const sent: ConsoleMessage[] = [];
    hub.subscribe((m) => m.type === 'pools' && sent.push(m));
    await hub.start();
    try {
      const first = sent.length;
      // Ageing alone: several polls, nothing sent.
      for (let i = 0; i < 3; i++) {
        const at = polls;
        now += 1_000;
        await eventually(() => (polls > at + 1 ? true : undefined), 5_000, 'a poll');
      }
      expect(sent.length).toBe(first);
      expect(hub.snapshot().pools[0]!.ageMs).toBe(3_000);
      // A new state: sent.
      cache.upsert({ ...base, slot: 2n });
      await eventually(() => (sent.length > first ? true : undefined), 5_000, 'pools after a new slot');
      // Turning stale: sent.
      const before = sent.length;
      now += 11_000;
      await eventually(() => (sent.length > before ? true : undefined), 5_000, 'pools after turning stale');
      const last = sent[sent.length - 1]!;
      expect(last.type === 'pools' && last.pools[0]!.fresh).toBe(false);
    } finally {
      await hub.close();
    }
  });
});

describe('the hub, on a pool cache', () => {
  it('reads the pools again right after a cache change, without waiting for its interval', async () => {
    const cache = new PoolCache();
    const base = { address: 'P', dex: 'dexa_amm', tokenA: 'MintA', tokenB: 'MintB', reserveA: 1n, reserveB: 2n, feeNumerator: 25n, feeDenominator: 10_000n };
    cache.upsert({ ...base, slot: 1n });
    const hub = new ConsoleHub({ services: [], pools: cachePoolRows(cache, () => ['P']), latency: {}, logger: createLogger({ name: 't', level: 'silent' }), poolsMs: 3_600_000, servicesMs: 3_600_000, metricsMs: 3_600_000, platformMs: 3_600_000 });
    const slots: (string | null)[] = [];
    hub.subscribe((m) => m.type === 'pools' && slots.push(m.pools[0]!.slot));
    await hub.start();
    try {
      for (const slot of [2n, 3n, 4n]) {
        cache.upsert({ ...base, slot });
        await eventually(() => (slots.at(-1) === slot.toString() ? true : undefined), 5_000, `slot ${slot} pushed`);
      }
    } finally {
      await hub.close();
    }
  });
});

describe('service probes', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/ok') res.writeHead(200).end('{"status":"ok"}');
      else if (req.url === '/degraded') res.writeHead(200).end('{"status":"degraded"}');
      else if (req.url === '/hang') return; // never answers
      else res.writeHead(503).end('{"status":"unavailable"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('classifies up, degraded, down (5xx, refused, timeout)', async () => {
    expect(await probe(`${base}/ok`)).toMatchObject({ state: 'up', status: 200, detail: 'ok' });
    expect(await probe(`${base}/degraded`)).toMatchObject({ state: 'degraded', status: 200 });
    expect(await probe(`${base}/down`)).toMatchObject({ state: 'down', status: 503, detail: 'unavailable' });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await probe(`http://127.0.0.1:${closedPort}/health`)).toMatchObject({ state: 'down', status: 0, detail: 'ECONNREFUSED' });
    expect(await probe(`${base}/hang`, 200)).toMatchObject({ state: 'down', status: 0, detail: 'no answer within 200 ms' });
    const [s] = await checkServices([{ name: 'x', health: `${base}/ok`, ready: `${base}/down` }]);
    expect(s).toMatchObject({ name: 'x', health: { state: 'up' }, ready: { state: 'down', status: 503 } });
  });
});

describe('paper trading PnL', () => {
  it('accumulates actual profit (expected when unknown) in time order', () => {
    const t = (createdAt: number, expectedProfit: string, actualProfit: string | null): TradeRow => ({ id: String(createdAt), strategy: 'grid', status: 'paper', signature: null, expectedProfit, actualProfit, error: null, createdAt, confirmedAt: null, slot: null });
    expect(paperPnl([t(3, '1', '5'), t(1, '10', null), t(2, '0', '-4')])).toEqual([
      { t: 1, cumulative: 10 },
      { t: 2, cumulative: 6 },
      { t: 3, cumulative: 11 },
    ]);
  });
});

describe('opportunities from TRADE_OPPORTUNITIES', () => {
  const stream = `CONSOLE_TEST_${process.pid}_${Date.now()}`;
  let nc: NatsConnection;
  let feed: OpportunityFeed | undefined;
  const seen: OpportunityRow[] = [];
  const logger = createLogger({ name: 'console-test', level: 'silent' });

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  });
  afterAll(async () => {
    await feed?.close();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('waits for the stream, then shows the backlog and each new message', async () => {
    const subject = `test.${stream}.opportunities`;
    feed = new OpportunityFeed({ servers: ['nats://127.0.0.1:4222'], logger, stream, retryMs: 50, onOpportunity: (row) => seen.push(row) });
    await eventually(() => (feed!.status === 'waiting_for_stream' ? true : undefined), 10_000, 'feed waiting');
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
    const js = nc.jetstream();
    await js.publish(`${subject}.arbitrage`, JSON.stringify({ strategy: 'arbitrage', expectedProfit: '18446744073709551615' }));
    await eventually(() => (seen.length >= 1 ? true : undefined), 10_000, 'backlog message');
    await js.publish(`${subject}.grid`, 'not json');
    await eventually(() => (seen.length >= 2 ? true : undefined), 10_000, 'live message');
    expect(seen[0]).toMatchObject({ seq: 1, strategy: 'arbitrage', expectedProfit: '18446744073709551615' });
    expect(seen[1]).toMatchObject({ seq: 2, body: 'not json', expectedProfit: null });
    expect(feed.status).toBe('consuming');
  });

  it('reads the strategy from the subject when the body does not name it', () => {
    const row = opportunityRow(3, 'trade.opportunities.dca', 5, new TextEncoder().encode('{"profit":12}'));
    expect(row).toMatchObject({ strategy: 'dca', expectedProfit: '12', body: { profit: 12 } });
  });
});
