import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { KeySpace } from '../../state/kv/key-space.js';
import { RedisStore } from '../../state/kv/redis-store.js';
import { TEST_REDIS_URL, testPrefix } from '../../state/kv/testing.js';
import { rpcProxySchema } from '../../rpc-proxy/index.js';
import { call, eventually, post, startSim } from '../../rpc-proxy/testing.js';
import type { RpcNode, Simulator } from '../../sim/index.js';
import type { CliIo } from '../command.js';
import { rpcProxyCommand } from './rpc-proxy.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');

let sim: Simulator;
let node: RpcNode;

beforeAll(async () => {
  sim = await startSim(41);
  node = await sim.rpcNodes.add();
});

afterAll(async () => {
  await sim.close();
});

describe('tidepool rpc-proxy', () => {
  it('--help names every setting, its flag and its variable', () => {
    for (const def of Object.values(rpcProxySchema)) {
      expect(rpcProxyCommand.help).toContain(`--${def.flag}`);
      if (def.env !== undefined) expect(rpcProxyCommand.help).toContain(def.env);
    }
    expect(rpcProxyCommand.help).toContain('[max_connections_per_endpoint]');
  });

  it('prints its endpoints without their URLs, proxies, and exits 0 after SIGTERM', async () => {
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (c) => (text += String(c)));
    const io: CliIo = { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env: { RPC_PROXY_PORT: '0', LOG_LEVEL: 'silent' } };
    const running = rpcProxyCommand.run(['-endpoints', `${node.rpc}/?api-key=do-not-print`, '-ws-endpoints', node.pubsub], io);
    const rpc = await eventually(() => /JSON-RPC\s+(http:\/\/127\.0\.0\.1:\d+)\/rpc/.exec(text)?.[1], 'the endpoints printed');
    expect(text).toMatch(/endpoint\s+127\.0\.0\.1:\d+\s+up/);
    expect(text).not.toContain('do-not-print');
    expect((await post(rpc, call('getSlot'))).json.result).toBe(Number(sim.chain.slot('finalized')));
    process.emit('SIGTERM', 'SIGTERM');
    expect(await running).toBe(0);
  });

  it('with REDIS_URL writes its system:health:rpc-proxy heartbeat, stopped after SIGTERM', async () => {
    const store = await RedisStore.connect({ url: TEST_REDIS_URL });
    const keys = new KeySpace(store, testPrefix());
    try {
      const stderr = new PassThrough();
      let text = '';
      stderr.on('data', (c) => (text += String(c)));
      const env = { RPC_PROXY_PORT: '0', LOG_LEVEL: 'silent', REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: keys.prefix };
      const running = rpcProxyCommand.run(['-endpoints', node.rpc, '-ws-endpoints', node.pubsub], { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env });
      await eventually(() => /JSON-RPC\s+(http:\/\/127\.0\.0\.1:\d+)\/rpc/.exec(text)?.[1], 'the endpoints printed');
      expect((await eventually(async () => (await keys.getHealth('rpc-proxy')) ?? undefined, 'the heartbeat'))?.status).toBe('ok');
      process.emit('SIGTERM', 'SIGTERM');
      expect(await running).toBe(0);
      expect((await keys.getHealth('rpc-proxy'))?.status).toBe('stopped');
    } finally {
      for (const key of await store.keys(keys.prefix)) await store.del(key);
      await store.close();
    }
  });

  it.skipIf(!existsSync(bin))('as a process: SIGTERM lets the call in flight finish, then exits 0', async () => {
    node.faults.setRpcFault('getBalance', { latencyMs: 400 });
    const child = spawn(process.execPath, [bin, 'rpc-proxy', '--port', '0', '--endpoints', node.rpc, '--ws-endpoints', node.pubsub], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const rpc = await eventually(() => /JSON-RPC\s+(http:\/\/127\.0\.0\.1:\d+)\/rpc/.exec(stderr)?.[1], 'the endpoints printed');
    const before = node.received('getBalance');
    const pending = post(rpc, call('getBalance', [sim.chain.pools()[0]!.address], 'in flight'));
    await eventually(() => node.received('getBalance') > before, 'the call reaching the node');
    child.kill('SIGTERM');
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 'in flight', result: { value: expect.any(Number) } });
    expect(await exited).toBe(0);
    node.faults.clear();
  });

  it.skipIf(!existsSync(bin))('refuses a bad setting at start, naming it', async () => {
    const child = spawn(process.execPath, [bin, 'rpc-proxy', '--retry-count', 'lots'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RPC_PROXY_ENDPOINTS: 'nope' } });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    expect(await new Promise<number | null>((done) => child.once('exit', done))).toBe(1);
    expect(stderr).toContain('retry_count from flag --retry-count = "lots"');
    expect(stderr).toContain('endpoints from environment variable RPC_PROXY_ENDPOINTS = (secret): item 0 is not a URL');
  });
});
