import { createSolanaRpc, devnet, generateKeyPairSigner, lamports as toLamports, type Signature } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/logger.js';
import { LAMPORTS_PER_SOL, STATUS_CACHE_SLOTS } from './known-accounts.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type Simulator } from './simulator.js';
import { TransactionHistory, type ConfirmedTransaction } from './transaction-history.js';

/**
 * getSignatureStatuses over the simulator's JSON-RPC with @solana/kit: without
 * searchTransactionHistory it answers from the status cache (the last 300 slots), with it also
 * from the ledger (the kept transaction history), as a node does.
 */

let sim: Simulator;
let rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '13', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '1' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'status-history-test', level: 'silent' }) });
  rpc = createSolanaRpc(devnet((await sim.start()).rpc));
  sim.chain.advanceSlot(2);
});

afterAll(async () => {
  await sim.close();
});

describe('getSignatureStatuses and the transaction history', () => {
  it('a status older than the status cache is null without searchTransactionHistory and found with it', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    const signature: Signature = await rpc.requestAirdrop(wallet, toLamports(LAMPORTS_PER_SOL)).send();
    sim.chain.advanceSlot();
    const landedSlot = sim.chain.slot('processed');
    const recent = await rpc.getSignatureStatuses([signature]).send();
    expect(recent.value[0]).toMatchObject({ slot: landedSlot, err: null });

    sim.chain.advanceSlot(STATUS_CACHE_SLOTS);
    const cacheOnly = await rpc.getSignatureStatuses([signature]).send();
    expect(cacheOnly.value).toEqual([null]);
    const explicitNo = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: false }).send();
    expect(explicitNo.value).toEqual([null]);

    const history = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send();
    expect(history.value[0]).toMatchObject({ slot: landedSlot, confirmations: null, err: null, confirmationStatus: 'finalized' });
    expect(sim.chain.signatureStatus(signature, { searchTransactionHistory: true })).toMatchObject({ slot: landedSlot });
    // The same record getTransaction serves.
    const tx = await rpc.getTransaction(signature, { commitment: 'finalized', encoding: 'json' }).send();
    expect(tx?.slot).toBe(landedSlot);
  });
});

function record(slot: bigint): ConfirmedTransaction {
  return { slot } as ConfirmedTransaction;
}

describe('TransactionHistory bounds', () => {
  it('drops a slot past its window, empty slots aging it too', () => {
    const h = new TransactionHistory(10, 100);
    h.addSlot(5n, new Map([['a', record(5n)]]));
    for (let slot = 6n; slot < 15n; slot++) h.addSlot(slot, new Map());
    expect(h.get('a')).toBeDefined();
    h.addSlot(15n, new Map());
    expect(h.get('a')).toBeUndefined();
  });

  it('keeps at most its maximum of transactions, the oldest slots dropped first', () => {
    const h = new TransactionHistory(1000, 3);
    h.addSlot(1n, new Map([['a', record(1n)], ['b', record(1n)]]));
    h.addSlot(2n, new Map([['c', record(2n)]]));
    expect(['a', 'b', 'c'].map((s) => h.get(s) !== undefined)).toEqual([true, true, true]);
    h.addSlot(3n, new Map([['d', record(3n)]]));
    expect(['a', 'b', 'c', 'd'].map((s) => h.get(s) !== undefined)).toEqual([false, false, true, true]);
  });
});
