import { EventEmitter } from 'node:events';

import { describe, expect, it } from 'vitest';

import { parseStreamRequest } from '../quote-grpc/quote-stream-request.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import { polledQuote, type PolledQuote } from './external-quote.js';
import { createExternalMetrics } from './external-metrics.js';
import { ExternalSubscription } from './external-subscription.js';
import { RequestPacer } from './request-pacer.js';
import { ProviderTracker } from './provider-tracker.js';
import { POOL_A, USDC, WSOL } from './testing/fake-provider.js';

class Sink extends EventEmitter {
  readonly written: UpstreamQuote[] = [];
  full = false;
  write(m: UpstreamQuote): boolean {
    this.written.push(m);
    return !this.full;
  }
}

const request = parseStreamRequest({ pairs: [{ inputMint: WSOL, outputMint: USDC, amount: '10' }, { inputMint: USDC, outputMint: WSOL, amount: '10' }], slippageBps: 50, updateIntervalMs: 60_000 });

function polled(i: number, out: bigint): PolledQuote {
  const p = request.pairs[i]!;
  return polledQuote(p, { inputMint: p.inputMint, outputMint: p.outputMint, inAmount: 10n, outAmount: out, otherAmountThreshold: 0n, priceImpact: 0, contextSlot: 1n, hops: [{ ammKey: POOL_A, label: 'x', inputMint: p.inputMint, outputMint: p.outputMint, inAmount: 10n, outAmount: out }] }, 'p', 1);
}

describe('ExternalSubscription', () => {
  it('keeps only the latest quote per pair while the sink is backpressured, and sends them on drain', () => {
    const metrics = createExternalMetrics({ uptime: () => undefined, breakerState: () => 0, trackedPairs: () => 0 });
    const sink = new Sink();
    const sub = new ExternalSubscription({ request, sink, latest: () => undefined, uptime: () => 0.5, metrics });
    sub.start();
    sink.full = true;
    sub.update(request.pairs[0]!.pairId, polled(0, 100n)); // written, then the sink is full
    sub.update(request.pairs[0]!.pairId, polled(0, 101n));
    sub.update(request.pairs[1]!.pairId, polled(1, 200n));
    sub.update(request.pairs[0]!.pairId, polled(0, 102n));
    sub.update('0000000000000000', polled(0, 999n)); // not this stream's pair
    expect(sink.written.map((m) => m.outputAmount)).toEqual(['100']);
    sink.full = false;
    sink.emit('drain');
    expect(sink.written.map((m) => m.outputAmount)).toEqual(['100', '200', '102']);
    expect(sink.written[2]).toMatchObject({ minOutputAmount: '101', slippageBps: 50, providerUptime: 0.5 });
    sub.close();
  });
});

describe('RequestPacer', () => {
  it('gives rps tokens a second, evenly, with no burst', () => {
    const pacer = new RequestPacer(4, { now: 0 });
    expect(pacer.tryTake(0)).toBe(true);
    expect(pacer.tryTake(0)).toBe(false);
    expect(pacer.msUntilToken(100)).toBe(150);
    expect(pacer.tryTake(250)).toBe(true);
    // Idle time does not build a burst.
    expect(pacer.tryTake(10_000)).toBe(true);
    expect(pacer.tryTake(10_000)).toBe(false);
  });
});

describe('ProviderTracker', () => {
  it('counts 429 and 4xx as up, 5xx, timeouts and connection errors as down, over a sliding window', () => {
    let now = 0;
    const t = new ProviderTracker(1000, () => now);
    expect(t.uptime()).toBeUndefined();
    t.record('ok', 10);
    t.record('rate_limited', 10);
    t.record('rejected', 10);
    t.record('server_error', 10);
    expect(t.uptime()).toBe(0.75);
    now = 500;
    t.record('timeout', 2000);
    t.record('connection_error', 1);
    expect(t.uptime()).toBe(0.5);
    now = 1200; // the first four left the window
    expect(t.uptime()).toBe(0);
    expect(t.snapshot()).toMatchObject({ polls: 6, lastLatencyMs: 10, errors: { rate_limited: 1, rejected: 1, server_error: 1, timeout: 1, connection_error: 1 } });
  });
});
