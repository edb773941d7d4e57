/**
 * LookupResolver: in a parse worker, settles the accounts a v0 transaction loads through address
 * lookup tables against the lookup directory (lookup-directory.ts), without leaving the thread.
 *
 * The lookups are read where the parser's record says they are (TX_LOOKUP_OFFSET / COUNT); the
 * parser has validated them, so this walk only re-reads their lengths. When every table is in the
 * directory and every index is within the table's known length, each monitored pool among the
 * loaded accounts becomes a match (MATCH_VIA_LOOKUP) whose key index follows Solana's v0 account
 * order: static keys, then every lookup's writable indexes, then every lookup's readonly ones.
 * Otherwise the transaction becomes an unresolved record carrying a copy of its lookups.
 *
 * The directory is read under its sequence lock: matches written during a read the writer
 * overlapped are rolled back and the read is retried, a few times, before the transaction is
 * left to the pool's thread (reason Busy). Allocation-free.
 */
import { readCompactU16 } from '../chain/index.js';
import type { EntryBatchIndex } from '../chain/index.js';
import { PUBKEY_BYTES, TX_END } from '../chain/index.js';
import type { LookupDirectoryReader } from './lookup-directory.js';
import { LD_NO_BLOCK, LD_NO_POOL } from './lookup-layout.js';
import { MATCH_VIA_LOOKUP, MAX_TX_LOOKUPS, UnresolvedReason } from './match-layout.js';
import type { LookupSpans, ResultBuilder } from './result-builder.js';

export const LookupOutcome = {
  /** Settled in the worker: `found` matches were added (possibly none). */
  Resolved: 0,
  /** An unresolved record was added. */
  Unresolved: 1,
  /** More than MAX_TX_LOOKUPS lookups (cannot be a valid transaction) or unreadable: nothing added. */
  Refused: 2,
} as const;
export type LookupOutcome = (typeof LookupOutcome)[keyof typeof LookupOutcome];

/** Reads of the directory per transaction before giving up to a writer that keeps writing. */
const READ_ATTEMPTS = 8;

export class LookupResolver {
  /** Matches added by the last resolve(). */
  found = 0;
  private readonly spans: LookupSpans = {
    count: 0,
    table: new Int32Array(MAX_TX_LOOKUPS),
    writableAt: new Int32Array(MAX_TX_LOOKUPS),
    writableCount: new Int32Array(MAX_TX_LOOKUPS),
    readonlyAt: new Int32Array(MAX_TX_LOOKUPS),
    readonlyCount: new Int32Array(MAX_TX_LOOKUPS),
  };
  private readonly blocks = new Int32Array(MAX_TX_LOOKUPS);

  constructor(private readonly directory: LookupDirectoryReader) {}

  /**
   * Settles transaction `tx` of the batch in `index` (a v0 transaction with lookups), adding its
   * lookup matches or its unresolved record to `out`. `keysVersion`: the key-table version the
   * batch is matched against; the directory's pool ids are used only if they refer to it.
   */
  resolve(index: EntryBatchIndex, tx: number, keysVersion: number, out: ResultBuilder): LookupOutcome {
    this.found = 0;
    const count = index.lookupCount(tx);
    if (count > MAX_TX_LOOKUPS) return LookupOutcome.Refused;
    const bytes = index.bytes;
    const end = index.txField(tx, TX_END);
    const s = this.spans;
    let p = index.lookupsOffset(tx);
    let totalWritable = 0;
    for (let l = 0; l < count; l++) {
      s.table[l] = p;
      p += PUBKEY_BYTES;
      const w = readCompactU16(bytes, p, end);
      if (w < 0) return LookupOutcome.Refused;
      p += w >>> 16;
      s.writableAt[l] = p;
      s.writableCount[l] = w & 0xffff;
      p += w & 0xffff;
      const r = readCompactU16(bytes, p, end);
      if (r < 0) return LookupOutcome.Refused;
      p += r >>> 16;
      s.readonlyAt[l] = p;
      s.readonlyCount[l] = r & 0xffff;
      p += r & 0xffff;
      if (p > end) return LookupOutcome.Refused;
      totalWritable += w & 0xffff;
    }
    s.count = count;

    const staticKeys = index.keyCount(tx);
    const sig = index.signatureOffset(tx);
    const dir = this.directory;
    const blocks = this.blocks;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const version = dir.begin();
      if (version < 0) continue;
      const mark = out.matchCount;
      let reason = 0;
      let found = 0;
      if (dir.keysVersion() !== keysVersion) reason = UnresolvedReason.KeysChanged;
      for (let l = 0; l < count && reason === 0; l++) {
        const rec = dir.find(bytes, s.table[l]!);
        if (rec < 0) {
          reason = UnresolvedReason.UnknownTable;
          break;
        }
        const known = dir.knownLength(rec);
        if (maxIndex(bytes, s.writableAt[l]!, s.writableCount[l]!, s.readonlyAt[l]!, s.readonlyCount[l]!) >= known) {
          reason = UnresolvedReason.IndexPastLength;
          break;
        }
        blocks[l] = dir.block(rec);
      }
      if (reason === 0) {
        // Writable loaded accounts first (every lookup), then readonly ones.
        let key = staticKeys;
        for (let pass = 0; pass < 2; pass++) {
          const at = pass === 0 ? s.writableAt : s.readonlyAt;
          const n = pass === 0 ? s.writableCount : s.readonlyCount;
          for (let l = 0; l < count; l++) {
            const block = blocks[l]!;
            const a = at[l]!;
            const c = n[l]!;
            if (block === LD_NO_BLOCK) {
              key += c;
              continue;
            }
            for (let j = 0; j < c; j++, key++) {
              const pool = dir.poolAt(block, bytes[a + j]!);
              if (pool === LD_NO_POOL) continue;
              out.addMatch(bytes, tx, pool, key, sig, MATCH_VIA_LOOKUP);
              found++;
            }
          }
          if (pass === 0) key = staticKeys + totalWritable;
        }
      }
      if (dir.changedSince(version)) {
        out.rollbackMatches(mark);
        continue;
      }
      if (reason === 0) {
        this.found = found;
        return LookupOutcome.Resolved;
      }
      out.addUnresolved(bytes, tx, reason, staticKeys, sig, s);
      return LookupOutcome.Unresolved;
    }
    out.addUnresolved(bytes, tx, UnresolvedReason.Busy, staticKeys, sig, s);
    return LookupOutcome.Unresolved;
  }
}

function maxIndex(bytes: Uint8Array, wa: number, wc: number, ra: number, rc: number): number {
  let m = -1;
  for (let i = 0; i < wc; i++) if (bytes[wa + i]! > m) m = bytes[wa + i]!;
  for (let i = 0; i < rc; i++) if (bytes[ra + i]! > m) m = bytes[ra + i]!;
  return m;
}
