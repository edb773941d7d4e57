import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { Dex, createDecoderRegistry, currentArrayKey } from '../dex/index.js';
import { isTpError, ErrorCode } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher } from '../rpc/account-fetcher.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { createRedisKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import { PlannerPools } from '../trading/index.js';
import { RoutePools } from './route-pools.js';
import { routeTemplateHash, routeTemplateOf, type RouteTemplateHop } from '../state/index.js';

/**
 * Route templates against the simulator (JSON-RPC over HTTP) and the shared Redis: each "executor"
 * is a fresh RPC client, fetcher, loader and RoutePools as `tidepool executor` builds them (mints
 * read, epochs from getEpochInfo), sharing only the key space, so a new one is an executor just
 * restarted. The fetcher's `calls` counts getMultipleAccounts requests.
 */

let sim: Simulator;
let rpcUrl: string;
let kv: TestKeySpace;
const clients: RpcClient[] = [];

interface Executor {
  fetcher: AccountFetcher;
  loader: RpcPoolLoader;
  pools: RoutePools;
}

function executor(): Executor {
  const rpc = new RpcClient({ endpoints: [rpcUrl] });
  clients.push(rpc);
  const fetcher = new AccountFetcher(rpc);
  const registry = createDecoderRegistry();
  const loader = new RpcPoolLoader({ fetcher, registry, readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
  const pools = new RoutePools(new PlannerPools(loader), registry, { loader, templates: kv.keys, logger: createLogger({ name: 'route-pools-test', level: 'silent' }) });
  return { fetcher, loader, pools };
}

/** A route through `pools`, A→B on the first, then back and forth. */
function routeThrough(...dexes: { dex: Dex; index: number }[]): RouteTemplateHop[] {
  return dexes.map(({ dex, index }, step) => {
    const view = sim.chain.pools().filter((v) => v.dex === dex)[index]!;
    const [a, b] = [view.pool.tokenA, view.pool.tokenB];
    return { pool: view.address, dex, inputMint: step % 2 === 0 ? a : b, outputMint: step % 2 === 0 ? b : a };
  });
}

/** Reads the route's pools with `e`: how many getMultipleAccounts calls it took. */
async function calls(e: Executor, route: RouteTemplateHop[]): Promise<number> {
  const before = e.fetcher.stats.calls;
  await e.pools.refresh(route);
  await e.pools.settled();
  return e.fetcher.stats.calls - before;
}

function templateNow(e: Executor, route: RouteTemplateHop[]): unknown {
  const t = routeTemplateOf([...new Set(route.map((h) => h.pool))], (a) => e.loader.plannedAccounts(a), 0);
  return { ...t, writtenAt: expect.any(Number) };
}

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '23', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '2', 'tx-rate': '0' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'route-pools-test', level: 'silent' }) });
  rpcUrl = (await sim.start()).rpc;
  sim.chain.advanceSlot(2);
  kv = await createRedisKeySpace();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await kv?.drop();
  await sim?.close();
});

describe('RoutePools with route templates (simulator, Redis)', () => {
  it('writes a route\'s template on its first read; after a restart the first read is one getMultipleAccounts', async () => {
    const route = routeThrough({ dex: Dex.Clmm, index: 0 }, { dex: Dex.Amm, index: 0 });
    const first = executor();
    // Nothing known: the pools, then their arrays, AmmConfig, vaults and mints.
    expect(await calls(first, route)).toBe(2);
    expect(first.pools.stats.templates).toEqual({ hit: 0, miss: 1, stale: 0 });
    const stored = await kv.keys.getRouteTemplate(routeTemplateHash(route));
    expect(stored).toEqual(templateNow(first, route));
    expect(stored!.pools.map((p) => p.address)).toEqual(route.map((h) => h.pool));
    expect(stored!.pools.every((p) => p.accounts.length > 2)).toBe(true);

    // The same executor's second trade on the route: one read, the template not even consulted.
    expect(await calls(first, route)).toBe(1);
    expect(first.pools.stats.templates).toEqual({ hit: 0, miss: 1, stale: 0 });

    // Restarted: the template from Redis makes its first read one call, with the same state.
    const restarted = executor();
    expect(await calls(restarted, route)).toBe(1);
    expect(restarted.pools.stats.templates).toEqual({ hit: 1, miss: 0, stale: 0 });
    expect(restarted.pools.stats.written).toBe(0);
    for (const hop of route) {
      const a = first.pools.pools.loaded(hop.pool)!;
      const b = restarted.pools.pools.loaded(hop.pool)!;
      expect(b.pool).toEqual(a.pool);
      expect(b.context).toEqual(a.context);
      expect(b.mints).toEqual(a.mints);
    }
    expect(restarted.pools.swapPools(route.map((h) => h.pool))).toEqual(first.pools.swapPools(route.map((h) => h.pool)));
    // A route of the same pools the other way round is another route.
    const reverse = route.map((h) => ({ ...h, inputMint: h.outputMint, outputMint: h.inputMint }));
    expect(routeTemplateHash(reverse)).not.toBe(routeTemplateHash(route));
  });

  it('a template stale after the price moved to other tick arrays: the two-step read, the template written again', async () => {
    const route = routeThrough({ dex: Dex.Whirlpool, index: 0 }, { dex: Dex.Amm, index: 0 });
    const hash = routeTemplateHash(route);
    const first = executor();
    expect(await calls(first, route)).toBe(2);
    const before = (await kv.keys.getRouteTemplate(hash))!;
    const keyBefore = currentArrayKey(first.pools.pools.loaded(route[0]!.pool)!.pool);

    // Move the whirlpool's price past its current tick array: the largest swap the pool takes.
    const info = sim.chain.poolInfo(route[0]!.pool)!;
    const who = trader(sim.chain, 2);
    for (const [aToB, mint] of [[false, info.tokenB.mint], [true, info.tokenA.mint]] as const) {
      const held = sim.chain.getTokenBalance(who.tokenAccounts.get(mint)!)!.amount;
      for (const share of [1n, 2n, 3n, 10n, 30n, 100n]) {
        try {
          sim.chain.sendTransaction(swapTransaction(sim.chain, who, info, { aToB, exactIn: true, amount: held / share, threshold: 0n }));
          break;
        } catch {
          continue;
        }
      }
      sim.chain.advanceSlot();
      if (currentArrayKey(sim.chain.pool(route[0]!.pool)!.pool) !== keyBefore) break;
    }
    expect(currentArrayKey(sim.chain.pool(route[0]!.pool)!.pool)).not.toBe(keyBefore);

    const restarted = executor();
    expect(await calls(restarted, route)).toBe(2);
    expect(restarted.pools.stats.templates).toEqual({ hit: 0, miss: 0, stale: 1 });
    expect(currentArrayKey(restarted.pools.pools.loaded(route[0]!.pool)!.pool)).not.toBe(keyBefore);
    const after = (await kv.keys.getRouteTemplate(hash))!;
    expect(after).toEqual(templateNow(restarted, route));
    expect(after.pools[0]!.accounts).not.toEqual(before.pools[0]!.accounts);
    expect(after.pools[1]).toEqual(before.pools[1]);

    // The first executor's own memory was stale too: its second round rewrites the template (same content).
    expect(await calls(first, route)).toBe(2);
    expect(first.pools.stats.templates).toEqual({ hit: 0, miss: 1, stale: 0 });
    expect(first.pools.stats.written).toBe(2);

    // The rewritten template serves the next restart in one call.
    const again = executor();
    expect(await calls(again, route)).toBe(1);
    expect(again.pools.stats.templates).toEqual({ hit: 1, miss: 0, stale: 0 });
  });

  it('a template naming another owner and other accounts is stale: read in two steps and written again', async () => {
    const route = routeThrough({ dex: Dex.Dlmm, index: 0 });
    const hash = routeTemplateHash(route);
    const wrong = { version: 1 as const, writtenAt: 1, pools: [{ address: route[0]!.pool, owner: 'Other1111111111111111111111111111111111111', dex: Dex.Dlmm, accounts: [route[0]!.inputMint] }] };
    await kv.keys.setRouteTemplate(hash, wrong);
    const e = executor();
    expect(await calls(e, route)).toBe(2);
    expect(e.pools.stats.templates).toEqual({ hit: 0, miss: 0, stale: 1 });
    expect(await kv.keys.getRouteTemplate(hash)).toEqual(templateNow(e, route));
    expect(await calls(executor(), route)).toBe(1);
  });

  it('a pool of the route closed: the read fails with TP_ERR_UNAVAILABLE and the template is deleted', async () => {
    const route = routeThrough({ dex: Dex.Dlmm, index: 1 }, { dex: Dex.Amm, index: 1 });
    const hash = routeTemplateHash(route);
    expect(await calls(executor(), route)).toBe(2);
    expect(await kv.keys.getRouteTemplate(hash)).not.toBeNull();

    expect(sim.chain.closePool(route[1]!.pool)).toBe(true);
    sim.chain.advanceSlot();
    const restarted = executor();
    const err: unknown = await restarted.pools.refresh(route).catch((e: unknown) => e);
    expect(isTpError(err, ErrorCode.Unavailable)).toBe(true);
    expect((err as Error).message).toContain(route[1]!.pool);
    await restarted.pools.settled();
    expect(restarted.pools.stats.templates).toEqual({ hit: 0, miss: 0, stale: 1 });
    expect(restarted.pools.stats.deleted).toBe(1);
    expect(await kv.keys.getRouteTemplate(hash)).toBeNull();
  });
});
