import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { base58 } from '../chain/index.js';
import type { AccountData, MultipleAccountsResult } from '../rpc/index.js';
import type { SimChain } from '../sim/chain.js';
import { GeyserServer } from '../sim/stream/geyser-server.js';
import { poolStateAddresses, swapTransaction, testChain, trader } from '../sim/testing/chain-fixtures.js';
import { GEYSER_FLOW_CONTROL_WINDOW, GeyserAccountStream, type AccountUpdate } from './geyser-stream.js';

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Rig {
  chain: SimChain;
  server: GeyserServer;
  stream: GeyserAccountStream;
  accounts: string[];
  updates: AccountUpdate[];
  reads: string[][];
  /** With `proxied`: the payload size of every HTTP/2 DATA frame the server sent. */
  dataFrames: number[];
}

const rigs: Rig[] = [];
const proxies: Server[] = [];

afterEach(async () => {
  for (const rig of rigs.splice(0)) {
    await rig.stream.close();
    await rig.server.close();
  }
  for (const proxy of proxies.splice(0)) await new Promise((r) => proxy.close(r));
});

/**
 * A TCP relay to 127.0.0.1:`port` that records the payload size of each HTTP/2 DATA frame the
 * server sends. nghttp2 cuts the data a stream has queued when the session writes into frames of
 * up to 16 KiB: messages written to the socket together share frames, while a message written on
 * its own ends its frame (TCP may merge the writes; the frames keep them apart).
 */
async function relay(port: number, dataFrames: number[]): Promise<number> {
  const proxy = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port });
    let pending = Buffer.alloc(0);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
        const length = pending.readUIntBE(0, 3);
        if (pending[3] === 0 && length > 0) dataFrames.push(length); // type 0: DATA
        pending = pending.subarray(9 + length);
      }
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  proxies.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return (proxy.address() as AddressInfo).port;
}

/**
 * A manual chain with swap flow, its Geyser server, and a stream following every pool's state
 * accounts. `copyReads`: the RPC reads answer with copies of the chain's bytes (a real node's
 * answers are new bytes each time).
 */
async function rig(options: { xToken?: string; clientToken?: string; historySlots?: number; txRate?: number; proxied?: boolean; copyReads?: boolean } = {}): Promise<Rig> {
  const chain = testChain({ txRate: options.txRate ?? 400 });
  const server = new GeyserServer({ backend: chain, port: 0, historySlots: options.historySlots ?? 512, ...(options.xToken !== undefined ? { xToken: options.xToken } : {}) });
  const dataFrames: number[] = [];
  const serverPort = await server.start();
  const port = options.proxied === true ? await relay(serverPort, dataFrames) : serverPort;
  const accounts = [...new Set(chain.pools().flatMap((p) => [p.address, ...poolStateAddresses(chain.poolInfo(p.address)!)]))];
  const updates: AccountUpdate[] = [];
  const reads: string[][] = [];
  const readAccounts = (addresses: readonly string[]): Promise<MultipleAccountsResult> => {
    reads.push([...addresses]);
    const slot = chain.slot();
    return Promise.resolve({
      slot,
      accounts: addresses.map((a): AccountData | null => {
        const r = chain.getAccount(a);
        return r === null ? null : { data: options.copyReads === true ? Uint8Array.from(r.data) : r.data, owner: r.owner, lamports: r.lamports, executable: r.executable, slot };
      }),
    });
  };
  const stream = new GeyserAccountStream({
    endpoint: `127.0.0.1:${port}`,
    accounts,
    readAccounts,
    onUpdate: (u) => updates.push(u),
    reconnectDelayMs: 10,
    ...(options.clientToken !== undefined ? { xToken: options.clientToken } : {}),
  });
  const r = { chain, server, stream, accounts, updates, reads, dataFrames };
  rigs.push(r);
  return r;
}

async function subscribed(r: Rig): Promise<void> {
  r.stream.start();
  await until(() => r.server.stats().subscribers === 1, 'the subscription');
  // The subscription is live once a slot after it arrives.
  const slot = r.chain.advanceSlot();
  await until(() => r.stream.slot >= slot, 'the first slot');
}

function heldEqualsChain(r: Rig): boolean {
  return r.accounts.every((a) => {
    const held = r.stream.get(a);
    const onChain = r.chain.getAccount(a);
    if (held === undefined) return true; // never written since the subscription: nothing to hold
    return onChain !== null && held.account !== null && Buffer.from(held.account.data).equals(Buffer.from(onChain.data));
  });
}

describe('GeyserAccountStream against the simulator', () => {
  it('receives every write in slot and write-version order and ends equal to the chain', async () => {
    const r = await rig();
    await subscribed(r);
    const last = r.chain.advanceSlot(5);
    await until(() => r.stream.slot >= last, 'slot 5');
    expect(r.updates.filter((u) => u.source === 'stream').length).toBeGreaterThan(0);
    for (let i = 1; i < r.updates.length; i++) {
      const a = r.updates[i - 1]!;
      const b = r.updates[i]!;
      expect(a.slot < b.slot || (a.slot === b.slot && a.writeVersion < b.writeVersion)).toBe(true);
    }
    expect(r.stream.stats.staleUpdates).toBe(0);
    expect(heldEqualsChain(r)).toBe(true);
  });

  it("streams a transaction's writes before its slot commits, under the transaction's signature", async () => {
    const r = await rig();
    await subscribed(r);
    const committed = r.chain.slot();
    const info = r.chain.poolInfo(r.chain.pools()[0]!.address)!;
    const signature = r.chain.sendTransaction(swapTransaction(r.chain, trader(r.chain), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
    r.chain.advancePiece(); // the first piece of the next slot runs the swap; the slot is not done
    const named = (u: AccountUpdate): boolean => u.signature !== undefined && base58.encode(u.signature) === signature;
    await until(() => r.updates.some(named), "the swap's writes");
    expect(r.chain.slot()).toBe(committed);
    expect(r.stream.slot).toBe(committed); // no slot update yet: the writes came first
    const swapWrites = r.updates.filter(named);
    expect(swapWrites.every((u) => u.slot === committed + 1n && u.source === 'stream')).toBe(true);
    expect(swapWrites.map((u) => u.address)).toEqual(expect.arrayContaining(poolStateAddresses(info)));
    // Every streamed write of a transaction names it (the generated flow's too), in rising write versions.
    const streamed = r.updates.filter((u) => u.source === 'stream');
    expect(streamed.every((u) => u.signature?.length === 64)).toBe(true);
    for (let i = 1; i < streamed.length; i++) expect(streamed[i]!.writeVersion).toBeGreaterThan(streamed[i - 1]!.writeVersion);
    const last = r.chain.advanceSlot();
    await until(() => r.stream.slot >= last, 'the slot commit');
    expect(heldEqualsChain(r)).toBe(true);
  });

  it("writes a transaction's account updates to the socket in one write", async () => {
    // No generated flow: the piece holds the swap alone.
    const r = await rig({ txRate: 0, proxied: true });
    await subscribed(r);
    const info = r.chain.poolInfo(r.chain.pools()[0]!.address)!;
    const signature = r.chain.sendTransaction(swapTransaction(r.chain, trader(r.chain), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
    r.dataFrames.length = 0;
    r.chain.advancePiece();
    const named = (u: AccountUpdate): boolean => u.signature !== undefined && base58.encode(u.signature) === signature;
    const stateAccounts = poolStateAddresses(info);
    await until(() => stateAccounts.every((a) => r.updates.some((u) => named(u) && u.address === a)), "the swap's writes");
    expect(r.updates.filter(named).length).toBeGreaterThan(1);
    // Less than a frame in all, sent together: one DATA frame; the first message sent alone would end one.
    expect(r.dataFrames).toHaveLength(1);
  });

  it('grants the server a flow-control window of megabytes, not the HTTP/2 default', async () => {
    const r = await rig();
    await subscribed(r);
    // The server's send window on the connection, as the client's WINDOW_UPDATE left it.
    const subscribers = (r.server as unknown as { subscribers: Set<{ direct?: { stream?: { session?: { state: { remoteWindowSize?: number } } } } }> }).subscribers;
    const windows = [...subscribers].map((s) => s.direct?.stream?.session?.state.remoteWindowSize ?? 0);
    expect(windows).toHaveLength(1);
    expect(windows[0]).toBeGreaterThan(GEYSER_FLOW_CONTROL_WINDOW / 2);
  });

  it('never lets a reordered older write overwrite a newer one', async () => {
    const r = await rig();
    await subscribed(r);
    r.server.reorderNext();
    const last = r.chain.advanceSlot(4);
    await until(() => r.stream.slot >= last, 'the slots after the reordered one');
    expect(r.server.stats().slotsReordered).toBe(1);
    expect(r.stream.stats.staleUpdates).toBeGreaterThan(0);
    expect(heldEqualsChain(r)).toBe(true);
  });

  it('resumes from the last slot after a disconnect without losing a write', async () => {
    const r = await rig();
    await subscribed(r);
    expect(r.server.disconnectAll()).toBe(1);
    // Slots made while the client is away: replayed from from_slot on reconnect.
    const last = r.chain.advanceSlot(3);
    await until(() => r.stream.stats.connects === 2 && r.stream.slot >= last, 'the reconnect and replay');
    expect(r.reads).toHaveLength(0); // no RPC read: the replay covered it
    expect(heldEqualsChain(r)).toBe(true);
  });

  it('heals a gap with one RPC read of the followed accounts', async () => {
    const r = await rig();
    await subscribed(r);
    r.server.skipSlots(2);
    r.chain.advanceSlot(2);
    const last = r.chain.advanceSlot();
    await until(() => r.stream.slot >= last && r.stream.stats.gaps === 1, 'the gap');
    await r.stream.idle();
    expect(r.reads).toEqual([r.accounts]);
    expect(r.updates.some((u) => u.source === 'rpc')).toBe(true);
    expect(heldEqualsChain(r)).toBe(true);
  });

  it('keeps the held bytes object when a write leaves an account as it was', async () => {
    const r = await rig({ txRate: 0, copyReads: true });
    await subscribed(r);
    await r.stream.heal();
    const before = new Map(r.accounts.map((a) => [a, r.stream.get(a)?.account?.data]));
    const last = r.chain.advanceSlot();
    await until(() => r.stream.slot >= last, 'the next slot');
    await r.stream.heal(); // new bytes objects at a newer slot, equal or not to the held ones
    let kept = 0;
    for (const a of r.accounts) {
      const held = r.stream.get(a)!;
      const was = before.get(a);
      expect(held.slot).toBe(last);
      if (held.account === null || was === undefined || !Buffer.from(was).equals(held.account.data)) continue;
      expect(held.account.data).toBe(was);
      kept++;
    }
    expect(kept).toBeGreaterThan(0);
    expect(r.stream.stats.unchangedBytes).toBe(kept);
    expect(heldEqualsChain(r)).toBe(true);
  });

  it('resubscribes live and heals over RPC when from_slot is older than the server keeps', async () => {
    const r = await rig({ historySlots: 2 });
    await subscribed(r);
    r.server.disconnectAll();
    r.chain.advanceSlot(4); // the slot it resumes from leaves the server's two-slot history
    await until(() => r.stream.stats.connects === 3 && r.server.stats().subscribers === 1, 'the refused resume and the live resubscribe');
    await r.stream.idle();
    expect(r.reads).toEqual([r.accounts]);
    const last = r.chain.advanceSlot();
    await until(() => r.stream.slot >= last, 'a live slot');
    expect(heldEqualsChain(r)).toBe(true);
  });

  it('streams the direct writes of a pool created between slots', async () => {
    const r = await rig();
    await subscribed(r);
    const tokens = r.chain.pools()[0]!.pool;
    const info = r.chain.createPool({ dex: 'dexa_amm', tokenA: tokens.tokenA, tokenB: tokens.tokenB });
    r.stream.setAccounts([...r.accounts, info.address]);
    const last = r.chain.advanceSlot();
    await until(() => r.stream.slot >= last, 'the next slot');
    // The new filter reaches the server on its own time: a write before it is not the stream's.
    await until(() => r.server.stats().filteredAccounts === r.accounts.length + 1, 'the new filter on the server');
    r.chain.closePool(info.address);
    await until(() => r.updates.some((u) => u.address === info.address && u.account === null), 'the closed pool');
  });

  it('answers a ping with a pong', async () => {
    const r = await rig();
    await subscribed(r);
    r.stream.ping();
    await until(() => r.stream.stats.pongs === 1, 'the pong');
  });

  it('is refused without the right x-token', async () => {
    const r = await rig({ xToken: 'secret', clientToken: 'wrong' });
    r.stream.start();
    await until(() => r.stream.stats.disconnects === 1, 'the refusal');
    expect(r.server.stats().subscribers).toBe(0);
    expect(r.stream.connected).toBe(false);
  });
});
