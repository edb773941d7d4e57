import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDecoderRegistry } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { RpcPoolLoader } from '../pools/index.js';
import type { PoolLoader, PoolLoadResult } from '../pools/types.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { loadConfig } from '../config/loader.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import type { PoolStateUpdateEvent } from './pool-state-event.js';
import { Scanner, type PoolStateSink } from './scanner.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/scanner/parse-worker.js');

/** A loader that reports a fixed slot for its first `n` answers (an RPC node lagging the stream). */
class LaggingLoader implements PoolLoader {
  constructor(
    private readonly inner: PoolLoader,
    private lagging: number,
    private readonly slot: bigint,
  ) {}

  async load(addresses: readonly string[]): Promise<PoolLoadResult[]> {
    const results = await this.inner.load(addresses);
    if (this.lagging <= 0) return results;
    this.lagging--;
    return results.map((r) => (r.ok ? { ok: true, value: { ...r.value, slot: this.slot } } : r));
  }
}

describe.skipIf(!existsSync(workerFile))('Scanner', () => {
  let sim: Simulator;
  let endpoints: SimEndpoints;
  let rpc: RpcClient;

  beforeAll(async () => {
    // A manual chain with no generated flow: every transaction on it is one the test sent.
    const config = loadConfig(simSchema, {
      env: {},
      flags: { seed: '19', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '1' },
    }).values;
    sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'scanner-test', level: 'silent' }) });
    endpoints = await sim.start();
    sim.chain.advanceSlot(1);
    rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  });

  afterAll(async () => {
    await rpc.close();
    await sim.close();
  });

  /** A scanner of the simulator's block-entry stream over `pools`, one parse worker. */
  function scannerOf(pools: string[], loader: PoolLoader, sink: PoolStateSink, performance = { maxConcurrentProcessing: 1, batchSize: 10, queueSizeLimit: 100 }): Scanner {
    const at = endpoints.stream.lastIndexOf(':');
    return new Scanner({
      stream: { host: endpoints.stream.slice(0, at), port: Number(endpoints.stream.slice(at + 1)) },
      pools,
      loader,
      sink,
      performance,
      parse: { workers: 1, filename: workerFile },
      logger: createLogger({ name: 'scanner-test', level: 'silent' }),
    });
  }

  /** Resolves once `events` holds `n` events (10 s at most). */
  async function eventsUntil(events: readonly PoolStateUpdateEvent[], n: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (events.length < n) {
      if (Date.now() > deadline) throw new Error(`only ${events.length} events`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('re-reads a pool whose new state came back at a slot already published, once the stream is past it (settle)', async () => {
    const chain = sim.chain;
    const pool = chain.pools()[0]!.address;
    const info = chain.poolInfo(pool)!;
    const laggedSlot = chain.slot() + 1n;
    const real = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
    const events: PoolStateUpdateEvent[] = [];
    const scanner = scannerOf([pool], new LaggingLoader(real, 2, laggedSlot), { publish: (event) => void events.push(event) });
    scanner.start();
    try {
      const waitFor = (n: number): Promise<void> => eventsUntil(events, n);
      while (!scanner.connected) await new Promise((r) => setTimeout(r, 10));
      const swap = (i: number): string =>
        chain.sendTransaction(swapTransaction(chain, trader(chain, i), info, { aToB: i % 2 === 0, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      const first = swap(0);
      chain.advanceSlot(1);
      await waitFor(1);
      const second = swap(1);
      chain.advanceSlot(1);
      await waitFor(2);
      // Both reads said `laggedSlot`: the second state would be ignored downstream (slot rule)...
      expect(events.slice(0, 2).map((e) => [e.transaction.signature, e.state.slot])).toEqual([
        [first, laggedSlot.toString()],
        [second, laggedSlot.toString()],
      ]);
      // ...so once the stream is past the second's slot (its last tick has come) the pool is read
      // again and published under `second`.
      await waitFor(3);
      const settled = events[2]!;
      expect(settled.transaction.signature).toBe(second);
      expect(BigInt(settled.state.slot)).toBeGreaterThan(laggedSlot);
      expect(scanner.stats().settles).toBe(1);
      const view = chain.pool(pool)!;
      if ('reserveA' in view.pool) expect(settled.state.reserveA).toBe(view.pool.reserveA.toString());
    } finally {
      await scanner.close();
    }
  });

  it("re-reads a pool whose state came back at a slot before the transaction's own once that slot's last tick has come", async () => {
    const chain = sim.chain;
    const pool = chain.pools()[1]!.address;
    const info = chain.poolInfo(pool)!;
    // The first read answers at the slot before the swap's, as a node that has not replayed the
    // swap's slot yet does (it serves complete slots only).
    const before = chain.slot();
    const real = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
    const events: PoolStateUpdateEvent[] = [];
    const scanner = scannerOf([pool], new LaggingLoader(real, 1, before), { publish: (event) => void events.push(event) });
    scanner.start();
    try {
      const waitFor = (n: number): Promise<void> => eventsUntil(events, n);
      while (!scanner.connected) await new Promise((r) => setTimeout(r, 10));
      const swap = chain.sendTransaction(swapTransaction(chain, trader(chain, 0), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      chain.advanceSlot(1);
      const swapSlot = before + 1n;
      await waitFor(1);
      expect([events[0]!.transaction.signature, events[0]!.state.slot]).toEqual([swap, before.toString()]);
      // The swap's slot ended with its last tick (no later slot yet): the pool is read again, the
      // swap's writes published under it.
      await waitFor(2);
      expect(chain.slot()).toBe(swapSlot);
      const settled = events[1]!;
      expect(settled.transaction.signature).toBe(swap);
      expect(BigInt(settled.state.slot)).toBeGreaterThanOrEqual(swapSlot);
      expect(scanner.stats().settles).toBe(1);
      const view = chain.pool(pool)!;
      if ('reserveA' in view.pool) expect(settled.state.reserveA).toBe(view.pool.reserveA.toString());
    } finally {
      await scanner.close();
    }
  });

  it('hands every event of a batch to the sink before any publish has settled, and counts each failure', async () => {
    const chain = sim.chain;
    const pool = chain.pools()[2]!.address;
    const info = chain.poolInfo(pool)!;
    const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
    // A sink whose publishes settle only when the test says (a bus publish waits for its ack).
    const calls: { signature: string; settle: (err?: Error) => void }[] = [];
    let released = false;
    const sink = {
      publish: (event: PoolStateUpdateEvent): Promise<void> =>
        new Promise<void>((resolve, reject) => {
          calls.push({ signature: event.transaction.signature, settle: (err) => (err === undefined ? resolve() : reject(err)) });
          if (released) resolve();
        }),
    };
    const scanner = scannerOf([pool], loader, sink);
    scanner.start();
    const until = async (what: string, done: () => boolean): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    try {
      await until('the stream', () => scanner.connected);
      for (let i = 0; i < 3; i++) {
        chain.sendTransaction(swapTransaction(chain, trader(chain, i), info, { aToB: i % 2 === 0, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      }
      chain.advanceSlot(1);
      // The first match went alone (a lone transaction is not held back); the other two wait
      // behind its unsettled publish, then make one batch.
      await until('the first publish and two queued', () => calls.length === 1 && scanner.stats().queue.queued === 2);
      calls[0]!.settle();
      await until('both publishes of the second batch', () => calls.length === 3);
      expect(scanner.stats().queue).toMatchObject({ queued: 0, inFlight: 1 });
      calls[1]!.settle(new Error('no ack'));
      calls[2]!.settle();
      await until('the batch to end', () => scanner.stats().queue.inFlight === 0);
      expect(scanner.stats()).toMatchObject({ eventsPublished: 2, publishErrors: 1 });
      expect(new Set(calls.map((c) => c.signature)).size).toBe(3);
    } finally {
      // close() waits for the publishes in flight.
      released = true;
      for (const c of calls) c.settle();
      await scanner.close();
    }
  });

  it('refuses a bad monitored-pool list and keeps the one in effect', async () => {
    const pool = sim.chain.pools()[1]!.address;
    const scanner = scannerOf([pool], { load: () => Promise.resolve([]) }, { publish: () => undefined }, { maxConcurrentProcessing: 1, batchSize: 1, queueSizeLimit: 1 });
    try {
      expect(() => scanner.setPools([pool, pool])).toThrow(/listed twice/);
      expect(() => scanner.setPools(['nope'])).toThrow(/pools\[0\]/);
      expect(scanner.pools).toEqual([pool]);
      scanner.setPools([]);
      expect(scanner.pools).toEqual([]);
    } finally {
      await scanner.close();
    }
  });
});
