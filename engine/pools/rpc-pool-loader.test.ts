import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { loadConfig } from '../config/index.js';
import { Dex, SwapFailure, SwapMode, createDecoderRegistry, currentArrayKey, quoteSwap, type DecodedPool, type SwapContext, type SwapResult } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { Prng } from '../prng.js';
import { AccountFetcher, type AccountFetcherOptions, type AccountReader } from '../rpc/account-fetcher.js';
import type { AccountData } from '../rpc/index.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { WorkerAccountFetcher } from '../rpc/worker-account-fetcher.js';
import type { SimPoolView } from '../sim/market-view.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { RpcPoolLoader } from './rpc-pool-loader.js';
import type { LoadedPool, PoolLoadResult } from './types.js';

/**
 * The loader against a real simulator: its JSON-RPC over HTTP on port 0, the engine's RPC client
 * and fetcher in front. The chain is manual, so what the loader reads can be compared with the
 * chain's own view of its pools (every tick and bin array, decoded from the same accounts). Every
 * test runs twice: over AccountFetcher (RPC on this thread) and over WorkerAccountFetcher (RPC in
 * a worker thread, from dist/).
 */

const RPC_WORKER = resolve(import.meta.dirname, '../../dist/engine/rpc/rpc-worker.js');

/** The simulator of the fetcher kind under test: each kind gets a fresh chain (the tests swap). */
let sim: Simulator;
let rpcUrl: string;

async function startSim(): Promise<void> {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '11', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '2', 'tx-rate': '0' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'pools-test', level: 'silent' }) });
  rpcUrl = (await sim.start()).rpc;
  sim.chain.advanceSlot(2);
}

interface FetcherKind {
  name: string;
  /** A fresh fetcher on the simulator's RPC. */
  make: (options?: AccountFetcherOptions) => AccountReader;
  /** Set when the kind cannot run here (the worker module is not built). */
  skip: boolean;
}

const closing: WorkerAccountFetcher[] = [];

afterEach(async () => {
  await Promise.all(closing.splice(0).map((f) => f.close()));
});

const FETCHERS: FetcherKind[] = [
  { name: 'AccountFetcher', make: (options) => new AccountFetcher(new RpcClient({ endpoints: [rpcUrl] }), options), skip: false },
  {
    name: 'WorkerAccountFetcher',
    make: (options) => {
      const fetcher = new WorkerAccountFetcher({ endpoints: [rpcUrl] }, { ...options, filename: RPC_WORKER });
      closing.push(fetcher);
      return fetcher;
    },
    skip: !existsSync(RPC_WORKER),
  },
];

interface Setup {
  fetcher: AccountReader;
  loader: RpcPoolLoader;
}

function loaded(result: PoolLoadResult | undefined): LoadedPool {
  expect(result?.ok, result !== undefined && !result.ok ? result.error.message : 'no result').toBe(true);
  return (result as { ok: true; value: LoadedPool }).value;
}

function reservesOf(view: SimPoolView): [bigint, bigint] {
  const pool = view.pool;
  if (pool.dex === Dex.Amm) {
    // AMM v4: the vault balances less need_take_pnl, read here from the chain itself.
    const a = sim.chain.getTokenBalance(pool.vaultA!)!.amount - pool.needTakePnlA!;
    const b = sim.chain.getTokenBalance(pool.vaultB!)!.amount - pool.needTakePnlB!;
    expect([a, b]).toEqual([pool.reserveA, pool.reserveB]);
    return [a, b];
  }
  const [a, b] = pool.dex === Dex.Dlmm ? [pool.reserveX, pool.reserveY] : [pool.vaultA, pool.vaultB];
  return [sim.chain.getTokenBalance(a)!.amount, sim.chain.getTokenBalance(b)!.amount];
}

interface QuotePair {
  label: string;
  view: SwapResult;
  rpc: SwapResult;
}

/** Both directions, exact in and exact out, amounts from a millionth to half of the reserve. */
function quotePairs(view: SimPoolView, pool: DecodedPool, context: SwapContext | undefined): QuotePair[] {
  const [reserveA, reserveB] = reservesOf(view);
  const out: QuotePair[] = [];
  for (const aToB of [true, false]) {
    for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
      const reserve = (mode === SwapMode.ExactIn) === aToB ? reserveA : reserveB;
      for (const fraction of [1_000_000n, 10_000n, 1000n, 100n, 10n, 2n]) {
        const amount = reserve / fraction;
        if (amount === 0n) continue;
        const request = { aToB, mode, amount };
        out.push({ label: `${view.dex} ${view.address} ${aToB ? 'A→B' : 'B→A'} ${mode} ${amount}`, view: quoteSwap(view.pool, request, view.ctx), rpc: quoteSwap(pool, request, context) });
      }
    }
  }
  return out;
}

describe.each(FETCHERS)('RpcPoolLoader against the simulator, reading through $name', ({ make, skip }) => {
  /** A loader over a fresh fetcher; `clock` stamps the chain's next block time, as its view does. */
  function setup(arraysEachSide?: number, fetcherOptions: AccountFetcherOptions = {}): Setup {
    const fetcher = make(fetcherOptions);
    const clock = (): bigint => sim.chain.pools().find((v) => v.ctx.nowSeconds !== undefined)!.ctx.nowSeconds!;
    const loader = new RpcPoolLoader({ fetcher, registry: createDecoderRegistry(), clock, ...(arraysEachSide !== undefined ? { arraysEachSide } : {}) });
    return { fetcher, loader };
  }

  describe.skipIf(skip)('loads', () => {
    beforeAll(startSim);
    afterAll(async () => {
      await sim.close();
    });
    beforeEach(() => {
      sim.faults.clear();
    });

    it('loads every kind of pool with a context whose quotes equal the chain\'s own, to the unit', async () => {
      const views = sim.chain.pools();
      expect(new Set(views.map((v) => v.dex))).toEqual(new Set([Dex.Amm, Dex.Clmm, Dex.Dlmm, Dex.Whirlpool]));
      // Enough arrays each side to hold every array the simulator made: the same data as the view.
      const { loader } = setup(12);
      const results = await loader.load(views.map((v) => v.address));
      let quotes = 0;
      for (let i = 0; i < views.length; i++) {
        const view = views[i]!;
        const value = loaded(results[i]);
        expect(value.address).toBe(view.address);
        expect(value.dex).toBe(view.dex);
        expect(value.slot).toBe(sim.chain.slot());
        expect(value.pool).toEqual(view.pool);
        expect(value.reserves).toEqual(reservesOf(view));
        expect(Buffer.from(value.data)).toEqual(Buffer.from(sim.chain.getAccount(view.address)!.data));
        if (view.dex === Dex.Amm) expect(value.context).toBeUndefined();
        else {
          expect(value.context!.nowSeconds).toBe(view.ctx.nowSeconds);
          const keys = (ctx: SwapContext): string[] =>
            [...(ctx.tickArrays ?? []).map((a) => String(a.startTickIndex)), ...(ctx.binArrays ?? []).map((a) => String(a.index))].sort();
          expect(keys(value.context!)).toEqual(keys(view.ctx));
        }
        for (const pair of quotePairs(view, value.pool, value.context)) {
          expect(pair.rpc, pair.label).toEqual(pair.view);
          if (pair.view.ok) quotes++;
        }
      }
      expect(quotes).toBeGreaterThan(100);
    });

    it('with the default arrays, quotes what its data covers exactly and refuses past it for more data', async () => {
      const views = sim.chain.pools();
      const { loader } = setup();
      const results = await loader.load(views.map((v) => v.address));
      let equal = 0;
      let refused = 0;
      for (let i = 0; i < views.length; i++) {
        const value = loaded(results[i]);
        for (const pair of quotePairs(views[i]!, value.pool, value.context)) {
          if (!pair.rpc.ok && pair.rpc.reason === SwapFailure.InsufficientLiquidityData && pair.view.ok) refused++;
          else {
            expect(pair.rpc, pair.label).toEqual(pair.view);
            equal++;
          }
        }
      }
      expect(equal).toBeGreaterThan(refused);
    });

    it('after a swap, a reload reads the new state at a higher slot, and quotes as the chain does again', async () => {
      const { loader } = setup(12);
      const views = sim.chain.pools();
      const addresses = views.map((v) => v.address);
      const before = (await loader.load(addresses)).map(loaded);
      // One swap B→A in each pool: small enough to succeed, large enough to move the price.
      const who = trader(sim.chain, 0);
      for (const view of views) {
        const info = sim.chain.poolInfo(view.address)!;
        const reserveB = reservesOf(view)[1];
        const held = sim.chain.getTokenBalance(who.tokenAccounts.get(info.tokenB.mint)!)!.amount;
        const amount = [reserveB / 200n, held / 4n].reduce((x, y) => (x < y ? x : y));
        sim.chain.sendTransaction(swapTransaction(sim.chain, who, info, { aToB: false, exactIn: true, amount, threshold: 0n }));
      }
      sim.chain.advanceSlot();
      const after = (await loader.load(addresses)).map(loaded);
      for (let i = 0; i < views.length; i++) {
        const view = sim.chain.pool(addresses[i]!)!;
        expect(after[i]!.slot).toBeGreaterThan(before[i]!.slot);
        expect(after[i]!.pool).not.toEqual(before[i]!.pool);
        expect(after[i]!.pool).toEqual(view.pool);
        expect(after[i]!.reserves).toEqual(reservesOf(view));
        for (const pair of quotePairs(view, after[i]!.pool, after[i]!.context)) expect(pair.rpc, pair.label).toEqual(pair.view);
      }
    });

    it('reads an AMM v4 pool with its two vaults: reserves less need_take_pnl, the vaults\' slot, one round once known', async () => {
      const { fetcher, loader } = setup();
      const views = sim.chain.pools().filter((v) => v.dex === Dex.Amm);
      expect(views.length).toBeGreaterThan(1);
      const first = (await loader.load(views.map((v) => v.address))).map(loaded);
      expect(loader.stats.secondRounds).toBe(1);
      for (let i = 0; i < views.length; i++) {
        const pool = first[i]!.pool;
        if (pool.dex !== Dex.Amm) throw new Error('not an AMM');
        // The simulator's AmmInfo pools keep a non-zero need_take_pnl: reading the vaults alone would be wrong.
        expect(pool.needTakePnlA).toBeGreaterThan(0n);
        expect(pool.vaultAmounts).toEqual([sim.chain.getTokenBalance(pool.vaultA!)!.amount, sim.chain.getTokenBalance(pool.vaultB!)!.amount]);
        expect(first[i]!.reserves).toEqual([pool.vaultAmounts![0] - pool.needTakePnlA!, pool.vaultAmounts![1] - pool.needTakePnlB!]);
        expect(first[i]!.accounts).toBeUndefined();
      }
      // Known pools: pool and vaults in one round, one call.
      sim.chain.advanceSlot();
      const calls = fetcher.stats.calls;
      const again = (await loader.load(views.map((v) => v.address))).map(loaded);
      expect(loader.stats.secondRounds).toBe(1);
      expect(fetcher.stats.calls - calls).toBe(1);
      expect(again[0]!.slot).toBe(sim.chain.slot());
    });

    it('fails an AMM v4 pool whose vault is missing (decode) or whose vault read fails (rpc); its slot is the newest read', async () => {
      const view = sim.chain.pools().find((v) => v.dex === Dex.Amm)!;
      if (view.pool.dex !== Dex.Amm) throw new Error('not an AMM');
      const vaultA = view.pool.vaultA!;
      const base = make();
      // The vault is read one slot later than the pool: the state is as of that newer slot.
      let pending: Promise<void> | undefined;
      const late: AccountReader = {
        fetch: async (address, options) => {
          if (address === vaultA) {
            pending ??= Promise.resolve().then(() => void sim.chain.advanceSlot());
            await pending;
          }
          return base.fetch(address, options);
        },
        stats: base.stats,
        get queued() {
          return base.queued;
        },
        get outstanding() {
          return base.outstanding;
        },
      };
      const slotBefore = sim.chain.slot();
      const [ok] = await new RpcPoolLoader({ fetcher: late, registry: createDecoderRegistry() }).load([view.address]);
      expect(loaded(ok).slot).toBe(slotBefore + 1n);

      const missing: AccountReader = { ...late, fetch: (address, options) => (address === vaultA ? Promise.resolve(null) : base.fetch(address, options)) };
      const [gone] = await new RpcPoolLoader({ fetcher: missing, registry: createDecoderRegistry() }).load([view.address]);
      expect(gone).toMatchObject({ ok: false, error: { reason: 'decode' } });
      expect(gone!.ok ? '' : gone!.error.message).toContain(`vault ${vaultA} does not exist`);

      const failing: AccountReader = { ...late, fetch: (address, options) => (address === vaultA ? Promise.reject(new Error('node down')) : base.fetch(address, options)) };
      const [down] = await new RpcPoolLoader({ fetcher: failing, registry: createDecoderRegistry() }).load([view.address]);
      expect(down).toMatchObject({ ok: false, error: { reason: 'rpc' } });
    });

    it('reads the arrays around the new price, in a second round, after a swap moved it to other arrays', async () => {
      const { loader } = setup();
      const views = sim.chain.pools().filter((v) => v.dex !== Dex.Amm);
      const addresses = views.map((v) => v.address);
      const before = (await loader.load(addresses)).map(loaded);
      const rounds = loader.stats.secondRounds;
      const who = trader(sim.chain, 2);
      for (const view of views) {
        const info = sim.chain.poolInfo(view.address)!;
        const held = sim.chain.getTokenBalance(who.tokenAccounts.get(info.tokenB.mint)!)!.amount;
        // The largest of these the pool takes (the chain refuses a swap past its liquidity).
        for (const share of [3n, 10n, 30n, 100n]) {
          try {
            sim.chain.sendTransaction(swapTransaction(sim.chain, who, info, { aToB: false, exactIn: true, amount: held / share, threshold: 0n }));
            break;
          } catch {
            continue;
          }
        }
      }
      sim.chain.advanceSlot();
      const after = (await loader.load(addresses)).map(loaded);
      expect(loader.stats.secondRounds).toBe(rounds + 1);
      let moved = 0;
      for (let i = 0; i < views.length; i++) {
        const key = currentArrayKey(after[i]!.pool)!;
        if (key === currentArrayKey(before[i]!.pool)) continue;
        moved++;
        const ctx = after[i]!.context!;
        const keys = [...(ctx.tickArrays ?? []).map((a) => a.startTickIndex), ...(ctx.binArrays ?? []).map((a) => Number(a.index))];
        expect(keys).toContain(key);
        const view = sim.chain.pool(addresses[i]!)!;
        const small = quotePairs(view, after[i]!.pool, ctx).slice(0, 2);
        for (const pair of small) expect(pair.rpc, pair.label).toEqual(pair.view);
      }
      expect(moved).toBeGreaterThan(0);
    });

    it('reloads the same pools in one getMultipleAccounts call once it knows their context accounts', async () => {
      const { fetcher, loader } = setup();
      const addresses = sim.chain.pools().map((v) => v.address);
      await loader.load(addresses);
      expect(loader.stats.secondRounds).toBe(1);
      const calls = fetcher.stats.calls;
      const keys = fetcher.stats.keys;
      const results = await loader.load(addresses);
      expect(results.every((r) => r.ok)).toBe(true);
      expect(fetcher.stats.calls - calls).toBe(1);
      expect(fetcher.stats.keys - keys).toBeLessThanOrEqual(100);
      expect(loader.stats.secondRounds).toBe(1);
      // Unchanged arrays keep their decodes.
      expect(loader.stats.reusedDecodes).toBeGreaterThan(0);
    });

    it('does not digest again the bytes a reader hands out again as the same object', async () => {
      // A reader that holds what it read (as StreamedAccountReader holds an account stream's state):
      // unchanged bytes come back as the same object.
      const { fetcher } = setup();
      const held = new Map<string, AccountData | null>();
      const holding: AccountReader = {
        fetch: async (address, options) => {
          const read = await fetcher.fetch(address, options);
          const have = held.get(address);
          if (have !== undefined && have !== null && read !== null && Buffer.from(have.data).equals(Buffer.from(read.data))) return have;
          held.set(address, read);
          return read;
        },
        get stats() {
          return fetcher.stats;
        },
        get queued() {
          return fetcher.queued;
        },
        get outstanding() {
          return fetcher.outstanding;
        },
      };
      const loader = new RpcPoolLoader({ fetcher: holding, registry: createDecoderRegistry() });
      const addresses = sim.chain.pools().map((v) => v.address);
      const first = await loader.load(addresses);
      const digests = loader.stats.digests;
      expect(digests).toBeGreaterThan(0);
      const again = await loader.load(addresses);
      expect(loader.stats.digests).toBe(digests);
      expect(again.map((r) => r.ok && r.value.pool)).toEqual(first.map((r) => r.ok && r.value.pool));
    });

    it('a first load given the accounts another loader planned (prefetch) is one round, with the same state', async () => {
      const { loader: known } = setup();
      const addresses = sim.chain.pools().map((v) => v.address);
      const first = await known.loadWithRounds(addresses);
      expect(first.rounds).toBe(2);
      expect(addresses.every((a) => known.knows(a))).toBe(true);
      const prefetch = addresses.flatMap((a) => known.plannedAccounts(a)!.accounts);
      expect(prefetch.length).toBeGreaterThan(addresses.length);

      const { fetcher, loader } = setup();
      expect(loader.knows(addresses[0]!)).toBe(false);
      expect(loader.plannedAccounts(addresses[0]!)).toBeUndefined();
      const { results, rounds } = await loader.loadWithRounds(addresses, { prefetch });
      expect(rounds).toBe(1);
      expect(loader.stats.secondRounds).toBe(0);
      expect(fetcher.stats.calls).toBe(1);
      for (let i = 0; i < addresses.length; i++) {
        const a = loaded(results[i]);
        const b = loaded(first.results[i]);
        expect(a.pool).toEqual(b.pool);
        expect(a.context).toEqual(b.context);
        expect(loader.plannedAccounts(addresses[i]!)).toEqual(known.plannedAccounts(addresses[i]!));
      }

      // A prefetch that names other accounts: they are dropped and the planned ones read in round 2.
      const { loader: misled } = setup();
      const wrong = await misled.loadWithRounds(addresses, { prefetch: [base58.encode(new Prng(5).bytes(32))] });
      expect(wrong.rounds).toBe(2);
      expect(wrong.results.map((r) => loaded(r).context)).toEqual(first.results.map((r) => loaded(r).context));
    });

    it('answers each pool it cannot load with its reason, and loads the others of the call', async () => {
      const { loader } = setup();
      const pool = sim.chain.pools().find((v) => v.dex === Dex.Whirlpool)!;
      const unknown = base58.encode(new Prng(77).bytes(32));
      // A trader's token account: owned by the token program, which has no decoder.
      const tokenAccount = [...trader(sim.chain, 1).tokenAccounts.values()][0]!;
      // A tick array is the Whirlpool program's, but not a pool.
      const tickArray = sim.chain.poolInfo(pool.address)!.arrays[0]!.address;
      const results = await loader.load([unknown, pool.address, tokenAccount, tickArray, unknown]);
      expect(results.map((r) => (r.ok ? 'ok' : r.error.reason))).toEqual(['missing', 'ok', 'unknown_owner', 'decode', 'missing']);
      for (const [i, address] of [unknown, pool.address, tokenAccount, tickArray].entries()) {
        const r = results[i]!;
        expect(r.ok ? r.value.address : r.error.address).toBe(address);
      }
    });

    it('answers \'rpc\' for every pool when the node fails getMultipleAccounts, then loads again once it recovers', async () => {
      const { loader, fetcher } = setup();
      const addresses = sim.chain.pools().map((v) => v.address);
      sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' });
      const failed = await loader.load(addresses);
      expect(failed).toHaveLength(addresses.length);
      for (const r of failed) {
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.error.reason).toBe('rpc');
          expect(r.error.message).toContain('Node is behind');
        }
      }
      expect(fetcher.stats.failedCalls).toBeGreaterThan(0);
      sim.faults.clear();
      expect((await loader.load(addresses)).every((r) => r.ok)).toBe(true);
    });

    it('answers \'rpc\' for the pools whose context accounts could not be read in the second round', async () => {
      const fetcher = make();
      const views = sim.chain.pools();
      const pools = new Set(views.map((v) => v.address));
      // The node starts failing between the two rounds: at the first read of a context account.
      const reader: AccountReader = {
        fetch: (address, options) => {
          if (!pools.has(address)) sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
          return fetcher.fetch(address, options);
        },
        stats: fetcher.stats,
        get queued() {
          return fetcher.queued;
        },
        get outstanding() {
          return fetcher.outstanding;
        },
      };
      const loader = new RpcPoolLoader({ fetcher: reader, registry: createDecoderRegistry() });
      const results = await loader.load(views.map((v) => v.address));
      expect(fetcher.stats.calls).toBe(2);
      expect(fetcher.stats.failedCalls).toBe(1);
      // Every pool needs a second-round account: arrays, AmmConfig, or (AMM v4) its vaults.
      for (const r of results) expect(r.ok ? 'ok' : r.error.reason).toBe('rpc');
    });
  });
});
