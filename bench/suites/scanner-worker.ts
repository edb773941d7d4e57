/**
 * Consumer thread of the scanner suite: `ring` drains a ByteRing until it is closed; `message`
 * counts structured-clone messages (the baseline). Both post `ready` once they consume, and one
 * summary when done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ByteRingReader } from '../../engine/threads/byte-ring.js';

const data = workerData as { mode: 'ring'; ring: SharedArrayBuffer } | { mode: 'message'; count: number };
if (data.mode === 'ring') {
  const reader = new ByteRingReader(data.ring);
  parentPort!.postMessage('ready');
  let records = 0;
  let bytes = 0;
  for (;;) {
    const closed = reader.closed;
    const rec = reader.tryRead();
    if (rec !== null) {
      records++;
      bytes += rec.payload[0]! + rec.payload.length;
      continue;
    }
    if (closed) break;
    reader.waitForData(1_000);
  }
  parentPort!.postMessage({ records, bytes });
} else {
  let records = 0;
  let bytes = 0;
  parentPort!.on('message', (m: Uint8Array) => {
    records++;
    bytes += m[0]! + m.length;
    if (records === data.count) parentPort!.postMessage({ records, bytes });
  });
  parentPort!.postMessage('ready');
}
