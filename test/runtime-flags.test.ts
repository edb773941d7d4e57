/**
 * Every place a tidepool process starts runs Node the one way engine/cli/runtime-flags.ts says:
 * the program's first line, `npm start`, the split deployment script, and the built program.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { NODE_ENV, NODE_FLAGS } from '../engine/cli/runtime-flags.js';

const ROOT = resolve(import.meta.dirname, '..');
const read = (path: string): string => readFileSync(resolve(ROOT, path), 'utf8');
const envWords = Object.entries(NODE_ENV).map(([k, v]) => `${k}=${v}`);
const command = ['env', ...envWords, 'node', ...NODE_FLAGS].join(' ');

describe('the Node runtime flags', () => {
  it('are on the program first line (env -S), in npm start and in the split deployment script', () => {
    expect(read('engine/cli/main.ts').split('\n')[0]).toBe(`#!/usr/bin/env -S ${[...envWords, 'node', ...NODE_FLAGS].join(' ')}`);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toContain(`exec ${command} dist/engine/cli/main.js start`);
    expect(read('scripts/run-split.sh')).toContain(`tidepool=(${command} dist/engine/cli/main.js)`);
  });

  it('reach the process the built program first line starts', () => {
    // The kernel runs `#!/usr/bin/env -S ...` as env with everything after it as one argument.
    const line = readFileSync(resolve(ROOT, 'dist/engine/cli/main.js'), 'utf8').split('\n')[0]!;
    expect(line.startsWith('#!/usr/bin/env ')).toBe(true);
    const out = execFileSync('/usr/bin/env', [line.slice('#!/usr/bin/env '.length), '-p', 'JSON.stringify([process.execArgv, process.env.MALLOC_ARENA_MAX])'], { encoding: 'utf8' });
    // execArgv also holds this check's own `-p <code>`.
    expect(JSON.parse(out)).toEqual([[...NODE_FLAGS, '-p', expect.any(String)], NODE_ENV.MALLOC_ARENA_MAX]);
  });
});
