import { availableParallelism } from 'node:os';

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A test file runs in a worker that earlier files have used, with the modules they imported:
    // re-importing the engine's module graph for each of the ~380 files took ~600 s of the
    // suite's CPU time. Every test file closes what it opens and restores what it stubs.
    isolate: false,
    // At least two files at once: most wait on servers, sockets and child processes, and vitest's
    // default (one less than the cores) runs them one by one on a 2-core machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
