import { createHash } from 'node:crypto';

import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../obs/logger.js';
import { rpcError, type RpcError, type BundleStatus } from '../chain-backend.js';
import { FaultInjector } from '../faults.js';
import { MemoryBackend } from '../rpc/memory-backend.js';
import { BlockEngine, type BlockEngineBackend } from './block-engine.js';
import { deriveBundleId } from './bundle-id.js';
import { SimHttpServer } from './sim-http-server.js';

const TIP_ACCOUNTS = [
  '96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5',
  'HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe',
  'Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY',
  'ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49',
  'DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh',
  'ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt',
  'DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL',
  '3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT',
];

/** A chain that takes bundles and lands them when told to. */
class BundleChain implements BlockEngineBackend {
  currentSlot = 1_000n;
  readonly pending = new Map<string, Uint8Array[]>();
  readonly landed = new Map<string, BundleStatus>();
  readonly transactions: { tx: Uint8Array; skipPreflight: boolean | undefined }[] = [];
  bundleCalls = 0;
  failNext: RpcError | undefined;

  slot(): bigint {
    return this.currentSlot;
  }
  sendBundle(txs: Uint8Array[]): string {
    this.bundleCalls++;
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    const id = deriveBundleId(txs);
    this.pending.set(id, txs);
    return id;
  }
  bundleStatus(bundleId: string): BundleStatus | null {
    return this.landed.get(bundleId) ?? null;
  }
  tipAccounts(): string[] {
    return [...TIP_ACCOUNTS];
  }
  sendTransaction(tx: Uint8Array, options?: { skipPreflight?: boolean }): string {
    this.transactions.push({ tx, skipPreflight: options?.skipPreflight });
    return bs58.encode(tx.subarray(1, 65));
  }
  /** Lands every pending bundle in the next slot. */
  advance(): void {
    this.currentSlot++;
    for (const [id, txs] of this.pending) {
      this.landed.set(id, {
        bundleId: id,
        transactions: txs.map((tx) => bs58.encode(tx.subarray(1, 65))),
        slot: this.currentSlot,
        confirmationStatus: 'confirmed',
        err: null,
      });
    }
    this.pending.clear();
  }
}

/** A legacy-shaped transaction: 1 signature (seeded bytes), then a message stub. */
function fakeTx(seed: number): Uint8Array {
  const tx = new Uint8Array(1 + 64 + 40);
  tx[0] = 1;
  for (let i = 1; i < tx.length; i++) tx[i] = (seed * 131 + i * 7) & 0xff;
  return tx;
}

/** Jito's bundle id, computed here independently: hex SHA-256 of the base58 first signatures joined by ",". */
function jitoBundleId(txs: Uint8Array[]): string {
  const sigs = txs.map((tx) => bs58.encode(tx.subarray(1, 65)));
  return createHash('sha256').update(sigs.join(',')).digest('hex');
}

let server: SimHttpServer;
let chain: BundleChain;
let faults: FaultInjector;
let base: string;

beforeEach(async () => {
  chain = new BundleChain();
  faults = new FaultInjector(3);
  const logger = createLogger({ level: 'silent' });
  server = new SimHttpServer({ port: 0, logger });
  new BlockEngine({ backend: chain, faults, logger }).mount(server);
  await server.start();
  base = server.url;
});

afterEach(async () => {
  await server.close();
});

interface RpcReply {
  status: number;
  headers: Headers;
  body: { jsonrpc: string; id: unknown; result?: any; error?: { code: number; message: string; data: unknown } };
}

async function rpc(path: string, method: string, params: unknown[], id: unknown = 1): Promise<RpcReply> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as RpcReply['body'] };
}

const b64 = (tx: Uint8Array) => Buffer.from(tx).toString('base64');

describe('sendBundle', () => {
  it('accepts base64 transactions and answers the Jito bundle id (SHA-256 of the signatures)', async () => {
    const txs = [fakeTx(1), fakeTx(2), fakeTx(3)];
    const reply = await rpc('/api/v1/bundles', 'sendBundle', [txs.map(b64), { encoding: 'base64' }], 42);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ jsonrpc: '2.0', result: jitoBundleId(txs), id: 42 });
    const sent = chain.pending.get(jitoBundleId(txs))!;
    expect(sent.map((tx) => Buffer.from(tx).toString('hex'))).toEqual(txs.map((tx) => Buffer.from(tx).toString('hex')));
  });

  it('decodes base58 when no encoding is given', async () => {
    const txs = [fakeTx(4)];
    const reply = await rpc('/api/v1/bundles', 'sendBundle', [txs.map((tx) => bs58.encode(tx))]);
    expect(reply.body.result).toBe(jitoBundleId(txs));
  });

  it('rejects more than 5 transactions with invalid params, sending nothing to the chain', async () => {
    const txs = [1, 2, 3, 4, 5, 6].map(fakeTx);
    const reply = await rpc('/api/v1/bundles', 'sendBundle', [txs.map(b64), { encoding: 'base64' }]);
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32602);
    expect(reply.body.error?.message).toMatch(/at most 5 transactions/);
    expect(chain.bundleCalls).toBe(0);
  });

  it.each([
    [[[], { encoding: 'base64' }], /at least one/],
    [[['AAAA'], { encoding: 'base32' }], /unsupported encoding: base32/],
    [[['not base64!'], { encoding: 'base64' }], /transaction 0 is not valid base64/],
    [[['0OIl'], { encoding: 'base58' }], /transaction 0 is not valid base58/],
    [[[Buffer.alloc(1300, 1).toString('base64')], { encoding: 'base64' }], /1232-byte limit/],
    [[[Buffer.from([0, 1, 2]).toString('base64')], { encoding: 'base64' }], /could not be deserialized/],
    [['not-a-list'], /list of transactions/],
  ])('answers invalid params for %j', async (params, message) => {
    const reply = await rpc('/api/v1/bundles', 'sendBundle', params);
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32602);
    expect(reply.body.error?.message).toMatch(message);
  });

  it('fails like the block engine dropping a bundle while rejectBundles is set', async () => {
    faults.rejectBundles = true;
    const params = [[b64(fakeTx(7))], { encoding: 'base64' }];
    const reply = await rpc('/api/v1/bundles', 'sendBundle', params);
    expect(reply.body.error).toEqual({ code: -32000, message: 'Bundle Dropped, no connected leader up soon', data: null });
    expect(chain.bundleCalls).toBe(0);
    faults.rejectBundles = false;
    expect((await rpc('/api/v1/bundles', 'sendBundle', params)).body.result).toBe(jitoBundleId([fakeTx(7)]));
  });

  it("passes the chain's JSON-RPC error through", async () => {
    chain.failNext = rpcError(-32002, 'Transaction simulation failed: Blockhash not found', { logs: [] });
    const reply = await rpc('/api/v1/bundles', 'sendBundle', [[b64(fakeTx(8))], { encoding: 'base64' }]);
    expect(reply.body.error).toEqual({ code: -32002, message: 'Transaction simulation failed: Blockhash not found', data: { logs: [] } });
  });
});

describe('bundle statuses', () => {
  it('answers null until the bundle lands, then its status with err {Ok: null}', async () => {
    const txs = [fakeTx(10), fakeTx(11)];
    const id = (await rpc('/api/v1/bundles', 'sendBundle', [txs.map(b64), { encoding: 'base64' }])).body.result as string;

    const before = await rpc('/api/v1/bundles', 'getBundleStatuses', [[id]]);
    expect(before.body.result).toEqual({ context: { slot: 1000 }, value: [null] });

    chain.advance();
    const after = await rpc('/api/v1/bundles', 'getBundleStatuses', [[id, 'f'.repeat(64)]]);
    expect(after.body.result).toEqual({
      context: { slot: 1001 },
      value: [
        {
          bundle_id: id,
          transactions: txs.map((tx) => bs58.encode(tx.subarray(1, 65))),
          slot: 1001,
          confirmation_status: 'confirmed',
          err: { Ok: null },
        },
        null,
      ],
    });
  });

  it('reports in-flight bundles as Pending, then Landed with the slot, and unknown ids as Invalid', async () => {
    const id = (await rpc('/api/v1/bundles', 'sendBundle', [[b64(fakeTx(12))], { encoding: 'base64' }])).body.result as string;
    const unknown = 'a'.repeat(64);
    const pending = await rpc('/api/v1/getInflightBundleStatuses', 'getInflightBundleStatuses', [[id, unknown]]);
    expect(pending.body.result.value).toEqual([
      { bundle_id: id, status: 'Pending', landed_slot: null },
      { bundle_id: unknown, status: 'Invalid', landed_slot: null },
    ]);
    chain.advance();
    const landed = await rpc('/api/v1/getInflightBundleStatuses', 'getInflightBundleStatuses', [[id]]);
    expect(landed.body.result.value).toEqual([{ bundle_id: id, status: 'Landed', landed_slot: 1001 }]);
  });

  it('refuses more than 5 ids per query', async () => {
    const ids = ['1', '2', '3', '4', '5', '6'];
    for (const method of ['getBundleStatuses', 'getInflightBundleStatuses']) {
      const reply = await rpc('/api/v1/bundles', method, [ids]);
      expect(reply.body.error?.code).toBe(-32602);
      expect(reply.body.error?.message).toMatch(/at most 5 bundle ids/);
    }
  });
});

describe('getTipAccounts', () => {
  it("answers the chain's 8 tip accounts", async () => {
    const reply = await rpc('/api/v1/bundles', 'getTipAccounts', []);
    expect(reply.body.result).toEqual(TIP_ACCOUNTS);
  });
});

describe('transaction proxy', () => {
  it('forwards sendTransaction to the chain with preflight skipped', async () => {
    const tx = fakeTx(20);
    const reply = await rpc('/api/v1/transactions', 'sendTransaction', [b64(tx), { encoding: 'base64' }]);
    expect(reply.body.result).toBe(bs58.encode(tx.subarray(1, 65)));
    expect(chain.transactions).toHaveLength(1);
    expect(Buffer.from(chain.transactions[0]!.tx).equals(Buffer.from(tx))).toBe(true);
    expect(chain.transactions[0]!.skipPreflight).toBe(true);
  });

  it('sends a one-transaction bundle with bundleOnly=true and names it in x-bundle-id', async () => {
    const tx = fakeTx(21);
    const reply = await rpc('/api/v1/transactions?bundleOnly=true', 'sendTransaction', [bs58.encode(tx)]);
    expect(reply.body.result).toBe(bs58.encode(tx.subarray(1, 65)));
    expect(reply.headers.get('x-bundle-id')).toBe(jitoBundleId([tx]));
    expect(chain.transactions).toHaveLength(0);
    expect(chain.pending.has(jitoBundleId([tx]))).toBe(true);
  });
});

describe('JSON-RPC framing', () => {
  it('refuses a body that is not application/json', async () => {
    const res = await fetch(`${base}/api/v1/bundles`, { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid content type', data: null }, id: null });
  });

  it('answers a parse error for malformed JSON', async () => {
    const res = await fetch(`${base}/api/v1/bundles`, { method: 'POST', body: '{"jsonrpc":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as RpcReply['body']).error?.code).toBe(-32700);
  });

  it('answers method not found with the request id', async () => {
    const reply = await rpc('/api/v1/bundles', 'getSlot', [], 'abc');
    expect(reply.body).toMatchObject({ id: 'abc', error: { code: -32601, message: 'Method not found' } });
  });

  it('answers invalid request when the envelope is wrong', async () => {
    const res = await fetch(`${base}/api/v1/bundles`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'getTipAccounts' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(((await res.json()) as RpcReply['body']).error?.code).toBe(-32600);
  });
});

describe('over the memory chain backend', () => {
  it('answers the same bundle id the chain keys its statuses by', async () => {
    const logger = createLogger({ level: 'silent' });
    const backend = new MemoryBackend();
    const local = new SimHttpServer({ port: 0, logger });
    new BlockEngine({ backend, logger }).mount(local);
    await local.start();
    try {
      const txs = [fakeTx(30), fakeTx(31)];
      const post = (method: string, params: unknown[]) =>
        fetch(`${local.url}/api/v1/bundles`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        }).then((r) => r.json() as Promise<RpcReply['body']>);
      const id = (await post('sendBundle', [txs.map(b64), { encoding: 'base64' }])).result as string;
      expect(id).toBe(jitoBundleId(txs));
      const statuses = await post('getBundleStatuses', [[id]]);
      expect(statuses.result.value[0]).toMatchObject({ bundle_id: id, err: { Ok: null } });
      expect((await post('getTipAccounts', [])).result).toEqual(TIP_ACCOUNTS);
    } finally {
      await local.close();
    }
  });
});
