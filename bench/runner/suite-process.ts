/**
 * One benchmark suite in a process of its own, under a time limit.
 *
 * The suite process (suite-child.ts, or any script speaking the same protocol) is started in a new
 * process group with:
 *   BENCH_RESULT_FILE      where it writes `{"figures": [...], "native": bool}` when it finished,
 *                          or `{"error": "..."}` when the suite threw;
 *   BENCH_RESOURCE_LEDGER  where it names what it creates outside itself (resources.ts);
 *   TMPDIR                 a directory of its own, for every temporary file it and its children make.
 * Its stdout and stderr pass through to the runner's stderr (the table goes to stdout alone); the
 * last lines are kept for the failure reason.
 *
 * At the time limit the whole group gets SIGTERM, then SIGKILL after a grace period. Whatever the
 * outcome, the group is killed once the suite process has ended (servers or load generators it did
 * not stop), its TMPDIR removed and the ledger's resources released. The outcome says which of
 * ok / failed / timeout, why, and what was cleaned.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Figure } from '../harness.js';
import { LEDGER_ENV, releaseResources } from './resources.js';

export const RESULT_FILE_ENV = 'BENCH_RESULT_FILE';

export type SuiteStatus = 'ok' | 'failed' | 'timeout';

/** What the suite process writes to BENCH_RESULT_FILE. */
export type SuiteProcessResult = { figures: (Figure & { ratio: number })[]; native?: boolean } | { error: string };

export interface SuiteProcessOutcome {
  status: SuiteStatus;
  /** Why it failed or timed out (empty when ok). */
  reason: string;
  figures: (Figure & { ratio: number })[];
  native?: boolean;
  startedAt: string;
  durationMs: number;
  /** Clean-up after the suite: what was removed, and what could not be. */
  cleanup: { removed: string[]; failed: string[] };
}

export interface SuiteProcessOptions {
  /** Suite name (the child's argument, and in messages). */
  name: string;
  /** The script to run with this Node, and its arguments. */
  script: string;
  args?: readonly string[];
  timeLimitMs: number;
  /** SIGTERM → SIGKILL grace at the time limit; default 5 s. */
  graceMs?: number;
  /** Extra environment for the suite process. */
  env?: NodeJS.ProcessEnv;
  /** Where the suite's output goes; default the runner's stderr. */
  output?: (chunk: string) => void;
  /** Lines of output kept for the failure reason (its last error line, its last lines); default 40. */
  tailLines?: number;
  /** Parent of the suite's private directory (result file, ledger, TMPDIR); default the OS tmpdir. */
  workDir?: string;
}

/** Kills a process group; false when it no longer exists. */
function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while some process of the group is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** The running suite's group, so that the runner can stop it on SIGINT / SIGTERM. */
let current: { pid: number } | undefined;

/** Kills the group of the suite running now (the runner's own signal handler). */
export function killCurrentSuite(): void {
  if (current !== undefined) killGroup(current.pid, 'SIGKILL');
}

export async function runSuiteProcess(options: SuiteProcessOptions): Promise<SuiteProcessOutcome> {
  const started = Date.now();
  const parent = options.workDir ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, `bench-${options.name}-`));
  const resultFile = join(dir, 'result.json');
  const ledger = join(dir, 'ledger.jsonl');
  const suiteTmp = join(dir, 'tmp');
  mkdirSync(suiteTmp);
  const output = options.output ?? ((chunk: string) => void process.stderr.write(chunk));
  const tailLines = options.tailLines ?? 40;
  let tail = '';
  const keep = (chunk: string): void => {
    output(chunk);
    tail = (tail + chunk).split('\n').slice(-(tailLines + 1)).join('\n');
  };

  const child = spawn(process.execPath, [options.script, ...(options.args ?? [])], {
    detached: true, // a process group of its own: killed as a whole
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env, [RESULT_FILE_ENV]: resultFile, [LEDGER_ENV]: ledger, TMPDIR: suiteTmp },
  });
  current = { pid: child.pid! };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);

  let timedOut = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid!, 'SIGTERM');
    setTimeout(() => killGroup(child.pid!, 'SIGKILL'), options.graceMs ?? 5_000).unref();
  }, options.timeLimitMs);
  const ended = await exit;
  clearTimeout(timer);
  current = undefined;

  // Whatever the suite started and did not stop goes with it.
  if (child.pid !== undefined && killGroup(child.pid, 'SIGKILL')) {
    for (let i = 0; i < 50 && groupAlive(child.pid); i++) await sleep(20);
  }
  const cleanup = await releaseResources(ledger);

  let result: SuiteProcessResult | undefined;
  let unreadable = '';
  if (existsSync(resultFile)) {
    try {
      result = JSON.parse(readFileSync(resultFile, 'utf8')) as SuiteProcessResult;
    } catch (err) {
      unreadable = `its result file does not parse: ${(err as Error).message}`;
    }
  }
  rmSync(dir, { recursive: true, force: true });

  const lines = tail.split('\n').filter((l) => l.trim() !== '' && !/^\s+at /.test(l));
  const errorLine = [...lines].reverse().find((l) => /\b(?:[A-Z]\w*)?Error\b|\[TP_ERR_\w+\]/.test(l));
  const lastOutput = (errorLine !== undefined ? [errorLine.trim()] : lines.slice(-3).map((l) => l.trim())).join(' / ').slice(0, 600);
  const lastLines = lines.slice(-3).map((l) => l.trim()).join(' / ').slice(0, 600);
  const withOutput = (why: string, output = lastOutput): string => (output === '' ? why : `${why}; last output: ${output}`);
  const base = { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, cleanup };
  if (timedOut) {
    return { ...base, status: 'timeout', reason: withOutput(`timed out after ${formatSeconds(options.timeLimitMs)} (time limit), killed`, lastLines), figures: [] };
  }
  if (ended.error !== undefined) return { ...base, status: 'failed', reason: `could not start: ${ended.error.message}`, figures: [] };
  if (result !== undefined && 'error' in result) return { ...base, status: 'failed', reason: result.error, figures: [] };
  if (ended.code !== 0) {
    const how = ended.signal !== null ? `killed by ${ended.signal}` : `exited with code ${ended.code}`;
    return { ...base, status: 'failed', reason: withOutput(`${how} before it reported its figures`), figures: [] };
  }
  if (result === undefined) return { ...base, status: 'failed', reason: withOutput(unreadable || 'exited 0 without reporting its figures'), figures: [] };
  if (result.figures.length === 0) return { ...base, status: 'failed', reason: 'reported no figures', figures: [] };
  return { ...base, status: 'ok', reason: '', figures: result.figures, ...(result.native === undefined ? {} : { native: result.native }) };
}
