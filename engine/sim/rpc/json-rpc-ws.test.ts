import { once } from 'node:events';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { account, address, startTestServers, type TestServers } from './testing/test-servers.js';

let t: TestServers;
const clients: WebSocket[] = [];

beforeEach(async () => {
  t = await startTestServers();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  await t.close();
});

/** A raw client that queues every message it receives. */
async function connect(): Promise<{ socket: WebSocket; next(): Promise<any>; request(body: unknown): Promise<any> }> {
  const socket = new WebSocket(t.wsUrl);
  clients.push(socket);
  const queue: any[] = [];
  const waiters: ((m: any) => void)[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    const waiter = waiters.shift();
    if (waiter !== undefined) waiter(message);
    else queue.push(message);
  });
  await once(socket, 'open');
  const next = (): Promise<any> =>
    queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiters.push(resolve));
  return {
    socket,
    next,
    request: (body: unknown) => {
      socket.send(typeof body === 'string' ? body : JSON.stringify(body));
      return next();
    },
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe('accountSubscribe', () => {
  it('returns a numeric id and pushes accountNotification on every change', async () => {
    const c = await connect();
    const sub = await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1), { encoding: 'base64', commitment: 'confirmed' }] });
    expect(sub).toEqual({ jsonrpc: '2.0', result: 0, id: 1 });
    t.backend.setAccount(address(1), account(Uint8Array.from([4, 5, 6])));
    const n = await c.next();
    expect(n).toEqual({
      jsonrpc: '2.0',
      method: 'accountNotification',
      params: {
        result: {
          context: { slot: 100 },
          value: {
            lamports: 1000000,
            data: [Buffer.from([4, 5, 6]).toString('base64'), 'base64'],
            owner: address(9),
            executable: false,
            rentEpoch: 18446744073709552000,
            space: 3,
          },
        },
        subscription: 0,
      },
    });
    t.backend.advanceSlot(1, [[address(1), account(Uint8Array.from([7]), { lamports: 5n })]]);
    const second = await c.next();
    expect(second.params.result.context.slot).toBe(101);
    expect(second.params.result.value.lamports).toBe(5);
  });

  it('writes rentEpoch u64::MAX exactly in notifications', async () => {
    const socket = new WebSocket(t.wsUrl);
    clients.push(socket);
    await once(socket, 'open');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1), { encoding: 'base64' }] }));
    await once(socket, 'message');
    t.backend.setAccount(address(1), account(new Uint8Array(1)));
    const [raw] = await once(socket, 'message');
    expect(String(raw)).toContain('"rentEpoch":18446744073709551615');
    expect(String(raw)).toMatch(/^\{"jsonrpc":"2.0","method":"accountNotification","params":\{"result":\{"context":\{"slot":100\},"value":\{"lamports":/);
  });

  it('reports a deleted account as the empty system account', async () => {
    const c = await connect();
    await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1), { encoding: 'base64' }] });
    t.backend.setAccount(address(1), null);
    const n = await c.next();
    expect(n.params.result.value).toEqual({
      lamports: 0,
      data: ['', 'base64'],
      owner: '11111111111111111111111111111111',
      executable: false,
      rentEpoch: 0,
      space: 0,
    });
  });

  it('encodes binary (base58) by default', async () => {
    const c = await connect();
    await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1)] });
    t.backend.setAccount(address(1), account(Uint8Array.from([0, 0, 1])));
    expect((await c.next()).params.result.value.data).toBe('112');
  });

  it('shares one id between subscribers with the same parameters, across connections', async () => {
    const a = await connect();
    const b = await connect();
    const params = [address(1), { encoding: 'base64' }];
    const ida = (await a.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params })).result;
    const idb = (await b.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params })).result;
    const other = (await b.request({ jsonrpc: '2.0', id: 2, method: 'accountSubscribe', params: [address(1), { encoding: 'base58' }] })).result;
    expect(ida).toBe(idb);
    expect(other).not.toBe(ida);
    expect(t.backend.listenerCount('account', address(1))).toBe(2);
    t.backend.setAccount(address(1), account(new Uint8Array(1)));
    expect((await a.next()).params.subscription).toBe(ida);
    const got = [await b.next(), await b.next()].map((m) => m.params.subscription).sort();
    expect(got).toEqual([ida, other].sort());
  });

  it('unsubscribes with true, then refuses the same id', async () => {
    const c = await connect();
    const id = (await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1)] })).result;
    expect(await c.request({ jsonrpc: '2.0', id: 2, method: 'accountUnsubscribe', params: [id] })).toEqual({ jsonrpc: '2.0', result: true, id: 2 });
    expect(t.backend.listenerCount('account')).toBe(0);
    expect(await c.request({ jsonrpc: '2.0', id: 3, method: 'accountUnsubscribe', params: [id] })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid subscription id.' },
      id: 3,
    });
  });

  it('refuses a bad pubkey and bad params with the node messages', async () => {
    const c = await connect();
    expect((await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: ['nope'] })).error).toEqual({
      code: -32602,
      message: 'Invalid Request: Invalid pubkey provided',
    });
    expect((await c.request({ jsonrpc: '2.0', id: 2, method: 'accountSubscribe', params: [address(1), { encoding: 'hex' }] })).error.message).toMatch(
      /^Invalid params: unknown variant `hex`/,
    );
    expect((await c.request({ jsonrpc: '2.0', id: 3, method: 'accountUnsubscribe', params: ['x'] })).error.message).toBe(
      'Invalid params: invalid type: string "x", expected u64.',
    );
    expect((await c.request({ jsonrpc: '2.0', id: 4, method: 'accountUnsubscribe', params: [] })).error.message).toBe(
      'Invalid params: invalid length 0, expected a tuple of size 1.',
    );
    expect((await c.request({ jsonrpc: '2.0', id: 5, method: 'programSubscribe', params: [address(1)] })).error).toEqual({
      code: -32601,
      message: 'Method not found',
    });
    expect(await c.request('{"jsonrpc":"2.0",')).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  });

  it('does not answer notifications such as the client pings', async () => {
    const c = await connect();
    c.socket.send('{"jsonrpc":"2.0","method":"ping"}');
    expect(await c.request({ jsonrpc: '2.0', id: 9, method: 'getVersion' })).toEqual({
      jsonrpc: '2.0',
      result: { 'feature-set': 3294202862, 'solana-core': '2.2.20' },
      id: 9,
    });
  });
});

describe('slotSubscribe', () => {
  it('pushes slotNotification with parent, root and slot', async () => {
    const c = await connect();
    const id = (await c.request({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' })).result;
    t.backend.advanceSlot();
    expect(await c.next()).toEqual({
      jsonrpc: '2.0',
      method: 'slotNotification',
      params: { result: { slot: 101, parent: 100, root: 69 }, subscription: id },
    });
    expect(await c.request({ jsonrpc: '2.0', id: 2, method: 'slotUnsubscribe', params: [id] })).toMatchObject({ result: true });
    t.backend.advanceSlot();
    expect(await c.request({ jsonrpc: '2.0', id: 3, method: 'getVersion' })).toMatchObject({ id: 3 });
  });
});

describe('signatureSubscribe', () => {
  it('notifies once the signature reaches the commitment, then ends the subscription', async () => {
    const c = await connect();
    const tx = Buffer.concat([Buffer.from([1]), Buffer.alloc(64, 3), Buffer.alloc(50)]);
    const signature = t.backend.sendTransaction(tx);
    const id = (await c.request({ jsonrpc: '2.0', id: 1, method: 'signatureSubscribe', params: [signature, { commitment: 'confirmed' }] })).result;
    t.backend.advanceSlot();
    expect(await c.next()).toEqual({
      jsonrpc: '2.0',
      method: 'signatureNotification',
      params: { result: { context: { slot: 100 }, value: { err: null } }, subscription: id },
    });
    expect(t.ws.subscriptionCount).toBe(0);
    expect((await c.request({ jsonrpc: '2.0', id: 2, method: 'signatureUnsubscribe', params: [id] })).error.message).toBe('Invalid subscription id.');
  });
});

describe('connections', () => {
  it('drops every open WebSocket on the ws.drop fault and releases their listeners', async () => {
    const a = await connect();
    const b = await connect();
    await a.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1)] });
    await b.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(2)] });
    await b.request({ jsonrpc: '2.0', id: 2, method: 'slotSubscribe' });
    expect(t.backend.listenerCount('account')).toBe(2);
    const closes = [once(a.socket, 'close'), once(b.socket, 'close')];
    t.faults.trigger('ws.drop');
    const codes = (await Promise.all(closes)).map(([code]) => code);
    expect(codes).toEqual([1006, 1006]);
    await until(() => t.ws.connectionCount === 0);
    expect(t.ws.subscriptionCount).toBe(0);
    expect(t.backend.listenerCount('account')).toBe(0);
    // New connections are accepted afterwards.
    const c = await connect();
    expect((await c.request({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' })).result).toBeTypeOf('number');
  });

  it('releases subscriptions when a client goes away', async () => {
    const c = await connect();
    await c.request({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [address(1)] });
    c.socket.close();
    await until(() => t.backend.listenerCount('account') === 0);
    expect(t.ws.subscriptionCount).toBe(0);
  });

  it('closes clients and detaches from the chain on close', async () => {
    const c = await connect();
    const closed = once(c.socket, 'close');
    await t.ws.close();
    expect((await closed)[0]).toBe(1001);
    expect(t.backend.listenerCount('slot')).toBe(0);
  });
});
