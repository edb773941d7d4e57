/**
 * `scanner`: how entry batches cross to the parse workers.
 * - ring: 1 KiB records through a ByteRing (SharedArrayBuffer, one copy) to a worker thread,
 *   beside postMessage of the same payloads (structured clone) in the same run.
 * - parse pool: mainnet-like batches (400 transactions, 20% touching 50 monitored pools) through
 *   ParsePool (ring in, Piscina workers parse and match, results ring out), beside the same parse
 *   and match on the main thread alone. On a 2-core box the pool's producer shares the cores.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EntryBatchIndex } from '../../engine/chain/entry-batch-index.js';
import { KeySet } from '../../engine/chain/key-set.js';
import { parseEntries } from '../../engine/chain/native-parser.js';
import { PUBKEY_BYTES } from '../../engine/chain/parse-layout.js';
import { generateMainnetMix } from '../../engine/chain/testing/mainnet-mix.js';
import { Prng } from '../../engine/prng.js';
import { ByteRingWriter, createByteRing } from '../../engine/threads/byte-ring.js';
import { ParsePool } from '../../engine/scanner/parse-pool.js';
import type { Figure, Suite } from '../harness.js';

const consumerFile = fileURLToPath(new URL('./scanner-worker.js', import.meta.url));
const parseWorkerFile = fileURLToPath(new URL('../../engine/scanner/parse-worker.js', import.meta.url));

/** No progress for this long: the suite fails with what it saw instead of waiting for its time limit. */
const STALL_MS = 30_000;

interface Summary {
  records: number;
  bytes: number;
}

/**
 * The consumer thread, once it consumes (`ready`: its first message), and its summary (`done`).
 * The producer must not start before `ready`: the ring producer spins on the main thread, and a
 * worker still starting (a loaded box) then never drains the ring.
 */
async function consumer(workerData: unknown): Promise<{ worker: Worker; done: Promise<Summary> }> {
  const worker = new Worker(consumerFile, { workerData });
  let ready: () => void = () => undefined;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    worker.once('error', reject);
  });
  const done = new Promise<Summary>((resolve, reject) => {
    worker.on('message', (m: Summary | 'ready') => (m === 'ready' ? ready() : resolve(m)));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`scanner bench consumer exited (${code}) before its summary`)));
  });
  done.catch(() => undefined); // awaited by the caller; a failure before `ready` throws from here
  await started;
  return { worker, done };
}

async function ringRate(records: number, payload: Uint8Array): Promise<number> {
  const ring = createByteRing(1 << 22);
  const { worker, done } = await consumer({ mode: 'ring', ring });
  const writer = new ByteRingWriter(ring);
  const started = performance.now();
  for (let i = 0; i < records; i++) {
    // Spins while the consumer drains; a consumer that stopped draining fails the suite, named.
    for (let spins = 0; !writer.fits(payload.length); spins++) {
      if ((spins & 0xfffff) === 0xfffff && performance.now() - started > STALL_MS) {
        await worker.terminate();
        throw new Error(`ring consumer stopped draining: ${i} of ${records} records written in ${STALL_MS / 1000} s`);
      }
    }
    writer.tryWrite(i, started, payload);
  }
  writer.close();
  const got = await done;
  const seconds = (performance.now() - started) / 1000;
  await worker.terminate();
  if (got.records !== records) throw new Error(`ring lost records: ${got.records} of ${records}`);
  return records / seconds;
}

async function messageRate(records: number, payload: Uint8Array): Promise<number> {
  const { worker, done } = await consumer({ mode: 'message', count: records });
  const started = performance.now();
  for (let i = 0; i < records; i++) worker.postMessage(payload);
  await done;
  const seconds = (performance.now() - started) / 1000;
  await worker.terminate();
  return records / seconds;
}

async function poolRate(batches: Uint8Array[], keys: Uint8Array[], txPerBatch: number, count: number): Promise<{ txPerSecond: number; resultDrops: number }> {
  const pool = new ParsePool({ workers: 2, keys, filename: parseWorkerFile });
  pool.start();
  await new Promise((r) => setTimeout(r, 200));
  let submitted = 0;
  let seen = 0;
  const started = performance.now();
  let progressAt = started;
  // A worker whose results ring is full drops that batch's result and counts it (it never blocks
  // on this thread): every batch is answered by a result or by a counted drop.
  let dropped = 0;
  while (seen + dropped < count) {
    // Results are drained between submissions, as the scanner's thread does between entry batches.
    let drained = pool.drainResults(() => {});
    while (submitted < count && pool.submit(submitted, 0, batches[submitted % batches.length]!)) {
      submitted++;
      drained += pool.drainResults(() => {});
    }
    seen += drained;
    const droppedNow = pool.statistics().resultDrops;
    const now = performance.now();
    if (drained > 0 || droppedNow > dropped) progressAt = now;
    else if (now - progressAt > STALL_MS) {
      await pool.close();
      throw new Error(`parse pool stopped answering: ${seen} of ${count} batches parsed, ${dropped} results dropped, none for ${STALL_MS / 1000} s`);
    }
    dropped = droppedNow;
    if (seen + dropped < count) await pool.waitForResults(100);
  }
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { txPerSecond: (count * txPerBatch) / seconds, resultDrops: dropped };
}

function mainThreadRate(batches: Uint8Array[], keys: Uint8Array[], txPerBatch: number, count: number): number {
  const set = new KeySet();
  for (const k of keys) set.add(k);
  const index = new EntryBatchIndex();
  let matches = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const bytes = batches[i % batches.length]!;
    index.parse(bytes, parseEntries);
    for (let tx = 0; tx < index.txCount; tx++) {
      const n = index.keyCount(tx);
      let at = index.keyOffset(tx, 0);
      for (let k = 0; k < n; k++, at += PUBKEY_BYTES) if (set.idAt(bytes, at) >= 0) matches++;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  if (matches === 0) throw new Error('no matches');
  return (count * txPerBatch) / seconds;
}

export const scannerSuite: Suite = {
  name: 'scanner',
  description: 'entry batches to parse workers: SAB ring vs postMessage; parse pool vs main-thread parse',
  async run(): Promise<Figure[]> {
    const payload = new Uint8Array(1024).fill(7);
    const records = 200_000;
    const message = await messageRate(records, payload);
    const ring = await ringRate(records, payload);

    const prng = new Prng(1);
    const keys = Array.from({ length: 50 }, () => prng.bytes(PUBKEY_BYTES));
    const mixes = Array.from({ length: 32 }, (_, i) => generateMainnetMix({ seed: i, transactions: 400, poolKeys: keys }));
    const batches = mixes.map((m) => m.bytes);
    const count = 3_200;
    const alone = mainThreadRate(batches, keys, 400, count);
    const pooled = await poolRate(batches, keys, 400, count);
    return [
      {
        name: 'ring, 1 KiB records to a worker',
        unit: 'records/s',
        value: ring,
        higherIsBetter: true,
        baseline: { name: 'postMessage (structured clone)', value: message },
      },
      {
        name: 'parse pool, 2 workers (400-tx batches)',
        unit: 'tx/s',
        value: pooled.txPerSecond,
        higherIsBetter: true,
        baseline: { name: 'parse + match on the main thread', value: alone },
        note: `batch ${Math.round(batches.reduce((s, b) => s + b.length, 0) / batches.length / 1024)} KiB; parser ${parseEntries.name}; ${pooled.resultDrops} of ${count} results dropped (results ring full while this thread submitted)`,
      },
    ];
  },
};
