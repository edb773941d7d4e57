/**
 * The parse worker (a Piscina task module; Piscina loads the compiled dist/ file). One task per
 * worker runs for the life of the pool: it drains its input ring synchronously, parses each entry
 * batch with `parseEntries` into a reused EntryBatchIndex, keeps the transactions with a monitored
 * pool key among their static keys, and writes one compact result record per batch into its
 * results ring. Nothing on this path is structured-cloned: batches and results cross the thread
 * boundary as bytes in SharedArrayBuffer rings (one copy each way), monitored keys through the
 * key table (key-table.ts), counters as Int32 words. The task returns (one structured-clone
 * message) only when the pool closes the input ring.
 *
 * Results are built in a local scratch buffer and copied into the results ring (small: 24 bytes
 * plus 80 per match, against the batch's tens of kilobytes parsed in place). When the results ring
 * is full the result is dropped and counted (WS_RESULT_DROPS): a worker never blocks on the pool's
 * thread. A batch that does not parse yields a result with its status and no matches.
 */
import { EntryBatchIndex } from '../chain/entry-batch-index.js';
import { parseEntries } from '../chain/native-parser.js';
import { ParseStatus, PUBKEY_BYTES } from '../chain/parse-layout.js';
import { ByteRingReader, ByteRingWriter } from './byte-ring.js';
import { KeyTableReader } from './key-table.js';
import {
  BELL_SIGNAL,
  BELL_WAITING,
  BELL_WORDS,
  MATCH_KEY_INDEX,
  MATCH_POOL,
  MATCH_SIG_OFFSET,
  MATCH_SIGNATURE,
  MATCH_STRIDE,
  MATCH_TX,
  RES_ENTRY_COUNT,
  RES_ERROR_OFFSET,
  RES_HEADER_WORDS,
  RES_KEYS_VERSION,
  RES_MATCH_COUNT,
  RES_STATUS,
  RES_TX_COUNT,
  SIGNATURE_WORDS,
  WS_BATCHES,
  WS_KEY_RELOADS,
  WS_MATCHES,
  WS_PARSE_ERRORS,
  WS_RESULT_DROPS,
  WS_TXS,
  WS_WORDS,
} from './match-layout.js';

export interface DrainTask {
  input: SharedArrayBuffer;
  output: SharedArrayBuffer;
  keys: SharedArrayBuffer;
  stats: SharedArrayBuffer;
  bell: SharedArrayBuffer;
}

export interface DrainSummary {
  batches: number;
  txs: number;
  matches: number;
  parseErrors: number;
  resultDrops: number;
  keyReloads: number;
  parser: string;
}

/** How long a parked worker sleeps before re-checking (it is woken at once by data or close). */
const IDLE_WAIT_MS = 1_000;

function bump(stats: Int32Array, word: number, by: number): void {
  Atomics.store(stats, word, (stats[word]! + by) | 0);
}

export default function drain(task: DrainTask): DrainSummary {
  const input = new ByteRingReader(task.input);
  const output = new ByteRingWriter(task.output);
  const keyTable = new KeyTableReader(task.keys);
  const stats = new Int32Array(task.stats, 0, WS_WORDS);
  const bell = new Int32Array(task.bell, 0, BELL_WORDS);
  const index = new EntryBatchIndex();
  let scratch = new Uint32Array(RES_HEADER_WORDS + 64 * MATCH_STRIDE);
  let scratchBytes = new Uint8Array(scratch.buffer);

  for (;;) {
    const closed = input.closed; // read before tryRead: all records written before close are visible
    const record = input.tryRead();
    if (record === null) {
      if (closed) break;
      input.waitForData(IDLE_WAIT_MS);
      continue;
    }
    if (keyTable.refresh()) bump(stats, WS_KEY_RELOADS, 1);
    const keys = keyTable.keys;
    const poolOf = keyTable.poolOf;
    const bytes = record.payload;
    const status = index.parse(bytes, parseEntries);
    const txCount = status === ParseStatus.Ok ? index.txCount : 0;
    let matches = 0;
    for (let tx = 0; tx < txCount; tx++) {
      const keyCount = index.keyCount(tx);
      let at = index.keyOffset(tx, 0);
      for (let k = 0; k < keyCount; k++, at += PUBKEY_BYTES) {
        const id = keys.idAt(bytes, at);
        if (id < 0) continue;
        let w = RES_HEADER_WORDS + matches * MATCH_STRIDE;
        if (w + MATCH_STRIDE > scratch.length) {
          const grown = new Uint32Array(scratch.length * 2);
          grown.set(scratch);
          scratch = grown;
          scratchBytes = new Uint8Array(scratch.buffer);
        }
        const sig = index.signatureOffset(tx);
        scratch[w + MATCH_TX] = tx;
        scratch[w + MATCH_POOL] = poolOf[id]!;
        scratch[w + MATCH_KEY_INDEX] = k;
        scratch[w + MATCH_SIG_OFFSET] = sig;
        w = (w + MATCH_SIGNATURE) * 4;
        for (let b = 0; b < SIGNATURE_WORDS * 4; b++) scratchBytes[w + b] = bytes[sig + b]!;
        matches++;
      }
    }
    scratch[RES_STATUS] = status;
    scratch[RES_TX_COUNT] = txCount;
    scratch[RES_ENTRY_COUNT] = status === ParseStatus.Ok ? index.entryCount : 0;
    scratch[RES_MATCH_COUNT] = matches;
    scratch[RES_KEYS_VERSION] = keyTable.version;
    scratch[RES_ERROR_OFFSET] = status === ParseStatus.Ok ? 0 : index.errorOffset;
    const resultBytes = scratchBytes.subarray(0, (RES_HEADER_WORDS + matches * MATCH_STRIDE) * 4);
    const written = output.tryWriteSlotWords(record.slotLo, record.slotHi, record.receivedAt, resultBytes);
    input.release(); // the batch bytes are no longer needed: give the space back before anything else

    bump(stats, WS_BATCHES, 1);
    bump(stats, WS_TXS, txCount);
    bump(stats, WS_MATCHES, matches);
    if (status !== ParseStatus.Ok) bump(stats, WS_PARSE_ERRORS, 1);
    if (!written) bump(stats, WS_RESULT_DROPS, 1);
    // Same protocol as ByteRingWriter.tryWrite's wake-up, on the pool-wide doorbell.
    else if (Atomics.load(bell, BELL_WAITING) !== 0) {
      Atomics.add(bell, BELL_SIGNAL, 1);
      Atomics.notify(bell, BELL_SIGNAL);
    }
  }
  output.close();
  Atomics.add(bell, BELL_SIGNAL, 1);
  Atomics.notify(bell, BELL_SIGNAL);
  return {
    batches: stats[WS_BATCHES]! >>> 0,
    txs: stats[WS_TXS]! >>> 0,
    matches: stats[WS_MATCHES]! >>> 0,
    parseErrors: stats[WS_PARSE_ERRORS]! >>> 0,
    resultDrops: stats[WS_RESULT_DROPS]! >>> 0,
    keyReloads: stats[WS_KEY_RELOADS]! >>> 0,
    parser: parseEntries.name,
  };
}
