/**
 * A worker_threads consumer for the two-thread ring tests (run from dist/): waits until
 * `control[0]` is non-zero (so a test can hold it back and fill the ring), then drains the ring
 * with waitForData/tryRead until the producer closes it, and posts the RecordChecksum.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ByteRingReader } from '../byte-ring.js';
import { RecordChecksum } from './ring-checksum.js';

const { ring, control } = workerData as { ring: SharedArrayBuffer; control: SharedArrayBuffer };
const go = new Int32Array(control);
while (Atomics.load(go, 0) === 0) Atomics.wait(go, 0, 0, 1_000);

const reader = new ByteRingReader(ring);
const sum = new RecordChecksum();
let waits = 0;
for (;;) {
  const closed = reader.closed; // before tryRead: records written before close are then visible
  const rec = reader.tryRead();
  if (rec !== null) {
    sum.add(rec.slotLo, rec.slotHi, rec.receivedAt, rec.payload);
    continue;
  }
  if (closed) break;
  waits++;
  reader.waitForData(1_000);
}
parentPort!.postMessage({ count: sum.count, bytes: sum.bytes, hash: sum.hash, waits });
