/**
 * What `npm run bench` keeps in bench/results, and finding the previous run of the same machine.
 *
 *   run-<time>.json   one run: the machine it ran on (identity below), the git commit (and whether
 *                     the tree had changes), when, the load average before and after, and every
 *                     suite it ran with its status, reason, time limit, duration, figures and
 *                     clean-up. `--compare` reads these.
 *   <suite>.json      the suite's latest outcome with the same machine and commit fields (its
 *                     figures as before: value, baseline, ratio, p50/p99/p99.9).
 *   latest.md         the last run's table.
 *
 * Machine identity: a hash of /etc/machine-id (when readable), the host name, the CPU model, the
 * number of CPUs and the memory size, so runs of the same box match and a copy of the results on
 * another box does not. The Node version is recorded beside it, not part of it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, hostname, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';

import type { Figure } from '../harness.js';
import type { SuiteStatus } from './suite-process.js';

export const RUN_FORMAT = 'tidepool-bench-run';
export const RUN_FORMAT_VERSION = 2;

export interface MachineIdentity {
  /** Hash of the fields below and /etc/machine-id: what `--compare` matches on. */
  id: string;
  hostname: string;
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  os: string;
  node: string;
}

export interface GitState {
  /** `git rev-parse HEAD`, or 'unknown' outside a git checkout. */
  commit: string;
  /** The work tree had uncommitted changes. */
  dirty: boolean;
}

export interface SuiteRecord {
  suite: string;
  description: string;
  status: SuiteStatus;
  /** Why it failed or timed out; '' when ok. */
  reason: string;
  startedAt: string;
  durationMs: number;
  timeLimitMs: number;
  figures: (Figure & { ratio: number })[];
  /** The native add-on was loaded in the suite's process. */
  native?: boolean;
  cleanup: { removed: string[]; failed: string[] };
}

export interface RunRecord {
  format: typeof RUN_FORMAT;
  version: typeof RUN_FORMAT_VERSION;
  machine: MachineIdentity;
  git: GitState;
  startedAt: string;
  finishedAt: string;
  /** Load averages (1, 5, 15 min) when the run started and ended: the box's other work. */
  load: { before: number[]; after: number[] };
  /** The suites asked for, in order (a subset when names were given). */
  suites: SuiteRecord[];
}

function readMachineId(): string {
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = readFileSync(file, 'utf8').trim();
      if (id !== '') return id;
    } catch {
      // not on this system
    }
  }
  return '';
}

export function machineIdentity(): MachineIdentity {
  const cpuList = cpus();
  const fields = {
    hostname: hostname(),
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    cpus: cpuList.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${platform()} ${release()}`,
  };
  const id = createHash('sha256')
    .update([readMachineId(), fields.hostname, fields.cpuModel, fields.cpus, fields.memoryGiB].join('\n'))
    .digest('hex')
    .slice(0, 16);
  return { id, ...fields, node: process.version };
}

export function gitState(root: string): GitState {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

/** `run-2026-11-28T17-33-45-123Z.json`: sorts by time. */
export function runFileName(startedAt: string): string {
  return `run-${startedAt.replace(/[:.]/g, '-')}.json`;
}

/** Writes the run, each suite's latest outcome and the table; returns the run file's path. */
export function saveRun(dir: string, run: RunRecord, table: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, runFileName(run.startedAt));
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
  for (const s of run.suites) {
    writeFileSync(join(dir, `${s.suite}.json`), `${JSON.stringify({ ...s, machine: run.machine, git: run.git }, null, 2)}\n`);
  }
  const commit = `${run.git.commit.slice(0, 12)}${run.git.dirty ? ' (with uncommitted changes)' : ''}`;
  writeFileSync(
    join(dir, 'latest.md'),
    `# tidepool benchmarks, ${run.finishedAt}\n\ncommit ${commit}, ${run.machine.hostname} (${run.machine.cpus} × ${run.machine.cpuModel}, Node ${run.machine.node}), load average ${run.load.before.map((l) => l.toFixed(2)).join(' ')} at the start\n\n${table}`,
  );
  return file;
}

function isRunRecord(value: unknown): value is RunRecord {
  const v = value as Partial<RunRecord> | null;
  return v !== null && typeof v === 'object' && v.format === RUN_FORMAT && v.version === RUN_FORMAT_VERSION && typeof v.machine?.id === 'string' && Array.isArray(v.suites);
}

/** Every run record in `dir`, oldest first; files of other formats (older runners) are skipped. */
export function loadRuns(dir: string): { file: string; run: RunRecord }[] {
  if (!existsSync(dir)) return [];
  const out: { file: string; run: RunRecord }[] = [];
  for (const name of readdirSync(dir).filter((n) => n.startsWith('run-') && n.endsWith('.json')).sort()) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      if (isRunRecord(parsed)) out.push({ file: join(dir, name), run: parsed });
    } catch {
      // a partial or foreign file: not a run to compare with
    }
  }
  return out.sort((a, b) => a.run.startedAt.localeCompare(b.run.startedAt));
}

export interface PreviousSuite {
  run: RunRecord;
  file: string;
  suite: SuiteRecord;
}

/**
 * For each suite name, its latest successful outcome on machine `machineId` in a run that started
 * before `before` (the current run is not its own previous).
 */
export function previousSuites(dir: string, machineId: string, before: string, suites: readonly string[]): Map<string, PreviousSuite> {
  const found = new Map<string, PreviousSuite>();
  const runs = loadRuns(dir).filter((r) => r.run.machine.id === machineId && r.run.startedAt < before);
  for (const name of suites) {
    for (let i = runs.length - 1; i >= 0; i--) {
      const suite = runs[i]!.run.suites.find((s) => s.suite === name && s.status === 'ok');
      if (suite !== undefined) {
        found.set(name, { run: runs[i]!.run, file: runs[i]!.file, suite });
        break;
      }
    }
  }
  return found;
}
