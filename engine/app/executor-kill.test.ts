import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../chain/index.js';
import { loadConfig } from '../config/loader.js';
import { tradeIdOf } from '../executor/index.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import { type ExecutionResult } from '../messages/index.js';
import type { Trader } from '../sim/actors.js';
import type { Simulator } from '../sim/simulator.js';
import { openPlatformState, type PlatformState } from '../state/index.js';
import { executorSchema } from './executor-app.js';
import { TEST_PASSPHRASE, executionResultsByTrade, faucetFundedTrader, holdingsOf, importWorkers, orderOpportunityOn, publishOpportunity } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * Issue 26 item 9: `kill -9` of a real-mode executor (`tidepool executor`, a process) in the middle
 * of a trade, then a restart: nothing is sent twice and no record is lost. The chain's clock is
 * stopped before the opportunity is published, so the trade's transaction is sent (seen by a proxy
 * in front of the simulator's JSON-RPC) and cannot land; the executor is killed then, the clock
 * restarted (the transaction lands), and a new executor process takes the redelivered opportunity
 * (after the consumer's 30 s ack wait): it settles the trade from the chain by its recorded
 * signature, sends nothing, and records it once. The worker wallet is funded by the faucets.
 */

const bin = resolve(import.meta.dirname, '../../dist/engine/cli/main.js');

const fx = new PlatformFixture();
let sim: Simulator;
let blockEngineUrl: string;
let proxy: FlakyJsonRpcProxy;
let rpcUrl: string;
let bus: FixtureBus;
let state: PlatformState;
let trader: Trader;
let results: Map<string, ExecutionResult>;
const children: ChildProcess[] = [];

function executorFlags(): Record<string, string> {
  return {
    ...fx.serviceFlags(),
    'rpc-endpoints': rpcUrl,
    'executor-id': 'kill-test',
    'block-engine-url': blockEngineUrl,
    'slippage-bps': '100',
  };
}

/** A `tidepool executor` process; resolves once it has printed its endpoints (started). */
async function startExecutor(): Promise<ChildProcess> {
  const args = Object.entries(executorFlags()).flatMap(([k, v]) => [`--${k}`, v]);
  const child = spawn(process.execPath, [bin, 'executor', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', TIDEPOOL_WALLET_PASSPHRASE: TEST_PASSPHRASE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += String(c)));
  child.stdout!.resume();
  await eventually(() => (/\/stats\n/.test(stderr) ? true : child.exitCode !== null ? Promise.reject(new Error(`executor exited: ${stderr}`)) : undefined), 60_000, 'the executor started');
  return child;
}

beforeAll(async () => {
  // The default 25 ms slots: the 30 s ack wait is 1,200 slots, past the 300 slots of the status
  // cache; the restarted executor finds the landed transaction with searchTransactionHistory, from
  // the simulator's ledger (its transaction history), as from a node's.
  const started = await fx.runningSimulator();
  sim = started.sim;
  blockEngineUrl = started.endpoints.http;
  proxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.rpc), 'the JSON-RPC proxy');
  rpcUrl = await proxy.start();
  bus = await fx.bus('EXK');
  await fx.database();
  await fx.keySpace();
  // The wallet: fresh, funded only by the faucets.
  ({ trader } = await faucetFundedTrader(started.endpoints.rpc));
  state = fx.closing(await openPlatformState(loadConfig(executorSchema, { env: {}, flags: executorFlags() }).values), 'the test\'s platform state');
  await importWorkers(state.db, [trader]);
  results = executionResultsByTrade(fx, bus.prefix);
  fx.onClose('the executor processes', () => {
    for (const c of children) c.kill('SIGKILL');
  });
}, 90_000);

afterAll(() => fx.close());

describe('kill -9 of a real-mode executor mid-trade', () => {
  it.skipIf(!existsSync(bin))('after a restart, nothing is sent twice and the trade is recorded once, settled from the chain', async () => {
    const first = await startExecutor();
    const before = holdingsOf(sim.chain, trader);
    sim.chain.stop();
    const op = orderOpportunityOn(sim.chain, 50_000_000n);
    await publishOpportunity(bus, op);
    // Sent, recorded with its signature, and unable to land: kill it now.
    const row = await eventually(async () => {
      const [r] = await state.db.query<{ status: string; signature: string | null }>('SELECT status, signature FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
      return r !== undefined && proxy.received('sendTransaction') >= 1 && r.signature !== null ? r : undefined;
    }, 30_000, 'the trade sent');
    expect(['pending', 'submitted']).toContain(row.status);
    const exited = new Promise<NodeJS.Signals | null>((done) => first.once('exit', (_code, signal) => done(signal)));
    first.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const sends = proxy.received('sendTransaction');
    expect(sim.chain.signatureStatus(row.signature!)).toBeNull();
    sim.chain.start();

    await startExecutor();
    const result = await eventually(() => results.get(tradeIdOf(op.id)), 75_000, 'the redelivered trade settled');
    expect(result).toMatchObject({ status: 'confirmed', signature: row.signature });
    expect(proxy.received('sendTransaction')).toBe(sends);
    const rows = await state.db.query<{ status: string; signature: string; actual_profit: bigint | null }>('SELECT status, signature, actual_profit FROM trades');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'confirmed', signature: row.signature });
    const after = holdingsOf(sim.chain, trader);
    expect(after.tokens.get(WSOL_MINT)).toBe(before.tokens.get(WSOL_MINT)! - 50_000_000n);
    expect(rows[0]!.actual_profit).toBe(after.tokens.get(USDC_MINT)! - before.tokens.get(USDC_MINT)!);
  }, 150_000);
});
