import { spawnSync } from 'node:child_process';

/**
 * Runs Prometheus' `promtool` (Debian package `prometheus`; `scripts/services.sh` installs it) for
 * tests that check metric expositions and rule files with the real tool.
 */

export interface PromtoolResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Whether `promtool` is on PATH. */
export function hasPromtool(): boolean {
  const r = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  return r.error === undefined && r.status === 0;
}

/** `promtool <args>` with `stdin` as its standard input. */
export function runPromtool(args: readonly string[], stdin = ''): PromtoolResult {
  const r = spawnSync('promtool', args, { input: stdin, encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
