/**
 * The process one benchmark suite runs in: `node dist-bench/bench/runner/suite-child.js <suite>`,
 * started by the runner (suite-process.ts), which reads the figures from BENCH_RESULT_FILE.
 *
 * BENCH_FAULT (faults.ts) makes a named suite hang, fail, crash or leak a process instead.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';

import { ratioOf } from '../harness.js';
import { SUITES } from '../suites/index.js';
import { FAULT_ENV, faultFor } from './faults.js';
import type { SuiteProcessResult } from './suite-process.js';

function report(result: SuiteProcessResult): void {
  const file = process.env.BENCH_RESULT_FILE;
  if (file === undefined || file === '') throw new Error('BENCH_RESULT_FILE is not set: run suites through `npm run bench`');
  writeFileSync(file, JSON.stringify(result));
}

const forever = (): Promise<never> => new Promise<never>(() => void setInterval(() => undefined, 1 << 30));

async function main(): Promise<void> {
  const name = process.argv[2];
  const suite = SUITES.find((s) => s.name === name);
  if (suite === undefined) throw new Error(`unknown suite ${JSON.stringify(name)}; known: ${SUITES.map((s) => s.name).join(', ')}`);
  const fault = faultFor(suite.name, process.env[FAULT_ENV]);
  if (fault !== undefined) process.stderr.write(`bench: ${suite.name}: ${FAULT_ENV} asks this suite to ${fault}\n`);
  if (fault === 'hang') await forever();
  if (fault === 'fail') throw new Error(`injected failure (${FAULT_ENV}=${suite.name}:fail)`);
  if (fault === 'crash') process.exit(70);
  if (fault === 'leak') {
    spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' }).unref();
    await forever();
  }
  const figures = await suite.run();
  const { nativeStatus } = await import('../../engine/chain/native-parser.js');
  report({ figures: figures.map((f) => ({ ...f, ratio: ratioOf(f) })), native: nativeStatus.loaded });
}

main().then(
  // Exit now: a handle the suite left open (a timer, a socket) must not keep the process alive.
  () => process.exit(0),
  (err: unknown) => {
    const e = err as Error & { code?: unknown };
    process.stderr.write(`bench: ${process.argv[2]}: ${e?.stack ?? String(err)}\n`);
    const code = typeof e?.code === 'string' ? ` [${e.code}]` : '';
    const message = `${e?.message ?? String(err)}`.split('\n').slice(0, 3).join(' ').slice(0, 400);
    try {
      report({ error: `${e?.name ?? 'Error'}: ${message}${code}` });
    } finally {
      process.exit(1);
    }
  },
);
