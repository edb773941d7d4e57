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
 * A v0 transaction's accounts loaded through address lookup tables are settled against the shared
 * lookup directory (lookup-resolver.ts): its monitored pools become matches flagged
 * MATCH_VIA_LOOKUP, or, when a table or an index is not known yet, the transaction becomes an
 * unresolved record with a copy of its lookups, which the pool's thread resolves by RPC
 * (lookup-matcher.ts) and writes into the directory for the transactions that follow.
 *
 * Results are built in a local scratch buffer (result-builder.ts) and copied into the results
 * ring (small: 32 bytes plus 84 per match and ~100-200 per unresolved transaction, against the
 * batch's tens of kilobytes parsed in place). When the results ring is full the result is dropped
 * and counted (WS_RESULT_DROPS): a worker never blocks on the pool's thread. A batch that does not
 * parse yields a result with its status and no matches.
 */
import { EntryBatchIndex } from '../chain/index.js';
import { parseEntries } from '../chain/index.js';
import { ParseStatus, PUBKEY_BYTES } from '../chain/index.js';
import { ByteRingReader, ByteRingWriter } from '../threads/index.js';
import { KeyTableReader } from './key-table.js';
import { LookupDirectoryReader } from './lookup-directory.js';
import { LookupOutcome, LookupResolver } from './lookup-resolver.js';
import {
  BELL_SIGNAL,
  BELL_WAITING,
  BELL_WORDS,
  WS_BATCHES,
  WS_KEY_RELOADS,
  WS_LOOKUP_MATCHES,
  WS_LOOKUP_REFUSED,
  WS_LOOKUP_RESOLVED,
  WS_LOOKUP_TXS,
  WS_MATCHES,
  WS_PARSE_ERRORS,
  WS_RESULT_DROPS,
  WS_TXS,
  WS_UNRESOLVED,
  WS_WORDS,
} from './match-layout.js';
import { ResultBuilder } from './result-builder.js';

export interface DrainTask {
  input: SharedArrayBuffer;
  output: SharedArrayBuffer;
  keys: SharedArrayBuffer;
  /** The lookup directory (lookup-directory.ts). */
  lookups: SharedArrayBuffer;
  /** Settle address-table lookups (default true); false: static keys only, no unresolved records. */
  resolveLookups?: boolean;
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
  lookupTxs: number;
  lookupResolved: number;
  lookupMatches: number;
  unresolved: number;
  lookupRefused: number;
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
  const resolver = task.resolveLookups === false ? null : new LookupResolver(new LookupDirectoryReader(task.lookups));
  const stats = new Int32Array(task.stats, 0, WS_WORDS);
  const bell = new Int32Array(task.bell, 0, BELL_WORDS);
  const index = new EntryBatchIndex();
  const out = new ResultBuilder();

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
    const keysVersion = keyTable.version;
    const bytes = record.payload;
    const status = index.parse(bytes, parseEntries);
    const txCount = status === ParseStatus.Ok ? index.txCount : 0;
    out.reset();
    let lookupTxs = 0;
    let lookupResolved = 0;
    let lookupMatches = 0;
    let lookupRefused = 0;
    for (let tx = 0; tx < txCount; tx++) {
      const keyCount = index.keyCount(tx);
      let at = index.keyOffset(tx, 0);
      for (let k = 0; k < keyCount; k++, at += PUBKEY_BYTES) {
        const id = keys.idAt(bytes, at);
        if (id >= 0) out.addMatch(bytes, tx, poolOf[id]!, k, index.signatureOffset(tx), 0);
      }
      if (resolver === null || index.lookupCount(tx) === 0) continue; // legacy messages have none
      lookupTxs++;
      const outcome = resolver.resolve(index, tx, keysVersion, out);
      if (outcome === LookupOutcome.Resolved) {
        lookupResolved++;
        lookupMatches += resolver.found;
      } else if (outcome === LookupOutcome.Refused) lookupRefused++;
    }
    const ok = status === ParseStatus.Ok;
    const matches = out.matchCount;
    const unresolved = out.unresolvedCount;
    let ticks = 0;
    if (ok) for (let e = 0; e < index.entryCount; e++) if (index.entryTxCount(e) === 0) ticks++;
    const resultBytes = out.finish(status, txCount, ok ? index.entryCount : 0, ticks, keysVersion, ok ? 0 : index.errorOffset);
    const written = output.tryWriteSlotWords(record.slotLo, record.slotHi, record.receivedAt, resultBytes);
    input.release(); // the batch bytes are no longer needed: give the space back before anything else

    bump(stats, WS_BATCHES, 1);
    bump(stats, WS_TXS, txCount);
    bump(stats, WS_MATCHES, matches);
    if (lookupTxs > 0) {
      bump(stats, WS_LOOKUP_TXS, lookupTxs);
      bump(stats, WS_LOOKUP_RESOLVED, lookupResolved);
      bump(stats, WS_LOOKUP_MATCHES, lookupMatches);
      bump(stats, WS_UNRESOLVED, unresolved);
      bump(stats, WS_LOOKUP_REFUSED, lookupRefused);
    }
    if (!ok) bump(stats, WS_PARSE_ERRORS, 1);
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
  const total = (word: number): number => stats[word]! >>> 0;
  return {
    batches: total(WS_BATCHES),
    txs: total(WS_TXS),
    matches: total(WS_MATCHES),
    parseErrors: total(WS_PARSE_ERRORS),
    resultDrops: total(WS_RESULT_DROPS),
    keyReloads: total(WS_KEY_RELOADS),
    lookupTxs: total(WS_LOOKUP_TXS),
    lookupResolved: total(WS_LOOKUP_RESOLVED),
    lookupMatches: total(WS_LOOKUP_MATCHES),
    unresolved: total(WS_UNRESOLVED),
    lookupRefused: total(WS_LOOKUP_REFUSED),
    parser: parseEntries.name,
  };
}
