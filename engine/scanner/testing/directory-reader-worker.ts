/**
 * A worker_threads reader for the two-thread lookup directory test (run from dist/): reads one
 * table under the sequence lock as fast as it can until told to stop, and checks every read the
 * lock validates against the writer's invariant: the table is present, and with known length n
 * every index below n maps to pool (n - 1) % 10 and every index from n on to no pool.
 * control: [0] stop flag (set by the test), [1] ready, [2] validated reads so far.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LookupDirectoryReader } from '../lookup-directory.js';
import { BLOCK_ENTRIES, LD_NO_BLOCK, LD_NO_POOL } from '../lookup-layout.js';

export interface DirectoryReaderReport {
  validated: number;
  voided: number;
  busy: number;
  missing: number;
  violations: number;
}

const { directory, control, table } = workerData as { directory: SharedArrayBuffer; control: SharedArrayBuffer; table: Uint8Array };
const ctl = new Int32Array(control);
const reader = new LookupDirectoryReader(directory);
const report: DirectoryReaderReport = { validated: 0, voided: 0, busy: 0, missing: 0, violations: 0 };
Atomics.store(ctl, 1, 1);
while (Atomics.load(ctl, 0) === 0) {
  const v = reader.begin();
  if (v < 0) {
    report.busy++;
    continue;
  }
  const rec = reader.find(table, 0);
  let bad = false;
  if (rec >= 0) {
    const n = reader.knownLength(rec);
    const block = reader.block(rec);
    const want = n === 0 ? LD_NO_POOL : (n - 1) % 10;
    for (let i = 0; i < BLOCK_ENTRIES; i++) {
      const got = block === LD_NO_BLOCK ? LD_NO_POOL : reader.poolAt(block, i);
      if (got !== (i < n ? want : LD_NO_POOL)) bad = true;
    }
  }
  if (reader.changedSince(v)) {
    report.voided++;
    continue;
  }
  report.validated++;
  Atomics.store(ctl, 2, report.validated);
  if (rec < 0) report.missing++;
  if (bad) report.violations++;
}
parentPort!.postMessage(report);
