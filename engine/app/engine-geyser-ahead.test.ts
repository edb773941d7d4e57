import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Dex, SwapMode, currentArrayKey, lookaheadArrayKeys, poolAfterSwap, quoteSwap, swapArrayAddress, swapArrayKeys, ticksPerArray, type DecodedPool, type SwapContext } from '../dex/index.js';
import { DEFAULT_GEYSER_ARRAYS_AHEAD } from '../scanner/index.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineOnGeyser, type EngineUnderSim } from './testing.js';

/**
 * scanner.stateSource geyser, arrays ahead: the arrays around a concentrated or DLMM pool's price,
 * beyond the loader's read window, are followed on the real gRPC stream of the simulator's Geyser
 * server and held before a swap needs them. A swap that moves the price into another array then
 * makes the loader read a window with arrays it never read, and every one is answered from the
 * stream: the served state is the chain's, and the stream reader made no RPC read.
 */

const built = existsSync(PARSE_WORKER);

/** The amount in (doubling) whose swap moves `pool`'s current array by one or two arrays; undefined when none does. */
function crossingAmount(pool: DecodedPool, context: SwapContext | undefined, aToB: boolean): bigint | undefined {
  const from = currentArrayKey(pool)!;
  const span = pool.dex === Dex.Dlmm || pool.dex === Dex.Amm ? 1 : pool.tickSpacing * ticksPerArray(pool.dex);
  for (let amount = 1_000n; amount < 1n << 62n; amount *= 2n) {
    const after = poolAfterSwap(pool, context, aToB, amount);
    if (!after.ok) return undefined;
    const moved = Math.abs(currentArrayKey(after.pool)! - from) / span;
    if (moved >= 1 && moved <= DEFAULT_GEYSER_ARRAYS_AHEAD) return amount;
    if (moved > DEFAULT_GEYSER_ARRAYS_AHEAD) return undefined;
  }
  return undefined;
}

function quoteOut(pool: DecodedPool, context: SwapContext | undefined, aToB: boolean): string {
  const q = quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount: 1_000_000n }, context);
  return q.ok ? q.amountOut.toString() : q.reason;
}

describe.skipIf(!built)('the Geyser state source, arrays ahead of the price', () => {
  let e: EngineUnderSim;

  beforeAll(async () => {
    e = await startEngineOnGeyser();
  });

  afterAll(async () => {
    await e?.close();
  });

  // Raydium CLMM is left out: the simulator marks only the arrays around the price that the loader's
  // window of three marked arrays each side already reads, so no swap moves that window.
  for (const dex of [Dex.Whirlpool, Dex.Dlmm]) {
    it(`serves a ${dex} swap into another array with no RPC read of its arrays`, async () => {
      const chain = e.sim.chain;
      const geyser = e.engine.geyser!;
      chain.advanceSlot(1);
      let picked: { address: string; aToB: boolean; amount: bigint } | undefined;
      for (const view of chain.pools().filter((p) => p.dex === dex)) {
        for (const aToB of [true, false]) {
          const amount = crossingAmount(view.pool, view.ctx, aToB);
          if (amount !== undefined && picked === undefined) picked = { address: view.address, aToB, amount };
        }
      }
      expect(picked, `a ${dex} pool a swap moves into another array`).toBeDefined();
      const { address, aToB, amount } = picked!;
      const before = chain.pool(address)!;
      const owner = chain.getAccount(address)!.owner;
      // Every array ahead is held (read ahead, or written on the stream) and followed on the server.
      const ahead = lookaheadArrayKeys(before.pool, DEFAULT_GEYSER_ARRAYS_AHEAD).map((key) => swapArrayAddress(before.pool, owner, key));
      await eventually(() => (ahead.every((a) => geyser.stream.get(a) !== undefined) ? true : undefined), 10_000, 'the arrays ahead held');
      await eventually(() => (e.sim.servers.geyser.stats().filteredAccounts === geyser.stream.followedAccounts ? true : undefined), 10_000, 'the filters on the server');
      await eventually(() => (e.engine.cache.get(address)?.pool !== undefined ? true : undefined), 10_000, 'the pool in the cache');

      const misses = geyser.reader.misses;
      const info = chain.poolInfo(address)!;
      chain.sendTransaction(swapTransaction(chain, trader(chain), info, { aToB, exactIn: true, amount, threshold: 0n }));
      chain.advanceSlot(1);
      const after = chain.pool(address)!;
      expect(currentArrayKey(after.pool)).not.toBe(currentArrayKey(before.pool));
      // The window the loader reads now has arrays the one before did not.
      const window = (pool: DecodedPool): string[] => swapArrayKeys(pool).map((key) => swapArrayAddress(pool, owner, key));
      expect(window(after.pool).some((a) => !window(before.pool).includes(a))).toBe(true);
      const expected = [quoteOut(after.pool, after.ctx, aToB), quoteOut(after.pool, after.ctx, !aToB)];
      await eventually(() => {
        const entry = e.engine.cache.get(address);
        if (entry?.pool === undefined || currentArrayKey(entry.pool) !== currentArrayKey(after.pool)) return undefined;
        return quoteOut(entry.pool, entry.context, aToB) === expected[0] && quoteOut(entry.pool, entry.context, !aToB) === expected[1] ? true : undefined;
      }, 10_000, 'the served state on the swapped pool');
      expect(geyser.reader.misses).toBe(misses);
    });
  }
});
