import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { PubsubPoolSource, accountOfNotification } from '../market/index.js';
import type { LoadedPool } from '../pools/index.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import { marketScannerSchema, type MarketScannerConfig } from './market-scanner-app.js';
import { createAccountReads, createPoolLoader } from './scanner-service.js';
import { eventually } from './testing.js';

/**
 * The websocket mode's failure paths. The PubSub peer here is a small server that answers
 * accountSubscribe and then sends what a broken or hostile node could send; the pool account in
 * its one good notification, and every context read, come from the real simulator.
 */

const logger = createLogger({ name: 'pubsub-source-test', level: process.env.TEST_LOG ?? 'silent' });
let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  const config = loadConfig(simSchema, { env: {}, flags: { seed: '13', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '1' } }).values;
  sim = createSimulator(config, { manual: true, logger });
  endpoints = await sim.start();
  sim.chain.advanceSlot(1);
});

afterAll(async () => {
  await sim?.close();
});

describe('PubsubPoolSource', () => {
  it('counts and skips malformed notifications, and still loads the good one', async () => {
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm')!;
    const reads = createAccountReads([endpoints.rpc], false);
    const account = (await reads.fetcher.fetch(pool.address))!;
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    const sockets: WebSocket[] = [];
    server.on('connection', (socket) => {
      sockets.push(socket);
      let subscribes = 0;
      socket.on('message', (raw) => {
        const call = JSON.parse(String(raw)) as { id: number; method: string };
        if (call.method !== 'accountSubscribe') return;
        // The pool's subscription is 7 and gets the notifications; the AMM's vaults, subscribed
        // once the pool is loaded, get ids of their own and no notification.
        if (subscribes++ > 0) {
          socket.send(JSON.stringify({ jsonrpc: '2.0', result: 100 + subscribes, id: call.id }));
          return;
        }
        socket.send(JSON.stringify({ jsonrpc: '2.0', result: 7, id: call.id }));
        const note = (value: unknown, subscription = 7) => JSON.stringify({ jsonrpc: '2.0', method: 'accountNotification', params: { result: { context: { slot: 999 }, value }, subscription } });
        const good = { lamports: Number(account.lamports), owner: account.owner, executable: false, rentEpoch: 0, space: account.data.length, data: [Buffer.from(account.data).toString('base64'), 'base64'] };
        socket.send('{"jsonrpc":"2.0","method":"accountNotification","params":{"result":'); // cut short: not JSON
        socket.send(note({ ...good, data: ['not base64!', 'base64'] }));
        socket.send(note({ ...good, data: 'plain string' }));
        socket.send(note(good, 8)); // a subscription that is not ours
        socket.send(note(good));
      });
    });
    const config = loadConfig(marketScannerSchema, { env: {}, flags: { 'rpc-endpoints': endpoints.rpc } }).values as MarketScannerConfig;
    const states: LoadedPool[] = [];
    const source = new PubsubPoolSource({
      wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      accounts: [pool.address],
      fetcher: reads.fetcher,
      createLoader: (reader) => createPoolLoader(config, reader),
      onState: (loaded) => {
        states.push(loaded);
        return Promise.resolve();
      },
      logger,
    });
    try {
      source.start();
      // The catch-up load (RPC slot) and the good notification (slot 999, from the notification's bytes).
      const pushed = await eventually(() => states.find((s) => s.slot === 999n), 10_000, 'the state of the good notification');
      expect(pushed.address).toBe(pool.address);
      expect(Buffer.from(pushed.data).equals(Buffer.from(account.data))).toBe(true);
      expect(source.stats.malformed).toBe(4);
      expect(source.stats.notifications).toBe(1);
      expect(source.stats.connects).toBe(1);
    } finally {
      await source.close();
      for (const s of sockets) s.terminate();
      await new Promise((resolve) => server.close(resolve));
      await reads.close();
    }
  });

  it('reads an accountNotification, and says why a message is not one', () => {
    const data = Buffer.from([1, 2, 3]).toString('base64');
    const good = { method: 'accountNotification', params: { result: { context: { slot: 5 }, value: { lamports: 10, owner: '11111111111111111111111111111111', executable: false, data: [data, 'base64'] } }, subscription: 3 } };
    const got = accountOfNotification(good);
    expect(got).toEqual({ subscription: 3, account: { data: new Uint8Array([1, 2, 3]), owner: '11111111111111111111111111111111', lamports: 10n, executable: false, slot: 5n } });
    expect(accountOfNotification(null)).toBe('not a JSON object');
    expect(accountOfNotification({ ...good, method: 'slotNotification' })).toMatch(/not accountNotification/);
    expect(accountOfNotification({ ...good, params: { ...good.params, subscription: 'x' } })).toBe('no subscription id');
    expect(accountOfNotification({ ...good, params: { ...good.params, result: { ...good.params.result, context: {} } } })).toBe('no context.slot');
    expect(accountOfNotification({ ...good, params: { ...good.params, result: { ...good.params.result, value: null } } })).toBe('no value');
    expect(accountOfNotification({ ...good, params: { ...good.params, result: { ...good.params.result, value: { ...good.params.result.value, data: [data, 'base58'] } } } })).toMatch(/not \[base64/);
    expect(accountOfNotification({ ...good, params: { ...good.params, result: { ...good.params.result, value: { ...good.params.result.value, owner: 1 } } } })).toBe('no value.owner');
    expect(accountOfNotification({ ...good, params: { ...good.params, result: { ...good.params.result, value: { ...good.params.result.value, lamports: -1 } } } })).toBe('no value.lamports');
  });
});
