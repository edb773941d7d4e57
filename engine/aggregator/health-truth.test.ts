import { afterEach, describe, expect, it } from 'vitest';

import { FakeUpstream, SOL, USDC, eventually, makeErrorQuote, makeQuote, startTestAggregator, unaryCall, type TestAggregator } from './testing.js';

/**
 * Issue 11, item 6: an upstream that answers only errors is not healthy. Before, the local
 * upstream streaming nothing but error quotes kept the aggregator `serving`.
 */
const REQUEST = { inputMint: SOL, outputMint: USDC, amount: '1000000000', slippageBps: 0 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

describe('aggregator /health', () => {
  it('counts a local upstream answering only errors as unhealthy (not serving), with the reason', async () => {
    const local = new FakeUpstream();
    const external = new FakeUpstream();
    local.respond = (p) => makeErrorQuote(p, { code: 'TP_ERR_RPC_FALLBACK_FAILED', grpcStatus: 14, message: 'rpc down' });
    external.respond = (p) => makeQuote(p, 100n, { poolAgeSeconds: 7200 });
    await local.start();
    await external.start();
    cleanups.push(() => local.close(), () => external.close());
    const t: TestAggregator = await startTestAggregator(local, external, { localTimeout: 1000, externalTimeout: 1000, upstreamUpdateInterval: 20, 'health.minSamples': 3 });
    cleanups.push(() => t.close());
    // Four pairs: the local upstream answers each with an error quote.
    for (const amount of ['1000000000', '2000000000', '3000000000', '4000000000']) {
      await unaryCall(t.client, 'GetAggregatedQuote', { ...REQUEST, amount }).catch(() => undefined);
    }
    const body = await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${t.httpPort}/health`);
      const json = (await res.json()) as { status: string; reasons: { local?: string; external?: string }; upstreams: { local: { healthy: boolean; errors: string } } };
      if (json.reasons.local === undefined || Number(json.upstreams.local.errors) < 3) throw new Error(`local still judged healthy: ${JSON.stringify(json)}`);
      return json;
    });
    expect(body.status).not.toBe('serving');
    expect(body.upstreams.local.healthy).toBe(false);
    expect(body.reasons.local).toMatch(/^\d+ of \d+ local upstream quotes failed in the last \d+ s/);
    expect(body.reasons.external).toBeUndefined();
  });
});
