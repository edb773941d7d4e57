import { describe, expect, it } from 'vitest';

import { createDecoderRegistry, Dex } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { AccountData, AccountFetcherStats, AccountReader } from '../rpc/index.js';
import { solUsdcPool, testChain } from '../sim/testing/chain-fixtures.js';
import { abortable } from '../rpc/index.js';
import { RpcPoolLoader } from './rpc-pool-loader.js';

/**
 * A reader over a simulator chain that holds every read until `release()`: the test decides when
 * the RPC "answers", and counts the reads asked for.
 */
class HeldReader implements AccountReader {
  readonly asked: string[] = [];
  readonly stats = {} as AccountFetcherStats;
  queued = 0;
  outstanding = 0;
  private readonly held: (() => void)[] = [];

  constructor(private readonly chain: ReturnType<typeof testChain>) {}

  fetch(address: string): Promise<AccountData | null> {
    this.asked.push(address);
    return new Promise((resolve) => {
      this.held.push(() => {
        const a = this.chain.getAccount(address);
        resolve(a === null ? null : { data: a.data, owner: a.owner, lamports: a.lamports, executable: a.executable, slot: this.chain.slot() });
      });
    });
  }

  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }
}

describe('RpcPoolLoader under an AbortSignal', () => {
  it('rejects with the signal\'s reason at the abort and reads nothing more once the held reads land', async () => {
    const chain = testChain();
    const pool = solUsdcPool(chain, Dex.Whirlpool);
    const reader = new HeldReader(chain);
    const loader = new RpcPoolLoader({ fetcher: reader, registry: createDecoderRegistry() });
    const deadline = new AbortController();
    const load = loader.load([pool.address], { signal: deadline.signal });
    expect(reader.asked).toEqual([pool.address]);

    const reason = new TpError(ErrorCode.Deadline, 'deadline passed', { context: { deadlineMs: 5 } });
    deadline.abort(reason);
    await expect(load).rejects.toBe(reason);

    // The pool account lands after the abort: without the signal the loader would now ask for its
    // tick arrays and vaults (a second round); aborted, it asks for nothing.
    reader.release();
    await new Promise((r) => setImmediate(r));
    expect(reader.asked).toEqual([pool.address]);
    expect(loader.stats.secondRounds).toBe(0);
  });

  it('without an abort, reads the second round and decodes the pool (the same reader)', async () => {
    const chain = testChain();
    const pool = solUsdcPool(chain, Dex.Whirlpool);
    const reader = new HeldReader(chain);
    const loader = new RpcPoolLoader({ fetcher: reader, registry: createDecoderRegistry() });
    const load = loader.load([pool.address], { signal: new AbortController().signal });
    reader.release();
    while (reader.asked.length === 1) await new Promise((r) => setImmediate(r));
    expect(reader.asked.length).toBeGreaterThan(1);
    reader.release();
    const [result] = await load;
    expect(result?.ok).toBe(true);
    expect(loader.stats.secondRounds).toBe(1);
  });

  it('refuses a load whose signal is already aborted, asking for nothing', async () => {
    const chain = testChain();
    const reader = new HeldReader(chain);
    const loader = new RpcPoolLoader({ fetcher: reader, registry: createDecoderRegistry() });
    const reason = new Error('gone');
    await expect(loader.load([solUsdcPool(chain, Dex.Amm).address], { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(reader.asked).toEqual([]);
  });
});

describe('abortable', () => {
  it('settles as the promise does without an abort, and with the reason at an abort', async () => {
    expect(await abortable(Promise.resolve(3), new AbortController().signal)).toBe(3);
    const controller = new AbortController();
    const never = new Promise<number>(() => {});
    const waiting = abortable(never, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});
