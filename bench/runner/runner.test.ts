/**
 * The bench runner's own logic (issue 23 item 2), with real processes: a fixture suite script
 * written here speaks the suite protocol (suite-process.ts: BENCH_RESULT_FILE, the ledger, TMPDIR)
 * and misbehaves as each test asks (hangs, leaks a process, fails, crashes, says nothing), and the
 * runner is driven through `runBench` as `npm run bench` drives it, with a results directory of the
 * test's own. The clean-up of the shared services runs against the real local NATS and Redis.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOCAL_NATS_URL, connectLocal, uniqueName } from '../../engine/bus/testing/local-nats.js';
import { TEST_REDIS_URL } from '../../engine/state/kv/testing.js';
import type { Figure } from '../harness.js';
import { ExitCode, runBench, type SuiteInfo } from './cli.js';
import { compareRun, worseBy } from './compare.js';
import { faultFor } from './faults.js';
import { LEDGER_ENV, releaseResources, trackResource, trackedStreamPrefix } from './resources.js';
import { RUN_FORMAT, loadRuns, previousSuites, runFileName, type RunRecord, type SuiteRecord } from './results-store.js';
import { runSuiteProcess } from './suite-process.js';

let dir: string;
let fixture: string;

/**
 * The fixture suite: `node fixture.mjs <name>`; what it does is FIXTURE_MODES[name] (default ok).
 * ok: two figures (a latency of FIXTURE_VALUE µs, lower is better; a throughput of
 * 100,000 / FIXTURE_VALUE ops/s, higher is better); hang: prints, leaks a child process (its pid in
 * FIXTURE_PIDS), writes a file under TMPDIR, then never ends; fail: reports an error; crash: prints
 * and exits 3; silent: exits 0 without a result; ledger: names FIXTURE_LEDGER_LINE in the ledger,
 * then hangs.
 */
const FIXTURE = `
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const name = process.argv[2];
const mode = JSON.parse(process.env.FIXTURE_MODES ?? '{}')[name] ?? 'ok';
const report = (r) => writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify(r));
const forever = () => setInterval(() => {}, 1 << 30);
const value = Number(process.env.FIXTURE_VALUE ?? 100);
if (mode === 'ok') {
  const figures = [
    { name: 'latency', unit: 'µs p99', value, higherIsBetter: false, baseline: { name: 'bare', value: 50 }, p50Us: value / 2, p99Us: value, p999Us: value * 2 },
    { name: 'throughput', unit: 'ops/s', value: 100000 / value, higherIsBetter: true, baseline: { name: 'bare', value: 2000 } },
  ];
  report({ figures: figures.map((f) => ({ ...f, ratio: f.value / f.baseline.value })), native: false });
  process.exit(0);
} else if (mode === 'hang') {
  console.log(name + ': warming up');
  console.error(name + ': waiting for something that never comes');
  const leaked = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  appendFileSync(process.env.FIXTURE_PIDS, leaked.pid + '\\n');
  writeFileSync(join(process.env.TMPDIR, 'scratch.bin'), 'left behind');
  appendFileSync(process.env.FIXTURE_PIDS, 'tmp ' + process.env.TMPDIR + '\\n');
  forever();
} else if (mode === 'fail') {
  report({ error: 'Error: the suite threw [TP_ERR_X]' });
  process.exit(1);
} else if (mode === 'crash') {
  console.error(name + ': about to crash');
  process.exit(3);
} else if (mode === 'silent') {
  process.exit(0);
} else if (mode === 'ledger') {
  appendFileSync(process.env.${LEDGER_ENV}, process.env.FIXTURE_LEDGER_LINE + '\\n');
  forever();
}
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bench-runner-test-'));
  fixture = join(dir, 'fixture.mjs');
  writeFileSync(fixture, FIXTURE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The process exists and is not a zombie (a killed orphan waits for a reaper the container may not have). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

const quiet = (): void => undefined;

describe('a suite in its own process', () => {
  it('is killed at its time limit with everything it started, its TMPDIR removed, and reported timed out with its last output', async () => {
    const pids = join(dir, `pids-${uniqueName('t')}`);
    writeFileSync(pids, '');
    const outcome = await runSuiteProcess({ name: 'stuck', script: fixture, args: ['stuck'], timeLimitMs: 1_500, graceMs: 500, env: { FIXTURE_MODES: '{"stuck":"hang"}', FIXTURE_PIDS: pids }, output: quiet });
    expect(outcome.status).toBe('timeout');
    expect(outcome.reason).toMatch(/^timed out after 1\.5 s \(time limit\), killed; last output: .*stuck: warming up.*stuck: waiting for something that never comes/);
    expect(outcome.figures).toEqual([]);
    const lines = readFileSync(pids, 'utf8').trim().split('\n');
    const leaked = Number(lines[0]);
    const suiteTmp = lines[1]!.slice('tmp '.length);
    expect(leaked).toBeGreaterThan(0);
    expect(alive(leaked)).toBe(false);
    expect(existsSync(suiteTmp)).toBe(false);
  });

  it('reports why a suite failed: its error, its exit code and output, or its silence', async () => {
    const run = (mode: string) => runSuiteProcess({ name: 's', script: fixture, args: ['s'], timeLimitMs: 30_000, env: { FIXTURE_MODES: JSON.stringify({ s: mode }) }, output: quiet });
    const failed = await run('fail');
    expect(failed).toMatchObject({ status: 'failed', reason: 'Error: the suite threw [TP_ERR_X]', figures: [] });
    const crashed = await run('crash');
    expect(crashed).toMatchObject({ status: 'failed', reason: 'exited with code 3 before it reported its figures; last output: s: about to crash' });
    const silent = await run('silent');
    expect(silent).toMatchObject({ status: 'failed', reason: 'exited 0 without reporting its figures' });
    const ok = await run('ok');
    expect(ok.status).toBe('ok');
    expect(ok.figures.map((f) => f.name)).toEqual(['latency', 'throughput']);
    const missing = await runSuiteProcess({ name: 'gone', script: join(dir, 'no-such-script.mjs'), timeLimitMs: 30_000, output: quiet });
    expect(missing.status).toBe('failed');
    expect(missing.reason).toMatch(/^exited with code 1 before it reported its figures; last output: Error: Cannot find module '.*no-such-script\.mjs'$/);
  });
});

describe('clean-up of what a suite leaves on the shared services', () => {
  let nc: NatsConnection;
  let redis: Redis;
  beforeAll(async () => {
    nc = await connectLocal();
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await nc?.close();
    redis?.disconnect();
  });

  it('deletes the streams under a tracked prefix and the Redis keys under one, and only those', async () => {
    const ledger = join(dir, `ledger-${uniqueName('l')}.jsonl`);
    const env = { [LEDGER_ENV]: ledger };
    const prefix = trackedStreamPrefix('RT', LOCAL_NATS_URL);
    expect(existsSync(ledger)).toBe(false); // no ledger in this process's env: tracking is a no-op
    trackResource({ kind: 'nats-streams', prefix, servers: LOCAL_NATS_URL }, env);
    const keyPrefix = `rt_${uniqueName('k')}:`;
    trackResource({ kind: 'redis-keys', prefix: keyPrefix, url: TEST_REDIS_URL }, env);
    const jsm = await nc.jetstreamManager();
    const bystander = uniqueName('RTB');
    for (const name of [`${prefix}ONE`, `${prefix}TWO`, bystander]) await jsm.streams.add({ name, subjects: [`${name}.>`], storage: 'memory' as never });
    await redis.set(`${keyPrefix}a`, '1');
    await redis.set(`${keyPrefix}b`, '2');
    await redis.set(`${keyPrefix.slice(0, -1)}x`, 'bystander');
    try {
      const report = await releaseResources(ledger);
      expect(report.failed).toEqual([]);
      expect(report.removed).toEqual([`deleted streams ${prefix}ONE, ${prefix}TWO`, `deleted 2 Redis keys under ${keyPrefix}`]);
      await expect(jsm.streams.info(`${prefix}ONE`)).rejects.toThrow();
      expect((await jsm.streams.info(bystander)).config.name).toBe(bystander);
      expect(await redis.exists(`${keyPrefix}a`, `${keyPrefix}b`)).toBe(0);
      expect(await redis.get(`${keyPrefix.slice(0, -1)}x`)).toBe('bystander');
      expect((await releaseResources(ledger)).removed).toEqual([]);
    } finally {
      await jsm.streams.delete(bystander).catch(() => false);
      await redis.del(`${keyPrefix.slice(0, -1)}x`);
    }
  });

  it('refuses a prefix so short it could match streams that are not the suite\'s', async () => {
    const ledger = join(dir, `ledger-${uniqueName('l')}.jsonl`);
    trackResource({ kind: 'nats-streams', prefix: 'A', servers: LOCAL_NATS_URL }, { [LEDGER_ENV]: ledger });
    const report = await releaseResources(ledger);
    expect(report.removed).toEqual([]);
    expect(report.failed[0]).toMatch(/refusing to delete streams under the prefix "A"/);
  });

  it('releases what a suite killed at its time limit had tracked', async () => {
    const prefix = `${uniqueName('RK')}_`;
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: `${prefix}S`, subjects: [`${prefix}s.>`], storage: 'memory' as never });
    const outcome = await runSuiteProcess({
      name: 'leaver',
      script: fixture,
      args: ['leaver'],
      timeLimitMs: 1_500,
      graceMs: 200,
      env: { FIXTURE_MODES: '{"leaver":"ledger"}', FIXTURE_LEDGER_LINE: JSON.stringify({ kind: 'nats-streams', prefix, servers: LOCAL_NATS_URL }) },
      output: quiet,
    });
    expect(outcome.status).toBe('timeout');
    expect(outcome.cleanup).toEqual({ removed: [`deleted stream ${prefix}S`], failed: [] });
    await expect(jsm.streams.info(`${prefix}S`)).rejects.toThrow();
  });
});

describe('npm run bench', () => {
  const suites: SuiteInfo[] = [
    { name: 'first', description: 'fine' },
    { name: 'stuck', description: 'hangs', timeLimitMs: 1_000 },
    { name: 'broken', description: 'throws' },
    { name: 'last', description: 'fine too' },
  ];

  function bench(argv: string[], env: Record<string, string>, resultsDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const pids = join(dir, `pids-${uniqueName('b')}`);
    writeFileSync(pids, '');
    return runBench(argv, {
      suites,
      childScript: fixture,
      resultsDir,
      root: process.cwd(),
      graceMs: 200,
      env: { FIXTURE_PIDS: pids, ...env },
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
    }).then((code) => ({ code, stdout, stderr }));
  }

  it('runs every suite to the end past one that hangs and one that fails, reports both in the table, exits 1, and saves the run', async () => {
    const results = mkdtempSync(join(dir, 'results-'));
    const { code, stdout, stderr } = await bench([], { FIXTURE_MODES: JSON.stringify({ stuck: 'hang', broken: 'fail' }) }, results);
    expect(code).toBe(ExitCode.SuiteFailed);
    const table = stdout.slice(stdout.lastIndexOf('| suite | figure'));
    const rows = table.trim().split('\n').slice(2);
    expect(rows.map((r) => r.split(' | ')[0]!.slice(2))).toEqual(['first', 'first', 'stuck', 'broken', 'last', 'last']);
    expect(rows[0]).toBe('| first | latency | 100 µs p99 | bare: 50.00 µs p99 | 2.00× | 50.0 | 100.0 | 200.0 |  |');
    expect(rows[2]).toMatch(/^\| stuck \| \*\*TIMED OUT\*\*: timed out after 1 s \(time limit\), killed; last output: stuck: warming up \/ stuck: waiting for something that never comes \|/);
    expect(rows[3]).toContain('| broken | **FAILED**: Error: the suite threw [TP_ERR_X] |');
    expect(stderr).toContain('bench: 2 of 4 suites ran to the end; stuck timed out, broken failed');

    const runs = loadRuns(results);
    expect(runs).toHaveLength(1);
    const run = runs[0]!.run;
    expect(run.format).toBe(RUN_FORMAT);
    expect(run.machine.id).toMatch(/^[0-9a-f]{16}$/);
    expect(run.git.commit).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(Date.parse(run.startedAt)).toBeLessThanOrEqual(Date.parse(run.finishedAt));
    expect(run.load.before).toHaveLength(3);
    expect(run.suites.map((s) => [s.suite, s.status])).toEqual([['first', 'ok'], ['stuck', 'timeout'], ['broken', 'failed'], ['last', 'ok']]);
    expect(run.suites[1]!.timeLimitMs).toBe(1_000);
    expect(readdirSync(results).sort()).toEqual(['broken.json', 'first.json', 'last.json', 'latest.md', runFileName(run.startedAt), 'stuck.json'].sort());
    expect(readFileSync(join(results, 'latest.md'), 'utf8')).toContain(rows[2]);
  });

  it('exits 0 when every suite ran; --time-limit applies to every suite; bad arguments exit 2', async () => {
    const results = mkdtempSync(join(dir, 'results-'));
    expect((await bench(['first', 'last'], {}, results)).code).toBe(ExitCode.Ok);
    const limited = await bench(['first', '--time-limit', '0.5'], { FIXTURE_MODES: '{"first":"hang"}' }, results);
    expect(limited.code).toBe(ExitCode.SuiteFailed);
    expect(limited.stdout).toContain('**TIMED OUT**: timed out after 0.5 s (time limit)');
    expect((await bench(['nope'], {}, results)).code).toBe(ExitCode.Usage);
    expect((await bench(['--time-limit', 'soon'], {}, results)).code).toBe(ExitCode.Usage);
    expect((await bench(['--frobnicate'], {}, results)).code).toBe(ExitCode.Usage);
  });

  it('--compare flags a figure worse by more than 20% than the previous run of this machine, in the table and the exit code', async () => {
    const results = mkdtempSync(join(dir, 'results-'));
    // A run of another machine, with far better figures: never the one compared with.
    const foreign: RunRecord = {
      format: RUN_FORMAT,
      version: 2,
      machine: { id: 'ffffffffffffffff', hostname: 'elsewhere', cpuModel: 'x', cpus: 64, memoryGiB: 512, os: 'linux', node: 'v20' },
      git: { commit: 'f'.repeat(40), dirty: false },
      startedAt: '2099-01-01T00:00:00.000Z',
      finishedAt: '2099-01-01T00:00:01.000Z',
      load: { before: [0, 0, 0], after: [0, 0, 0] },
      suites: [],
    };
    writeFileSync(join(results, runFileName('2000-01-01T00:00:00.000Z')), JSON.stringify({ ...foreign, startedAt: '2000-01-01T00:00:00.000Z', suites: [suiteRecord('first', 1)] }));

    const none = await bench(['first', '--compare'], {}, results);
    expect(none.code).toBe(ExitCode.Ok);
    expect(none.stderr).toContain('bench: --compare: no previous run of this machine for first');

    const within = await bench(['first', 'last', '--compare'], { FIXTURE_VALUE: '115' }, results);
    expect(within.code).toBe(ExitCode.Ok);
    expect(within.stdout).toContain('| 100 µs p99 | +15.0% worse |');
    expect(within.stderr).toContain('no figure worse by more than 20% than the previous run of this machine');

    const worse = await bench(['first', '--compare'], { FIXTURE_VALUE: '150' }, results);
    expect(worse.code).toBe(ExitCode.Regression);
    const table = worse.stdout.slice(worse.stdout.lastIndexOf('| suite | figure'));
    expect(table).toContain('| first | latency | 150 µs p99 |');
    expect(table).toContain('| 115 µs p99 | **REGRESSION** +30.4% worse |');
    expect(table).toContain('| first | throughput | 667 ops/s | bare: 2,000 ops/s | 0.33× |  |  |  |  | 870 ops/s | **REGRESSION** +23.3% worse |');
    expect(worse.stderr).toMatch(/bench: --compare: 2 figures worse by more than 20%: first: latency 115 → 150 µs p99 \(\+30\.4%, previous run [0-9a-f]{12} at /);

    const failedNow = await bench(['first', '--compare'], { FIXTURE_MODES: '{"first":"fail"}' }, results);
    expect(failedNow.code).toBe(ExitCode.SuiteFailed);
    expect(failedNow.stderr).toContain('figures of the previous run missing from this one: first: latency; first: throughput');
  });
});

function figure(name: string, value: number, higherIsBetter: boolean): Figure & { ratio: number } {
  return { name, unit: 'x', value, higherIsBetter, baseline: { name: 'b', value: 1 }, ratio: value };
}

function suiteRecord(name: string, value: number): SuiteRecord {
  return { suite: name, description: '', status: 'ok', reason: '', startedAt: '', durationMs: 1, timeLimitMs: 1, figures: [figure('latency', value, false), figure('throughput', value, true)], cleanup: { removed: [], failed: [] } };
}

describe('comparing figures', () => {
  it('says how much worse a figure is, whichever way is better', () => {
    expect(worseBy(100, 130, false)).toBeCloseTo(0.3);
    expect(worseBy(100, 70, true)).toBeCloseTo(0.3);
    expect(worseBy(100, 80, false)).toBeCloseTo(-0.2);
    expect(worseBy(0, 5, false)).toBeNaN();
  });

  it('flags past the threshold only, and only against the previous successful run of the same machine', () => {
    const run = (id: string, at: string, suites: SuiteRecord[]): RunRecord => ({
      format: RUN_FORMAT,
      version: 2,
      machine: { id, hostname: 'h', cpuModel: 'c', cpus: 2, memoryGiB: 4, os: 'linux', node: 'v20' },
      git: { commit: at.replace(/\D/g, '').padEnd(40, '0'), dirty: false },
      startedAt: at,
      finishedAt: at,
      load: { before: [1, 1, 1], after: [1, 1, 1] },
      suites,
    });
    const results = mkdtempSync(join(dir, 'results-'));
    const save = (r: RunRecord): void => writeFileSync(join(results, runFileName(r.startedAt)), JSON.stringify(r));
    save(run('aaaa', '2026-01-01T00:00:00.000Z', [suiteRecord('s', 100)]));
    save(run('aaaa', '2026-01-02T00:00:00.000Z', [{ ...suiteRecord('s', 1), status: 'failed', reason: 'x', figures: [] }]));
    save(run('bbbb', '2026-01-03T00:00:00.000Z', [suiteRecord('s', 1000)]));
    writeFileSync(join(results, 'run-garbage.json'), '{not json');
    const previous = previousSuites(results, 'aaaa', '2026-01-04T00:00:00.000Z', ['s', 't']);
    expect([...previous.keys()]).toEqual(['s']);
    expect(previous.get('s')!.run.startedAt).toBe('2026-01-01T00:00:00.000Z');
    const c = compareRun([{ ...suiteRecord('s', 119), figures: [figure('latency', 119, false), figure('throughput', 79, true)] }, suiteRecord('t', 1)], previous);
    expect(c.regressions.map((r) => r.figure)).toEqual(['throughput']);
    expect(c.noPrevious).toEqual(['t']);
  });
});

describe('BENCH_FAULT', () => {
  it('names a fault per suite and refuses one it does not know', () => {
    expect(faultFor('planner', 'aggregator:hang, planner:fail')).toBe('fail');
    expect(faultFor('quote', 'aggregator:hang')).toBeUndefined();
    expect(faultFor('quote', undefined)).toBeUndefined();
    expect(() => faultFor('quote', 'quote:explode')).toThrow(/BENCH_FAULT/);
  });
});
