import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChainClient } from '../../rpc/index.js';
import { WSOL_MINT } from '../../sim/known-accounts.js';
import { builtCliPath, spawnSimulator, type SimProcess } from './sim-process.js';
import { SimRpcTrades } from './sim-rpc-trades.js';

/**
 * The submitters' simulator in its own process, driven only over its JSON-RPC and the seed's
 * genesis: the traders of the genesis hold what the chain says, an order quotes on the pool the
 * chain holds, a signed swap lands, and close() ends the process.
 */

let sim: SimProcess;
let trades: SimRpcTrades;
let chain: ChainClient;

describe.skipIf(!existsSync(builtCliPath()))('spawnSimulator', () => {
  beforeAll(async () => {
    sim = await spawnSimulator({ slotMs: 25 });
    trades = new SimRpcTrades(sim.endpoints.rpc, sim.genesis);
    chain = new ChainClient({ url: sim.endpoints.rpc });
  });

  afterAll(async () => {
    await chain?.close();
    await trades?.close();
    await sim?.close();
  });

  it('prints its endpoints and has the genesis of the seed: the traders are funded', async () => {
    expect(sim.endpoints.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.endpoints.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const trader = sim.genesis.actors.traders[3]!;
    expect(await chain.getBalance(trader.keypair.address)).toBeGreaterThan(0n);
  });

  it('plants an order on the chain state read over RPC, and a prebuilt swap lands', async () => {
    const op = await trades.orderOpportunity(1_000_000n);
    expect(op.inputMint).toBe(WSOL_MINT);
    expect(op.route[0]!.pool).toBe(trades.ammPool);
    expect(op.expectedOutput).toBeGreaterThan(0n);

    const [bytes] = await trades.swapTransactions(sim.genesis.actors.traders[4]!, [1_000_000n]);
    const signature = await chain.sendTransaction(bytes!, { skipPreflight: true });
    for (;;) {
      const [status] = await chain.getSignatureStatuses([signature]);
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') {
        expect(status.err ?? null).toBeNull();
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('close() ends the process', async () => {
    const pid = sim.pid;
    await sim.close();
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
