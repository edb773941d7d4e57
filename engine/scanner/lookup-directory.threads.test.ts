import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import * as base58 from '../chain/base58.js';
import { Prng } from '../prng.js';
import { createLookupDirectory, LookupDirectory } from './lookup-directory.js';
import type { DirectoryReaderReport } from './testing/directory-reader-worker.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/scanner/testing/directory-reader-worker.js');
const built = existsSync(workerFile);

describe.skipIf(!built)('LookupDirectory across threads', () => {
  it('a reader never accepts a torn table while the writer rewrites it and churns its neighbours', async () => {
    const prng = new Prng(21);
    const address = (): string => base58.encode(prng.bytes(32));
    const keys = Array.from({ length: 10 }, address);
    // Small: 16 records in 32 slots, so the churn moves the watched table's slot around.
    const sab = createLookupDirectory({ capacity: 16, mapBlocks: 16 });
    const dir = new LookupDirectory(sab);
    dir.setKeys(keys, 2);
    const watched = address();
    dir.put(watched, [keys[0]!]);

    const control = new SharedArrayBuffer(12);
    const ctl = new Int32Array(control);
    const worker = new Worker(workerFile, { workerData: { directory: sab, control, table: base58.decodePubkey(watched) } });
    const report = new Promise<DirectoryReaderReport>((res, rej) => {
      worker.once('message', res);
      worker.once('error', rej);
    });
    while (Atomics.load(ctl, 1) === 0) await new Promise((r) => setTimeout(r, 5));

    const others: string[] = [];
    let step = 0;
    // Write until the reader has validated plenty of reads (bounded, whatever the scheduling).
    while ((step < 20_000 || Atomics.load(ctl, 2) < 2_000) && step < 2_000_000) {
      const n = 1 + (step % 200);
      dir.put(watched, new Array<string>(n).fill(keys[(n - 1) % 10]!));
      const other = address();
      dir.put(other, step % 3 === 0 ? [keys[step % 10]!] : []);
      others.push(other);
      if (others.length > 12) dir.remove(others.shift()!);
      step++;
    }
    Atomics.store(ctl, 0, 1);
    const got = await report;
    await worker.terminate();
    expect(got.validated).toBeGreaterThanOrEqual(2_000);
    expect(got.violations).toBe(0);
    expect(got.missing).toBe(0);
    expect(dir.stats.evictions).toBe(0);
  });
});
