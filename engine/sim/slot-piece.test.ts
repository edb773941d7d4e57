import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';

import { base58, EntryBatchIndex } from '../chain/index.js';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/logger.js';
import { loadGeyserProto } from '../proto.js';
import type { PendingBundle } from './block-producer.js';
import { SimChain, SLOT_PIECES } from './chain.js';
import type { EntryBatch } from './chain-backend.js';
import { TICKS_PER_SLOT } from './known-accounts.js';
import { simSchema } from './sim-config.js';
import type { SimTransaction } from './sim-transaction.js';
import { createSimulator, type Simulator } from './simulator.js';
import { planPiece, takeTicksDue, type Submitted } from './slot-piece.js';

/**
 * A piece of a slot runs batch by batch: each batch is recorded and sent as it is done, and a
 * running chain yields to its event loop between batches, so a transaction's account writes leave
 * and RPC reads are answered while the rest of its piece is still to run.
 */

const submitted = (n: number): Submitted[] => Array.from({ length: n }, (_, i) => ({ tx: { signatureKey: `s${i}` } as SimTransaction, verified: true }));
const bundle = (id: string, n: number): PendingBundle => ({ id, txs: Array.from({ length: n }, () => ({}) as SimTransaction), signatures: [] });

describe('planPiece', () => {
  it('cuts bundles, submitted and generated transactions into batches of up to txsPerEntry, in order', () => {
    const work = planPiece([bundle('a', 3), bundle('b', 6)], submitted(2), 20, 8, 4);
    expect(work.batches.map((b) => [b.bundles.map((x) => x.id), b.submitted.length, b.generated])).toEqual([
      [['a'], 0, 0],
      [['b'], 2, 0],
      [[], 0, 8],
      [[], 0, 8],
      [[], 0, 4],
    ]);
    expect(work.planned).toBe(31);
    expect(planPiece([bundle('big', 5)], [], 0, 2, 4).batches.map((b) => b.size)).toEqual([5]);
  });

  it('spreads the piece ticks over its batches and ends with the last of them', () => {
    const work = planPiece([], [], 20, 8, 4);
    const due: number[] = [];
    for (const batch of work.batches) {
      work.next++;
      work.done += batch.size;
      due.push(takeTicksDue(work));
    }
    expect(due).toEqual([1, 2, 1]);
    const empty = planPiece([], [], 0, 8, 4);
    empty.next++;
    expect(takeTicksDue(empty)).toBe(4);
  });
});

describe('a slot made batch by batch', () => {
  it('records every transaction of the flow in entries of up to txsPerEntry, a slot of TICKS_PER_SLOT ticks ending with one', () => {
    const chain = new SimChain({ seed: 4, manual: true, txRate: 2000, tokens: 2, poolsPerKind: 1, txsPerEntry: 8 });
    const batches: EntryBatch[] = [];
    chain.onEntries((b) => batches.push(b));
    chain.advanceSlot(2);
    // Transactions of each entry of slot 2, in order (0: a tick).
    const entries: number[] = [];
    const index = new EntryBatchIndex();
    for (const b of batches.filter((x) => x.slot === 2n)) {
      index.parse(b.entries);
      for (let e = 0; e < index.entryCount; e++) entries.push(index.entryTxCount(e));
    }
    expect(entries.filter((n) => n === 0).length).toBe(TICKS_PER_SLOT);
    expect(entries.at(-1)).toBe(0);
    expect(Math.max(...entries)).toBe(8);
    expect(entries.reduce((n, e) => n + e, 0)).toBe(800);
  });

  it('makes the same entries on the running clock as advanceSlot() makes', async () => {
    const settings = { seed: 8, txRate: 4000, slotMs: 80, tokens: 2, poolsPerKind: 1 };
    const record = (chain: SimChain): Map<bigint, Buffer[]> => {
      const bySlot = new Map<bigint, Buffer[]>();
      chain.onEntries((b) => bySlot.set(b.slot, [...(bySlot.get(b.slot) ?? []), Buffer.from(b.entries)]));
      return bySlot;
    };
    const running = new SimChain(settings);
    const manual = new SimChain({ ...settings, manual: true });
    const ran = record(running);
    const made = record(manual);
    running.start();
    await until(() => running.slot() >= 3n);
    running.stop();
    manual.advanceSlot(3);
    for (const slot of [1n, 2n, 3n]) {
      expect(ran.get(slot)!.length).toBeGreaterThan(SLOT_PIECES);
      expect(Buffer.concat(ran.get(slot)!).equals(Buffer.concat(made.get(slot)!))).toBe(true);
    }
  });
});

describe('the running chain between batches', () => {
  let chain: SimChain | undefined;
  let sim: Simulator | undefined;
  afterEach(async () => {
    chain?.stop();
    chain = undefined;
    await sim?.close();
    sim = undefined;
  });

  it("sends what the slot's last batch wrote before it commits the slot", async () => {
    // A quiet chain (no flow): the last batch of a slot is its last ticks. A write queued by it (as
    // the Geyser and entry streams queue their HTTP/2 frames, for the next check phase) must go out
    // while the slot is still uncommitted; the commit's work comes after it.
    chain = new SimChain({ seed: 6, txRate: 0, slotMs: 80, tokens: 2, poolsPerKind: 1 });
    const c = chain;
    const seen: { slot: bigint; committedBeforeWrite: boolean }[] = [];
    c.onEntries((batch) => {
      const slot = batch.slot;
      // The slot's last entries: the commit follows them.
      if (c.stats().pieces % SLOT_PIECES !== SLOT_PIECES - 1) return;
      setImmediate(() => seen.push({ slot, committedBeforeWrite: c.slot('processed') >= slot }));
    });
    c.start();
    await until(() => seen.length >= 3);
    c.stop();
    for (const s of seen) expect(s, `slot ${s.slot}`).toMatchObject({ committedBeforeWrite: false });
    // And the slot is committed right after, at that same check phase.
    expect(c.slot('processed')).toBeGreaterThanOrEqual(seen[2]!.slot);
  });

  it('spreads every slot over its interval, the slot after a commit too, piece by piece', async () => {
    // A quiet chain: each piece sends its ticks. Its pieces are due slotMs / SLOT_PIECES apart; a
    // slot whose commit waited for the check phase must not push the next slot's first piece a
    // whole slot later (its other pieces then overdue, run in one burst).
    const slotMs = 320;
    chain = new SimChain({ seed: 6, txRate: 0, slotMs, tokens: 2, poolsPerKind: 1 });
    const c = chain;
    const sent = new Map<bigint, number[]>();
    c.onEntries((batch) => sent.set(batch.slot, [...(sent.get(batch.slot) ?? []), performance.now()]));
    c.start();
    await until(() => c.slot('processed') >= 4n);
    c.stop();
    for (const slot of [2n, 3n, 4n]) {
      const times = sent.get(slot)!;
      expect(times.length, `slot ${slot}`).toBeGreaterThanOrEqual(SLOT_PIECES);
      // Its first and last pieces are 15 piece intervals apart (a burst takes a few milliseconds).
      expect(times.at(-1)! - times[0]!, `slot ${slot}`).toBeGreaterThan(slotMs / 2);
    }
  });

  it("gives its event loop a turn after a piece's first batch, before the piece's last transaction runs", async () => {
    // 100 transactions a piece: 13 batches of 8.
    chain = new SimChain({ seed: 5, txRate: 4000, slotMs: 400, tokens: 2, poolsPerKind: 1, txsPerEntry: 8 });
    const c = chain;
    const turns: { piece: number; transactions: number; sameTurnLater: { piece: number; transactions: number } | undefined }[] = [];
    let lastPiece = -1;
    c.onAccountWrites((_writes, _slot, signature) => {
      const { pieces, transactions } = c.stats();
      if (signature === undefined || pieces === lastPiece || turns.length >= 5) return;
      lastPiece = pieces; // the first transaction of a piece
      const turn = { piece: pieces, transactions, sameTurnLater: undefined as { piece: number; transactions: number } | undefined };
      turns.push(turn);
      setImmediate(() => {
        turn.sameTurnLater = { piece: c.stats().pieces, transactions: c.stats().transactions };
      });
    });
    c.start();
    await until(() => turns.length >= 5 && turns.every((t) => t.sameTurnLater !== undefined));
    c.stop();
    for (const t of turns) {
      // The next check phase came before the piece was done, at most a batch later.
      expect(t.sameTurnLater!.piece).toBe(t.piece);
      expect(t.sameTurnLater!.transactions - t.transactions).toBeLessThanOrEqual(8);
    }
  });

  it("streams a piece's first transaction's writes to a Geyser subscriber and answers an RPC read before the piece ends", async () => {
    const config = loadConfig(simSchema, {
      env: {},
      flags: { seed: '7', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '6000', 'slot-ms': '400', tokens: '2', 'pools-per-kind': '1', 'txs-per-entry': '8' },
    }).values;
    sim = createSimulator(config, { logger: createLogger({ name: 'sim-test', level: 'silent' }) });
    const s = sim;
    const endpoints = await s.start();
    // The first transaction of each piece (150 a piece: 19 batches), and the piece it ran in.
    const firsts = new Map<string, number>();
    const rpcAnswers: { asked: number; answered?: number }[] = [];
    let lastPiece = -1;
    // From the stream's first update on: before it, the subscription is still being set up (the
    // connection, the client's first decode), which is not what this measures.
    let streaming = false;
    s.chain.onAccountWrites((_writes, _slot, signature) => {
      const pieces = s.chain.stats().pieces;
      if (!streaming || signature === undefined || pieces === lastPiece) return;
      lastPiece = pieces;
      if (firsts.size < 20) firsts.set(base58.encode(signature), pieces);
      if (rpcAnswers.length < 5) {
        const answer: { asked: number; answered?: number } = { asked: pieces };
        rpcAnswers.push(answer);
        void fetch(endpoints.rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' })
          .then((r) => r.json())
          .then(() => {
            answer.answered = s.chain.stats().pieces;
          });
      }
    });
    const client = new (loadGeyserProto().Geyser)(endpoints.geyser, grpc.credentials.createInsecure());
    const call = client['Subscribe']!() as grpc.ClientDuplexStream<unknown, { account?: { account: { txn_signature?: Buffer } } }>;
    call.on('error', () => {});
    const seen: { piece: number; when: number }[] = [];
    call.on('data', (update) => {
      streaming = true;
      const signature = update.account?.account.txn_signature;
      if (signature === undefined || signature.length === 0) return;
      const piece = firsts.get(base58.encode(signature));
      if (piece === undefined) return;
      firsts.delete(base58.encode(signature));
      seen.push({ piece, when: s.chain.stats().pieces });
    });
    call.write({ accounts: { all: {} } });
    await until(() => seen.length >= 5 && rpcAnswers.length >= 5 && rpcAnswers.every((a) => a.answered !== undefined));
    call.cancel();
    client.close();
    // Each arrived while the piece of the transaction (of the request) was still being made.
    for (const { piece, when } of seen) expect(when).toBe(piece);
    for (const { asked, answered } of rpcAnswers) expect(answered).toBe(asked);
  });
});

/** Waits until `condition` holds, polling; fails after 30 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
