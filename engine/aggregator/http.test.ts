import { afterEach, describe, expect, it } from 'vitest';

import { exposedTypes } from '../obs/exposition.js';
import { hasPromtool, runPromtool } from '../obs/promtool.js';
import { AGGREGATOR_METRIC_NAMES } from './aggregator-metrics.js';
import { pairId } from './swap-route-event.js';
import { FakeUpstream, SOL, USDC, eventually, makeQuote, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';

const REQUEST = { inputMint: SOL, outputMint: USDC, amount: '1000000000', slippageBps: 0 };
const PAIR_ID = pairId(SOL, USDC, 1_000_000_000n);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(localOut: bigint, externalOut: bigint): Promise<{ t: TestAggregator; local: FakeUpstream; external: FakeUpstream }> {
  const local = new FakeUpstream();
  const external = new FakeUpstream();
  local.respond = (p) => makeQuote(p, localOut, { poolAgeSeconds: 7200 });
  external.respond = (p) => makeQuote(p, externalOut, { poolAgeSeconds: 7200 });
  await local.start();
  await external.start();
  cleanups.push(() => local.close(), () => external.close());
  const t = await startTestAggregator(local, external, { localTimeout: 1000, externalTimeout: 1000 });
  cleanups.push(() => t.close());
  return { t, local, external };
}

async function get(t: TestAggregator, path: string, method = 'GET'): Promise<{ status: number; type: string; text: string; json: () => any }> {
  const res = await fetch(`http://127.0.0.1:${t.httpPort}${path}`, { method });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
}

describe('aggregator HTTP', () => {
  it('GET /health: serving with both upstreams, every upstream counter, publisher stats and active streams', async () => {
    const { t } = await setup(100n, 101n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    const res = await eventually(async () => {
      const r = await get(t, '/health');
      expect(r.json().status).toBe('serving');
      return r;
    });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ activeStreams: 0, confidenceScoringEnabled: true, publisher: { enabled: true, published: 1 } });
    for (const side of ['local', 'external']) {
      expect(body.upstreams[side]).toMatchObject({ state: 'UPSTREAM_STATE_STREAMING', healthy: true, quotesReceived: '1', errors: '0', timeouts: '0', reconnects: '0', backoffMs: 0, lastError: '' });
      expect(Object.keys(body.upstreams[side]).sort()).toEqual(
        ['address', 'avgLatencyMs', 'backoffMs', 'connectedSinceUnixMs', 'errors', 'healthy', 'lastError', 'lastLatencyMs', 'lastQuoteAtUnixMs', 'quotesReceived', 'reconnects', 'source', 'state', 'timeoutMs', 'timeouts'].sort(),
      );
    }
    expect(body.upstreams.local.timeoutMs).toBe(1000);
    expect(Object.keys(body).sort()).toEqual(['activeStreams', 'checkedAtUnixMs', 'confidenceScoringEnabled', 'publisher', 'reasons', 'startedAtUnixMs', 'status', 'upstreams', 'version']);
  });

  it('GET /health: degraded (200) with one upstream down, not_serving (503) with none', async () => {
    const { t, local, external } = await setup(100n, 101n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    external.kill();
    const degraded = await eventually(async () => {
      const r = await get(t, '/health');
      expect(r.json().status).toBe('degraded');
      return r;
    });
    expect(degraded.status).toBe(200);
    expect(degraded.json().upstreams.external.healthy).toBe(false);
    local.kill();
    const down = await eventually(async () => {
      const r = await get(t, '/health');
      expect(r.json().status).toBe('not_serving');
      return r;
    });
    expect(down.status).toBe(503);
  });

  it('GET /ready: 200 while an upstream is connected and healthy, 503 naming both when none is', async () => {
    const { t, local, external } = await setup(100n, 101n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    const ready = await eventually(async () => {
      const r = await get(t, '/ready');
      expect(r.status).toBe(200);
      return r;
    });
    expect(ready.json()).toEqual({ status: 'ready' });
    local.kill();
    external.kill();
    const down = await eventually(async () => {
      const r = await get(t, '/ready');
      expect(r.status).toBe(503);
      return r;
    });
    expect(down.json().status).toBe('not_ready');
    expect(down.json().reason).toMatch(/local .*external/);
  });

  it('GET /stats: requests, average confidence, aggregations, duplicates, price difference, upstreams, publisher', async () => {
    const { t, local } = await setup(100_000n, 102_000n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    local.push(makeQuote({ inputMint: SOL, outputMint: USDC, amount: '1000000000' }, 100_000n, { poolAgeSeconds: 7200 }));
    await eventually(() => expect(t.aggregator.stats().duplicates.local).toBe(1));
    const res = await get(t, '/stats');
    expect(res.status).toBe(200);
    expect(res.type).toContain('application/json');
    const s = res.json();
    expect(s.requests).toEqual({ total: 1, full: 1, localOnly: 0, externalOnly: 0, failed: 0, streams: 0 });
    expect(s.aggregations).toEqual({ localOnly: 0, externalOnly: 0, both: 1 });
    expect(s.averageConfidence).toBeGreaterThan(0);
    expect(s.duplicates).toEqual({ local: 1, external: 0, total: 1 });
    expect(s.priceDifference).toMatchObject({ samples: 1, lastPct: 2, avgAbsPct: 2, maxAbsPct: 2 });
    expect(s.priceDifference.byPair[PAIR_ID]).toMatchObject({ samples: 1, lastPct: 2 });
    expect(s.upstreams.local).toMatchObject({ healthy: true, quotesReceived: 2, errors: 0, timeouts: 0, reconnects: 0, duplicates: 1 });
    expect(typeof s.upstreams.external.avgLatencyMs).toBe('number');
    expect(s.publisher).toEqual({ enabled: true, connected: true, published: 1, errors: 0, pending: 0, dropped: 0 });
    expect(s.activeStreams).toBe(0);
  });

  it('GET /metrics: every aggregator_* metric, values recorded, accepted by promtool', async () => {
    const { t } = await setup(100n, 101n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    const res = await get(t, '/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toContain('text/plain');
    const types = exposedTypes(res.text);
    for (const name of Object.values(AGGREGATOR_METRIC_NAMES)) {
      expect(types.has(name.replace(/_total$/, '')) || types.has(name), name).toBe(true);
    }
    expect(res.text).toContain('aggregator_requests_total{kind="full"} 1');
    expect(res.text).toContain('aggregator_aggregations_total{source_class="both"} 1');
    expect(res.text).toContain('aggregator_upstream_quotes_total{upstream="local"} 1');
    expect(res.text).toContain('aggregator_route_events_published_total 1');
    expect(res.text).toContain('aggregator_upstream_latency_seconds_count{upstream="external"} 1');
    expect(res.text).toContain('aggregator_confidence_count 1');
    if (hasPromtool()) {
      const r = runPromtool(['check', 'metrics'], res.text);
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it('answers 404 with a JSON error for other paths and 405 for other methods', async () => {
    const { t } = await setup(1n, 1n);
    const r = await get(t, '/nope');
    expect(r.status).toBe(404);
    expect(r.json()).toEqual({ error: { code: 'TP_ERR_NOT_FOUND', message: 'no such path: /nope' } });
    const post = await get(t, '/stats', 'POST');
    expect(post.status).toBe(405);
    expect(post.json().error.code).toBe('TP_ERR_METHOD_NOT_ALLOWED');
  });
});

describe('GetConfidenceBreakdown', () => {
  it('explains the held quotes of a pair by pair_id: both sides, every factor, thresholds', async () => {
    const { t } = await setup(100n, 101n);
    await unaryCall(t.client, 'GetAggregatedQuote', REQUEST);
    const r = await unaryCall<any>(t.client, 'GetConfidenceBreakdown', { pairId: PAIR_ID });
    expect(r).toMatchObject({
      pairId: PAIR_ID, bestSource: 'QUOTE_SOURCE_EXTERNAL', scoringEnabled: true, defaultProviderUptime: 0.95,
      thresholds: { execute: 0.8, verify: 0.6, cautious: 0.4 },
      local: { source: 'QUOTE_SOURCE_LOCAL', present: true }, external: { source: 'QUOTE_SOURCE_EXTERNAL', present: true },
    });
    expect(r.local.confidence.factors).toHaveLength(5);
    expect(r.local.confidence.factors[2]).toMatchObject({ kind: 'CONFIDENCE_FACTOR_KIND_ORACLE', inputKnown: false, score: 0.5 });
    expect(r.decision).toBe(r.external.confidence.decision);
  });

  it('fetches the quotes for a QuoteRequest it holds nothing for', async () => {
    const { t } = await setup(100n, 99n);
    const r = await unaryCall<any>(t.client, 'GetConfidenceBreakdown', { quote: REQUEST });
    expect(r).toMatchObject({ pairId: PAIR_ID, bestSource: 'QUOTE_SOURCE_LOCAL' });
  });

  it('NOT_FOUND for a pair_id it holds nothing for, INVALID_ARGUMENT for a malformed one', async () => {
    const { t } = await setup(100n, 99n);
    await expect(unaryCall(t.client, 'GetConfidenceBreakdown', { pairId: '0123456789abcdef' })).rejects.toMatchObject({ code: 5 });
    await expect(unaryCall(t.client, 'GetConfidenceBreakdown', { pairId: 'nope' })).rejects.toMatchObject({ code: 3 });
    await expect(unaryCall(t.client, 'GetConfidenceBreakdown', { quote: { ...REQUEST, amount: '0' } })).rejects.toMatchObject({ code: 3 });
  });
});
