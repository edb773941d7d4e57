/**
 * The repository documents itself: the README and docs/ link only to files inside it, and code
 * comments cite sections of docs/ that exist, never documents outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * Documents linked from the index before they exist (remove an entry once its file is written).
 */
const PENDING = new Set<string>();

/** The repository's tracked files (and new ones not yet committed), relative to the root. */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\n').filter((f) => f !== '' && existsSync(join(ROOT, f)));
}

const files = repositoryFiles();
const markdown = files.filter((f) => f.endsWith('.md'));
const TEXT = /\.(ts|mjs|js|md|proto|fbs|json|ya?ml|sh|sql|gyp|cc|h)$/;

/** Relative link targets of a Markdown text: `[text](target)`, without anchors; URLs left out. */
function relativeLinks(text: string): string[] {
  const links: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]!);
  }
  return links;
}

describe('documentation', () => {
  it('links from every Markdown file to files inside the repository that exist', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const link of relativeLinks(readFileSync(join(ROOT, file), 'utf8'))) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), link));
        if (target.startsWith('..')) broken.push(`${file}: ${link} leaves the repository`);
        else if (!existsSync(join(ROOT, target)) && !PENDING.has(target)) broken.push(`${file}: ${link} does not exist`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('cites no document outside the repository, in code or docs', () => {
    const outside = /\.\.\/shared\/|ARCHITECTURE(\.md)?\b|solana-wire\.md|STYLE\.md/;
    const found = files
      .filter((f) => TEXT.test(f) && !f.startsWith('test/docs.test.ts') && f !== 'package-lock.json')
      .flatMap((f) =>
        readFileSync(join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ line, where: `${f}:${i + 1}` }))
          .filter(({ line }) => outside.test(line))
          .map(({ where, line }) => `${where}: ${line.trim()}`),
      );
    expect(found).toEqual([]);
  });

  it('cites only sections that exist in docs/architecture.md and docs/wire-formats.md', () => {
    const sections = (doc: string): Set<string> =>
      new Set([...readFileSync(join(ROOT, 'docs', doc), 'utf8').matchAll(/^#{2,3} (\d+(?:\.\d+)?)[. ]/gm)].map((m) => m[1]!));
    const known = { 'architecture.md': sections('architecture.md'), 'wire-formats.md': sections('wire-formats.md') };
    expect(known['architecture.md'].has('3')).toBe(true);
    expect(known['wire-formats.md'].has('4.2')).toBe(true);
    const missing: string[] = [];
    for (const f of files.filter((f) => TEXT.test(f) && f !== 'package-lock.json')) {
      for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(/docs\/(architecture|wire-formats)\.md §(\d+(?:\.\d+)?)/g)) {
        const doc = `${m[1]}.md` as keyof typeof known;
        if (!known[doc].has(m[2]!)) missing.push(`${f}: ${m[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
