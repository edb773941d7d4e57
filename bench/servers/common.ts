/**
 * What both server processes of the `quote` bench suite do once listening, so they have the same
 * shape: collect garbage (when run with --expose-gc), reset the peak RSS (VmHWM, by writing 5 to
 * /proc/self/clear_refs, Linux), print one JSON line `{"ready":true,...}` on stdout, and run until
 * stdin closes (the suite holds the pipe) or SIGTERM.
 */
import { writeFileSync } from 'node:fs';

export function finishStartup(info: Record<string, unknown>, close: () => Promise<void>): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
  let hwmReset = false;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    hwmReset = true;
  } catch {
    // Not Linux, or not allowed: VmHWM then includes the start-up peak.
  }
  const m = process.memoryUsage();
  const mb = (n: number): number => Math.round(n / 1e5) / 10;
  const memory = { rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), heapTotalMB: mb(m.heapTotal), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers) };
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
