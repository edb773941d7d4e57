import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';

import type { NatsConnection, Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { associatedTokenAddress, keypairFromSeed, USDC_MINT, WSOL_MINT } from '../chain/index.js';
import { simCommand } from '../cli/commands/sim.js';
import { loadConfig } from '../config/loader.js';
import { tradeIdOf } from '../executor/index.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import { startSimulator } from '../executor/testing/submitter-sim.js';
import { decodeExecutionResult, executionResultFilter, encodeTradeOpportunity, tradeOpportunitySubject, type ExecutionResult } from '../messages/index.js';
import type { Trader } from '../sim/actors.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { openPlatformState, type PlatformState } from '../state/index.js';
import { executorSchema } from './executor-app.js';
import { TEST_PASSPHRASE, holdingsOf, importWorkers, orderOpportunityOn } from './testing/executor.js';
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
const prefix = `${uniqueName('EXK')}_`;
const keyPrefix = `${uniqueName('exk')}:`;
const STREAMS = ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`);

let sim: Simulator;
let endpoints: SimEndpoints;
let proxy: FlakyJsonRpcProxy;
let rpcUrl: string;
let nc: NatsConnection;
let database: TestDatabase;
let state: PlatformState;
let trader: Trader;
let sub: Subscription;
const children: ChildProcess[] = [];
const results = new Map<string, ExecutionResult>();

async function faucet(...args: string[]): Promise<void> {
  const stdout = new PassThrough();
  stdout.resume();
  const code = await simCommand.run(['faucet', '--rpc-url', endpoints.rpc, ...args], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} });
  expect(code).toBe(0);
}

function executorFlags(): Record<string, string> {
  return {
    'rpc-endpoints': rpcUrl,
    'database-url': database.url!,
    'redis-url': 'redis://127.0.0.1:6379',
    'redis-key-prefix': keyPrefix,
    port: '0',
    'subject-prefix': prefix,
    'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE),
    'executor-id': 'kill-test',
    'block-engine-url': endpoints.http,
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
  ({ sim, endpoints } = await startSimulator());
  proxy = new FlakyJsonRpcProxy(endpoints.rpc);
  rpcUrl = await proxy.start();
  nc = await connectLocal();
  database = await createServerDatabase();
  // The wallet: fresh, funded only by the faucets.
  const keypair = keypairFromSeed(randomBytes(32));
  await faucet('--wallet', keypair.address, '--sol', '--amount', '20000000000');
  await faucet('--wallet', keypair.address, '--mint', 'SOL', '--amount', '5000000000');
  await faucet('--wallet', keypair.address, '--mint', 'USDC', '--amount', '10000000');
  trader = { keypair, tokenAccounts: new Map([WSOL_MINT, USDC_MINT].map((m) => [m, associatedTokenAddress(keypair.address, m)])) };
  state = await openPlatformState(loadConfig(executorSchema, { env: {}, flags: executorFlags() }).values);
  await importWorkers(state.db, [trader]);
  sub = nc.subscribe(executionResultFilter(prefix));
  void (async () => {
    for await (const m of sub) {
      const r = decodeExecutionResult(m.data);
      results.set(r.tradeId, r);
    }
  })();
}, 90_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  sub?.unsubscribe();
  await state?.close();
  await deleteStreams(nc, STREAMS);
  await nc?.close();
  await database?.drop();
  await proxy?.close();
  await sim?.close();
});

describe('kill -9 of a real-mode executor mid-trade', () => {
  it.skipIf(!existsSync(bin))('after a restart, nothing is sent twice and the trade is recorded once, settled from the chain', async () => {
    const first = await startExecutor();
    const before = holdingsOf(sim.chain, trader);
    sim.chain.stop();
    const op = orderOpportunityOn(sim.chain, 50_000_000n);
    await nc.jetstream().publish(tradeOpportunitySubject(op.strategy, prefix), encodeTradeOpportunity(op), { msgID: op.id });
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
