/**
 * What both server processes of the `quote` bench suite do once listening, so they have the same
 * shape: collect garbage (when run with --expose-gc), reset the peak RSS (VmHWM, by writing 5 to
 * /proc/self/clear_refs, Linux), print one JSON line `{"ready":true,...}` on stdout, and run until
 * stdin closes (the suite holds the pipe) or SIGTERM.
 *
 * With `idleGc`, the process first waits IDLE_BEFORE_GC_MS doing nothing and collects again: V8
 * gives back its young generation's growth (up to two 16 MB semi-spaces, grown while a start-up's
 * objects survive scavenges, as the quote server's cache fill does) only at a collection after a
 * few seconds of low allocation, which a server that goes from its start-up straight into load may
 * or may not get before the suite reads its RSS (quote suite, 1,000 pools: 91 MB after the load in
 * one run, 120 MB in the next, the young generation 3.7 MB in one and 33.6 MB in the other). This
 * is not a cap: the young generation grows again as the load's survivors ask for it. It is the
 * best case of a service's start: one that takes traffic and updates from the moment its cache is
 * filled allocates above that threshold and may keep the fill's growth (up to ~33 MB more). The
 * quote suite's quote server and its bare server both take it (`--idle-gc`); no other server does.
 */
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Idle time before the last collection with `idleGc`: V8 (Node 20) shrinks the young generation at
 * a collection when its allocation throughput over the last 5 s is below 1 KB/ms. Measured: a
 * 33.6 MB young generation is 1.0 MB after 6 s idle and a collection, still 33.6 MB after 1 s.
 */
export const IDLE_BEFORE_GC_MS = 6_000;

/** Bytes as MB with one decimal, as the ready lines print them. */
export const mb = (n: number): number => Math.round(n / 1e5) / 10;

/**
 * The bytes V8 has committed to one of its heap spaces (`new_space`: the young generation, both
 * semi-spaces; `old_space`, `code_space` …); 0 for a space it does not have.
 */
export function heapSpaceBytes(name: string): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === name)?.physical_space_size ?? 0;
}

export async function finishStartup(info: Record<string, unknown>, close: () => Promise<void>, options: { idleGc?: boolean } = {}): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
    if (options.idleGc === true) {
      await sleep(IDLE_BEFORE_GC_MS);
      gc();
    }
  }
  let hwmReset = false;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    hwmReset = true;
  } catch {
    // Not Linux, or not allowed: VmHWM then includes the start-up peak.
  }
  const m = process.memoryUsage();
  const youngMB = mb(heapSpaceBytes('new_space'));
  const memory = { rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), heapTotalMB: mb(m.heapTotal), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers), youngMB };
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, gc: gc !== undefined, hwmReset, memory, ...info })}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void close().finally(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
}
