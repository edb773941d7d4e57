/**
 * The npm package as `npm pack` would publish it: the built engine, the sources the install
 * script compiles, the protocols, schemas and docs; no tests, no test helpers, no source maps.
 * Run after the build (`npm test` builds first): the package lists what dist/ holds.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

interface PackEntry {
  path: string;
}

function packedFiles(): string[] {
  // --ignore-scripts: list what is there; `prepare` (the build) already ran for the tests.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(out) as { files: PackEntry[] }[])[0]!.files.map((f) => f.path);
}

describe('the npm package', () => {
  const files = packedFiles();
  const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
    license?: string;
    bin: Record<string, string>;
    exports: Record<string, string | { types: string; default: string }>;
  };

  it('holds no test, test helper, test data or source map', () => {
    const unwanted = files.filter((f) => /\.test\.|(^|\/)testing(\/|\.(js|d\.ts|ts)$)|\.map$|\.tsbuildinfo$/.test(f));
    expect(unwanted).toEqual([]);
  });

  it('holds the command, every export, the native sources, the license and the docs', () => {
    expect(pkg.license).toBe('MIT');
    for (const target of Object.values(pkg.bin)) expect(files).toContain(target);
    for (const entry of Object.values(pkg.exports)) {
      for (const target of typeof entry === 'string' ? [entry] : [entry.types, entry.default]) expect(files).toContain(target.replace(/^\.\//, ''));
    }
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'binding.gyp', 'scripts/build-native.mjs', 'docs/README.md', 'proto/shredstream.proto']));
    expect(files.some((f) => f.startsWith('native/'))).toBe(true);
  });
});
