import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../obs/logger.js';
import { loadShredstreamProto } from '../../proto.js';
import type { EntryBatch } from '../chain-backend.js';
import { FaultInjector, type FaultAction } from '../faults.js';
import { ShredstreamServer } from '../stream/shredstream-server.js';
import { mountFaultAdmin } from './admin.js';
import { SimHttpServer } from './sim-http-server.js';

let server: SimHttpServer;
let faults: FaultInjector;
let base: string;

beforeEach(async () => {
  faults = new FaultInjector(5);
  const logger = createLogger({ level: 'silent' });
  server = new SimHttpServer({ port: 0, logger });
  mountFaultAdmin(server, { faults, logger });
  await server.start();
  base = server.url;
});

afterEach(async () => {
  await server.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, body: await res.json() };
}

const CLEAR = {
  stream: { stall: false, garbageRate: 0, truncateRate: 0 },
  rpc: {},
  quoteApi: { latencyMs: 0, failRate: 0, failStatus: 503 },
  rejectBundles: false,
};

describe('GET /admin/faults', () => {
  it('shows no faults at first', async () => {
    expect(await call('GET', '/admin/faults')).toEqual({ status: 200, body: CLEAR });
  });
});

describe('POST /admin/faults', () => {
  it('sets every kind of fault and shows it in GET', async () => {
    expect((await call('POST', '/admin/faults', { stream: { stall: true, garbageRate: 0.5, truncateRate: 0.25 } })).status).toBe(200);
    await call('POST', '/admin/faults', { rpc: { getMultipleAccounts: { errorRate: 1, latencyMs: 200 } } });
    await call('POST', '/admin/faults', {
      rpc: { '*': { errorRate: 0.1, errorCode: -32005, errorMessage: 'Node is behind' } },
    });
    await call('POST', '/admin/faults', { quoteApi: { failRate: 1, failStatus: 429, latencyMs: 500 } });
    const last = await call('POST', '/admin/faults', { rejectBundles: true });

    const expected = {
      stream: { stall: true, garbageRate: 0.5, truncateRate: 0.25 },
      rpc: {
        getMultipleAccounts: { errorRate: 1, errorCode: -32603, errorMessage: 'Internal error (injected)', latencyMs: 200 },
        '*': { errorRate: 0.1, errorCode: -32005, errorMessage: 'Node is behind', latencyMs: 0 },
      },
      quoteApi: { latencyMs: 500, failRate: 1, failStatus: 429 },
      rejectBundles: true,
    };
    expect(last.body).toEqual(expected);
    expect((await call('GET', '/admin/faults')).body).toEqual(expected);
    expect(faults.stream.stall).toBe(true);
    expect(faults.rpcFault('getBalance')?.errorCode).toBe(-32005);
  });

  it('changes only the fields a patch names', async () => {
    await call('POST', '/admin/faults', { stream: { garbageRate: 0.5 }, rpc: { getSlot: { errorRate: 1 } } });
    await call('POST', '/admin/faults', { stream: { stall: true }, rpc: { getSlot: { latencyMs: 50 } } });
    const { body } = await call('GET', '/admin/faults');
    expect(body.stream).toEqual({ stall: true, garbageRate: 0.5, truncateRate: 0 });
    expect(body.rpc.getSlot).toMatchObject({ errorRate: 1, latencyMs: 50 });
  });

  it("removes a method's RPC fault when given null", async () => {
    await call('POST', '/admin/faults', { rpc: { getSlot: { errorRate: 1 }, getBalance: { errorRate: 1 } } });
    const { body } = await call('POST', '/admin/faults', { rpc: { getSlot: null } });
    expect(Object.keys(body.rpc)).toEqual(['getBalance']);
  });

  it.each([
    [{ stream: { stalll: true } }, 'stream.stalll'],
    [{ streams: {} }, 'streams'],
    [{ stream: { stall: 'yes' } }, 'stream.stall'],
    [{ stream: { garbageRate: 1.5 } }, 'stream.garbageRate'],
    [{ stream: { truncateRate: -0.1 } }, 'stream.truncateRate'],
    [{ stream: { garbageRate: '0.5' } }, 'stream.garbageRate'],
    [{ stream: [] }, 'stream'],
    [{ rpc: { getSlot: { errorRate: 2 } } }, 'rpc.getSlot.errorRate'],
    [{ rpc: { getSlot: { latencyMs: -1 } } }, 'rpc.getSlot.latencyMs'],
    [{ rpc: { getSlot: { latencyMs: 1.5 } } }, 'rpc.getSlot.latencyMs'],
    [{ rpc: { getSlot: { errorCode: 'x' } } }, 'rpc.getSlot.errorCode'],
    [{ rpc: { getSlot: { errorMessage: '' } } }, 'rpc.getSlot.errorMessage'],
    [{ rpc: { getSlot: { delay: 1 } } }, 'rpc.getSlot.delay'],
    [{ rpc: { 'get slot': {} } }, 'rpc.get slot'],
    [{ rpc: { getSlot: 5 } }, 'rpc.getSlot'],
    [{ quoteApi: { failStatus: 200 } }, 'quoteApi.failStatus'],
    [{ quoteApi: { failRate: 3 } }, 'quoteApi.failRate'],
    [{ quoteApi: { latencyMs: 'slow' } }, 'quoteApi.latencyMs'],
    [{ rejectBundles: 1 }, 'rejectBundles'],
    [[1, 2], 'body'],
  ])('rejects %j with 400 naming %s', async (body, field) => {
    const res = await call('POST', '/admin/faults', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('TP_ERR_BAD_PARAMETER');
    expect(res.body.error.message).toContain(field);
  });

  it('applies nothing from a body with one bad field', async () => {
    const res = await call('POST', '/admin/faults', { stream: { stall: true }, rpc: { getSlot: { errorRate: 1 } }, rejectBundles: 'yes' });
    expect(res.status).toBe(400);
    expect(faults.snapshot()).toEqual(CLEAR);
  });

  it('rejects a body that is not JSON', async () => {
    const res = await call('POST', '/admin/faults', '{stream:');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('TP_ERR_INVALID_JSON');
  });
});

describe('DELETE /admin/faults', () => {
  it('clears every fault', async () => {
    await call('POST', '/admin/faults', {
      stream: { stall: true, garbageRate: 1 },
      rpc: { getSlot: { errorRate: 1 } },
      quoteApi: { failRate: 1 },
      rejectBundles: true,
    });
    expect(await call('DELETE', '/admin/faults')).toEqual({ status: 200, body: CLEAR });
    expect(faults.snapshot()).toEqual(CLEAR);
  });
});

describe('fault actions', () => {
  it.each(['stream.disconnect', 'ws.drop'])('triggers %s once', async (action) => {
    const seen: FaultAction[] = [];
    faults.on('action', (a) => seen.push(a));
    const res = await call('POST', `/admin/faults/actions/${action}`);
    expect(res.status).toBe(200);
    expect(res.body.action).toBe(action);
    expect(seen).toEqual([action]);
  });

  it('answers 404 for an unknown action', async () => {
    const res = await call('POST', '/admin/faults/actions/chain.halt');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('chain.halt');
  });

  it('ends the open ShredStream subscriptions on stream.disconnect', async () => {
    const listeners = new Set<(b: EntryBatch) => void>();
    const stream = new ShredstreamServer({
      backend: { onEntries: (l) => (listeners.add(l), () => listeners.delete(l)) },
      faults,
      port: 0,
      logger: createLogger({ level: 'silent' }),
    });
    const port = await stream.start();
    const client = new (loadShredstreamProto().ShredstreamProxy)(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const sub = (client as unknown as { SubscribeEntries(r: object): grpc.ClientReadableStream<unknown> }).SubscribeEntries({});
      sub.on('error', () => {});
      const status = new Promise<grpc.StatusObject>((resolve) => sub.on('status', resolve));
      const deadline = Date.now() + 2000;
      while (stream.stats().subscribers === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await call('POST', '/admin/faults/actions/stream.disconnect');
      expect((await status).code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      client.close();
      await stream.close();
    }
  });
});
