import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Prng } from '../prng.js';
import { ByteRingWriter, byteRingStats, createByteRing } from './byte-ring.js';
import { RecordChecksum } from './testing/ring-checksum.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/threads/testing/ring-consumer-worker.js');
const built = existsSync(workerFile);

interface ConsumerResult {
  count: number;
  bytes: number;
  hash: number;
  waits: number;
}

function startConsumer(ring: SharedArrayBuffer, holdBack: boolean): { go: () => void; done: Promise<ConsumerResult> } {
  const control = new SharedArrayBuffer(4);
  const flag = new Int32Array(control);
  if (!holdBack) flag[0] = 1;
  const worker = new Worker(workerFile, { workerData: { ring, control } });
  const done = new Promise<ConsumerResult>((resolveDone, reject) => {
    worker.once('message', (m: ConsumerResult) => {
      resolveDone(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  return {
    go: () => {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    },
    done,
  };
}

/** Payloads of 0..2 KiB cut from one random pool (generating 100k random arrays would dominate). */
function payloads(seed: number): { pool: Uint8Array; at: (i: number) => Uint8Array } {
  const prng = new Prng(seed);
  const pool = prng.bytes(1 << 20);
  const offsets = new Uint32Array(4096);
  const lengths = new Uint32Array(4096);
  for (let i = 0; i < 4096; i++) {
    lengths[i] = prng.range(0, 2048);
    offsets[i] = prng.int(pool.length - 2048);
  }
  return { pool, at: (i) => pool.subarray(offsets[i & 4095]!, offsets[i & 4095]! + lengths[i & 4095]!) };
}

const RECORDS = 100_000;

describe.skipIf(!built)('ByteRing across threads (consumer in a worker from dist/)', () => {
  it('moves 100k records to a consumer that keeps up, with no loss and a matching checksum', async () => {
    const sab = createByteRing(1 << 18);
    const writer = new ByteRingWriter(sab);
    const consumer = startConsumer(sab, false);
    const { at } = payloads(7);
    const sum = new RecordChecksum();
    let spins = 0;
    const started = performance.now();
    for (let i = 0; i < RECORDS; i++) {
      const payload = at(i);
      // Keeping up is the consumer's job; the test only waits for room instead of dropping so it
      // can check that nothing is lost. tryWrite itself is never retried after a refusal.
      while (!writer.fits(payload.length)) spins++;
      const slot = 300_000_000 + i;
      expect(writer.tryWrite(slot, i, payload)).toBe(true);
      sum.add(slot >>> 0, 0, i, payload);
    }
    writer.close();
    const got = await consumer.done;
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `ring: ${RECORDS} records, ${(sum.bytes / 2 ** 20).toFixed(1)} MiB in ${(seconds * 1000).toFixed(0)} ms ` +
        `(${Math.round(RECORDS / seconds)} records/s, ${(sum.bytes / 2 ** 20 / seconds).toFixed(0)} MiB/s; ` +
        `producer spins on full ${spins}, consumer waits ${got.waits})`,
    );
    expect(got).toMatchObject({ count: RECORDS, bytes: sum.bytes, hash: sum.hash });
    expect(byteRingStats(sab)).toMatchObject({ written: RECORDS, read: RECORDS, dropped: 0, usedBytes: 0 });
  });

  it('drops and counts what does not fit while the consumer does not keep up, and delivers the rest intact', async () => {
    const sab = createByteRing(1 << 16);
    const writer = new ByteRingWriter(sab);
    const consumer = startConsumer(sab, true); // held back: nothing is consumed while we write
    const { at } = payloads(11);
    const sum = new RecordChecksum();
    let accepted = 0;
    let droppedBytes = 0;
    for (let i = 0; i < RECORDS; i++) {
      const payload = at(i);
      if (writer.tryWrite(i, i, payload)) {
        sum.add(i, 0, i, payload);
        accepted++;
      } else {
        droppedBytes += payload.length;
      }
    }
    expect(accepted).toBeGreaterThan(0);
    expect(byteRingStats(sab)).toMatchObject({ written: accepted, dropped: RECORDS - accepted, droppedBytes });
    consumer.go();
    // A second wave once the consumer runs: whatever is accepted now must arrive too.
    for (let i = RECORDS; i < RECORDS + 1000; i++) {
      const payload = at(i);
      if (writer.tryWrite(i, i, payload)) {
        sum.add(i, 0, i, payload);
        accepted++;
      }
    }
    writer.close();
    const got = await consumer.done;
    expect(got).toMatchObject({ count: accepted, bytes: sum.bytes, hash: sum.hash });
    const stats = byteRingStats(sab);
    expect(stats.written + stats.dropped).toBe(RECORDS + 1000);
    expect(stats.read).toBe(accepted);
  });
});
