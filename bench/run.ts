import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runBench } from './runner/cli.js';
import { SUITES } from './suites/index.js';

/**
 * `npm run bench [-- suite... --compare --time-limit <s> --list]`: every suite in a process of its
 * own under its time limit, the table on stdout, the run in bench/results (bench/runner/cli.ts).
 */
const here = dirname(fileURLToPath(import.meta.url)); // dist-bench/bench
const root = resolve(here, '..', '..');

runBench(process.argv.slice(2), {
  suites: SUITES,
  childScript: join(here, 'runner', 'suite-child.js'),
  resultsDir: join(root, 'bench', 'results'),
  root,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
