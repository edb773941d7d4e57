/**
 * `npm run bench [-- [suite...] [--compare] [--time-limit <s>] [--list]]`: every suite (or the named
 * ones), each in its own process under its time limit (suite-process.ts), one after the other; a
 * suite that fails or times out is a row of the table with its reason and the run goes on. Then the
 * table on stdout, the run saved in bench/results (results-store.ts), a summary on stderr.
 *
 * --compare       each figure beside the previous run of this machine; worse by > 20%: flagged
 * --time-limit S  every suite's time limit, seconds (default: the suite's own, else 10 min)
 * --list          the suites, their time limits and descriptions
 *
 * Exit code: 0 every suite ran to the end (and, with --compare, nothing regressed); 1 a suite failed
 * or timed out; 2 bad arguments; 3 (--compare) every suite ran but a figure regressed; 130
 * interrupted (SIGINT / SIGTERM: the running suite is killed and cleaned up first).
 */
import { loadavg } from 'node:os';

import { compareRun, type RunComparison } from './compare.js';
import { runSummary, runTable } from './report.js';
import { gitState, machineIdentity, previousSuites, saveRun, type RunRecord, type SuiteRecord } from './results-store.js';
import { killCurrentSuite, runSuiteProcess } from './suite-process.js';

export const DEFAULT_TIME_LIMIT_MS = 10 * 60_000;

export const ExitCode = { Ok: 0, SuiteFailed: 1, Usage: 2, Regression: 3, Interrupted: 130 } as const;

export interface SuiteInfo {
  name: string;
  description: string;
  timeLimitMs?: number;
}

export interface BenchOptions {
  suites: readonly SuiteInfo[];
  /** The script each suite runs in, given the suite's name as its argument. */
  childScript: string;
  resultsDir: string;
  /** The checkout, for the git commit. */
  root: string;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Extra environment of the suite processes. */
  env?: NodeJS.ProcessEnv;
  /** SIGTERM → SIGKILL grace at a time limit. */
  graceMs?: number;
}

interface Args {
  names: string[];
  compare: boolean;
  list: boolean;
  timeLimitMs?: number;
}

function parseArgs(argv: readonly string[]): Args | string {
  const args: Args = { names: [], compare: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--compare') args.compare = true;
    else if (a === '--list') args.list = true;
    else if (a === '--time-limit' || a.startsWith('--time-limit=')) {
      const raw = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      const seconds = Number(raw);
      if (raw === undefined || !Number.isFinite(seconds) || seconds <= 0) return `--time-limit takes a number of seconds > 0, got ${JSON.stringify(raw)}`;
      args.timeLimitMs = Math.round(seconds * 1000);
    } else if (a.startsWith('-')) return `unknown option ${a} (known: --compare, --time-limit <seconds>, --list)`;
    else args.names.push(a);
  }
  return args;
}

const minutes = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(0)} s`);

export async function runBench(argv: readonly string[], options: BenchOptions): Promise<number> {
  const out = options.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = options.stderr ?? ((t: string) => void process.stderr.write(t));
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    err(`bench: ${args}\n`);
    return ExitCode.Usage;
  }
  const limitOf = (s: SuiteInfo): number => args.timeLimitMs ?? s.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  if (args.list) {
    const width = Math.max(...options.suites.map((s) => s.name.length));
    for (const s of options.suites) out(`${s.name.padEnd(width)}  ${minutes(limitOf(s)).padStart(6)}  ${s.description}\n`);
    return ExitCode.Ok;
  }
  const unknown = args.names.filter((n) => !options.suites.some((s) => s.name === n));
  if (unknown.length > 0) {
    err(`bench: unknown suite(s): ${unknown.join(', ')}; known: ${options.suites.map((s) => s.name).join(', ')}\n`);
    return ExitCode.Usage;
  }
  const selected = args.names.length === 0 ? options.suites : options.suites.filter((s) => args.names.includes(s.name));

  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!interrupted) err(`\nbench: ${signal}: stopping the running suite, cleaning up after it\n`);
    interrupted = true;
    killCurrentSuite();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const machine = machineIdentity();
  const git = gitState(options.root);
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  err(`bench: ${selected.length} suite${selected.length === 1 ? '' : 's'} on ${machine.hostname} (${machine.cpus} × ${machine.cpuModel}), commit ${git.commit.slice(0, 12)}${git.dirty ? '+changes' : ''}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}\n`);
  const records: SuiteRecord[] = [];
  try {
    for (const [i, suite] of selected.entries()) {
      const timeLimitMs = limitOf(suite);
      if (interrupted) {
        records.push({ suite: suite.name, description: suite.description, status: 'failed', reason: 'not run: the bench was interrupted', startedAt: new Date().toISOString(), durationMs: 0, timeLimitMs, figures: [], cleanup: { removed: [], failed: [] } });
        continue;
      }
      err(`bench: [${i + 1}/${selected.length}] ${suite.name} (time limit ${minutes(timeLimitMs)}): ${suite.description}\n`);
      const outcome = await runSuiteProcess({
        name: suite.name,
        script: options.childScript,
        args: [suite.name],
        timeLimitMs,
        output: err,
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      });
      const reason = interrupted && outcome.status !== 'ok' ? `interrupted (${outcome.reason})` : outcome.reason;
      const record: SuiteRecord = { suite: suite.name, description: suite.description, ...outcome, reason, timeLimitMs };
      records.push(record);
      err(`bench: ${suite.name}: ${record.status === 'ok' ? `ok in ${(record.durationMs / 1000).toFixed(1)} s` : `${record.status === 'timeout' ? 'TIMED OUT' : 'FAILED'}: ${record.reason}`}\n`);
      if (record.status === 'ok') out(runTable([record]));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const comparison: RunComparison | undefined = args.compare
    ? compareRun(records, previousSuites(options.resultsDir, machine.id, startedAt, records.map((r) => r.suite)))
    : undefined;
  const table = runTable(records, comparison);
  out(`\n${table}`);
  const run: RunRecord = { format: 'tidepool-bench-run', version: 2, machine, git, startedAt, finishedAt: new Date().toISOString(), load: { before: loadBefore, after: loadavg() }, suites: records };
  const file = saveRun(options.resultsDir, run, table);
  for (const line of runSummary(records, comparison)) err(`${line}\n`);
  err(`bench: load average ${run.load.after.map((l) => l.toFixed(2)).join(' ')} at the end; results written to ${file}\n`);

  if (interrupted) return ExitCode.Interrupted;
  if (records.some((r) => r.status !== 'ok')) return ExitCode.SuiteFailed;
  if (comparison !== undefined && comparison.regressions.length > 0) return ExitCode.Regression;
  return ExitCode.Ok;
}
