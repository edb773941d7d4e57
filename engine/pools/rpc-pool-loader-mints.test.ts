/**
 * The loader's mints and transfer fees against a real simulator over JSON-RPC (HTTP on port 0):
 * the two mints of every pool read in the same getMultipleAccounts calls as the pools, decoded
 * from the bytes the node serves, the Token-2022 pools given their transfer fees at the epoch
 * getEpochInfo reports, and quotes with them equal to the chain's own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { SwapMode, TOKEN_2022_PROGRAM_ID, decodeMint, quoteSwap } from '../dex/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { AccountFetcher } from '../rpc/account-fetcher.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import { EpochClock } from './epoch-clock.js';
import { RpcPoolLoader } from './rpc-pool-loader.js';
import type { LoadedPool, PoolLoadResult } from './types.js';

const SLOTS_PER_EPOCH = 4;
let sim: Simulator;
let rpcUrl: string;
let client: RpcClient;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '5', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '1', 'tx-rate': '0', 'slots-per-epoch': String(SLOTS_PER_EPOCH) },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'pools-mints-test', level: 'silent' }) });
  rpcUrl = (await sim.start()).rpc;
  sim.chain.advanceSlot(2);
  client = new RpcClient({ endpoints: [rpcUrl] });
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

beforeEach(() => {
  sim.faults.clear();
});

function loaded(result: PoolLoadResult | undefined): LoadedPool {
  expect(result?.ok, result !== undefined && !result.ok ? result.error.message : 'no result').toBe(true);
  return (result as { ok: true; value: LoadedPool }).value;
}

function setup(maxAgeMs = 0) {
  const fetcher = new AccountFetcher(client);
  const epochs = new EpochClock({ getEpochInfo: () => client.getEpochInfo(), maxAgeMs });
  const loader = new RpcPoolLoader({ fetcher, registry: createDecoderRegistry(), arraysEachSide: 12, readMints: true, epochs });
  return { fetcher, epochs, loader };
}

async function rpc(method: string, params: unknown[]): Promise<Record<string, unknown>> {
  const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as Record<string, unknown>;
}

describe('RpcPoolLoader with readMints against the simulator', () => {
  it('serves the Token-2022 mint and getEpochInfo in the real shapes', async () => {
    const toll = sim.chain.tokens().find((t) => t.programId === TOKEN_2022_PROGRAM_ID)!;
    const account = (await rpc('getAccountInfo', [toll.mint, { encoding: 'base64' }])) as { result: { value: { owner: string; data: [string, string]; space: number } } };
    expect(account.result.value.owner).toBe(TOKEN_2022_PROGRAM_ID);
    expect(account.result.value.data[1]).toBe('base64');
    expect(account.result.value.space).toBe(278);
    const mint = decodeMint(account.result.value.owner, Buffer.from(account.result.value.data[0], 'base64'));
    expect(mint.transferFeeConfig?.olderTransferFee.transferFeeBasisPoints).toBe(100);

    const info = (await rpc('getEpochInfo', [{ commitment: 'processed' }])) as { result: Record<string, unknown> };
    expect(Object.keys(info.result).sort()).toEqual(['absoluteSlot', 'blockHeight', 'epoch', 'slotIndex', 'slotsInEpoch', 'transactionCount']);
    const slot = sim.chain.slot();
    expect(info.result).toMatchObject({ absoluteSlot: Number(slot), epoch: Number(slot / 4n), slotIndex: Number(slot % 4n), slotsInEpoch: SLOTS_PER_EPOCH });
    expect(await client.getEpochInfo()).toEqual(sim.chain.epochInfo('processed'));
    const schedule = (await rpc('getEpochSchedule', [])) as { result: Record<string, unknown> };
    expect(schedule.result).toEqual({ firstNormalEpoch: 0, firstNormalSlot: 0, leaderScheduleSlotOffset: 4, slotsPerEpoch: 4, warmup: false });
  });

  it('reads both mints of every pool with the pools, and gives the Token-2022 pools their fees at the epoch', async () => {
    const { fetcher, loader } = setup(60_000);
    const views = sim.chain.pools();
    const results = await loader.load(views.map((v) => v.address));
    let feePools = 0;
    for (let i = 0; i < views.length; i++) {
      const view = views[i]!;
      const value = loaded(results[i]);
      for (const [k, mint] of [view.pool.tokenA, view.pool.tokenB].entries()) {
        const account = sim.chain.getAccount(mint)!;
        expect(value.mints![k]).toEqual(decodeMint(account.owner, account.data, mint));
      }
      expect(value.epoch).toBe(sim.chain.epochInfo().epoch);
      expect(value.transferFees === undefined).toBe(view.transferFees === undefined);
      if (value.transferFees === undefined) continue;
      feePools++;
      // The view's fees are at the next block's epoch; here both are the same epoch.
      expect(value.transferFees).toEqual({ ...view.transferFees!, epoch: value.epoch });
      for (const aToB of [true, false]) {
        for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
          for (const amount of [1_000n, 5_000_000n, 900_000_000_000n]) {
            const req = { aToB, mode, amount };
            expect(quoteSwap(value.pool, req, value.context, value.transferFees), `${view.dex} ${aToB} ${mode} ${amount}`).toEqual(quoteSwap(view.pool, req, view.ctx, view.transferFees));
          }
        }
      }
    }
    expect(feePools).toBe(2);
    // Once known, the mints ride in the same single getMultipleAccounts call as the pools.
    const calls = fetcher.stats.calls;
    expect((await loader.load(views.map((v) => v.address))).every((r) => r.ok)).toBe(true);
    expect(fetcher.stats.calls - calls).toBe(1);
    expect(loader.stats.mintDecodes).toBe(new Set(views.flatMap((v) => [v.pool.tokenA, v.pool.tokenB])).size);
  });

  it('follows the epoch: the newer fee from epoch 2 on', async () => {
    const { loader, epochs } = setup(0);
    const pool = sim.chain.pools().find((v) => v.transferFees !== undefined)!;
    const before = loaded((await loader.load([pool.address]))[0]);
    expect(before.transferFees!.epoch).toBeLessThan(2n);
    sim.chain.advanceSlot(Number(2n * 4n - sim.chain.slot()));
    const after = loaded((await loader.load([pool.address]))[0]);
    expect(after.transferFees!.epoch).toBe(2n);
    expect(epochs.stats.calls).toBe(2);
    const tollIsA = after.mints![0].programId === TOKEN_2022_PROGRAM_ID;
    const req = { aToB: tollIsA, mode: SwapMode.ExactIn, amount: 10_000_000_000n };
    const early = quoteSwap(before.pool, req, before.context, before.transferFees);
    const late = quoteSwap(after.pool, req, after.context, after.transferFees);
    expect(early.ok && early.transferFees!.input).toBe(100_000_000n);
    expect(late.ok && late.transferFees!.input).toBe(150_000_000n);
  });

  it('fails the fee-charging pools with \'rpc\' when the epoch cannot be read, and loads the others', async () => {
    const { loader, epochs } = setup(0);
    sim.faults.setRpcFault('getEpochInfo', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' });
    const views = sim.chain.pools();
    const results = await loader.load(views.map((v) => v.address));
    for (let i = 0; i < views.length; i++) {
      const r = results[i]!;
      if (views[i]!.transferFees === undefined) {
        expect(r.ok).toBe(true);
        continue;
      }
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.reason).toBe('rpc');
        expect(r.error.message).toContain('Node is behind');
      }
    }
    expect(epochs.stats.failures).toBe(1);
    sim.faults.clear();
    expect((await loader.load(views.map((v) => v.address))).every((r) => r.ok)).toBe(true);
  });

  it('keeps answering with the last epoch read while getEpochInfo fails, up to its stale limit', async () => {
    let now = 0;
    const epochs = new EpochClock({ getEpochInfo: () => client.getEpochInfo(), maxAgeMs: 10, staleLimitMs: 100, now: () => now });
    const first = await epochs.current();
    sim.faults.setRpcFault('getEpochInfo', { errorRate: 1 });
    now = 50;
    expect(await epochs.current()).toBe(first);
    expect(epochs.stats).toMatchObject({ calls: 2, failures: 1, staleAnswers: 1 });
    now = 200;
    await expect(epochs.current()).rejects.toThrow();
  });
});
