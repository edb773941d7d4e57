/**
 * The README's facts are the code's: the ports it lists are the defaults `npm start` binds, under
 * the variable it names; every command, flag and environment variable it or docs/ mentions exists;
 * every folder README is reachable from the documentation index. A renamed setting or a moved
 * default fails here instead of misleading a newcomer.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { COMMANDS } from '../engine/cli/commands/index.js';
import type { ConfigSchema } from '../engine/config/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const trackedFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && existsSync(join(ROOT, f)));
const DOCS = trackedFiles.filter((f) => f.startsWith('docs/') && f.endsWith('.md') && f !== 'docs/configuration.md');

const settingsOf = (name: string): ConfigSchema => {
  const command = COMMANDS.find((c) => c.name === name);
  if (command?.settings === undefined) throw new Error(`no command ${name} with settings`);
  return command.settings;
};
const allSettings = COMMANDS.flatMap((c) => Object.values(c.settings ?? {}));
const settingEnvs = new Set(allSettings.map((s) => s.env).filter((e): e is string => e !== undefined));
const settingFlags = new Set(allSettings.map((s) => s.flag).filter((f): f is string => f !== undefined));

/** Variables the code reads outside the settings system (process.env.X, env.X, env['X']). */
function variablesReadByCode(): Set<string> {
  const names = new Set<string>();
  for (const f of trackedFiles.filter((f) => /^(engine|bench|scripts)\/.*\.(ts|mjs|js|sh)$/.test(f) || f === 'package.json' || f === '.ci/run')) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    for (const m of text.matchAll(/env(?:\.|\[['"])([A-Z][A-Z0-9_]+)/g)) names.add(m[1]!);
    for (const m of text.matchAll(/\$\{?([A-Z][A-Z0-9_]{2,})\b/g)) names.add(m[1]!);
    for (const m of text.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=/g)) names.add(m[1]!);
  }
  return names;
}

/** `code spans` and fenced code lines of a Markdown text. */
function codeOf(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const fenced = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
  return [...spans, ...fenced];
}

describe('the README', () => {
  it('reads in five minutes: a short page, the details in docs/', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(150);
    for (const heading of ['## Set up', '## What you see', '## Where things live', '## Documentation']) expect(README).toContain(`${heading}\n`);
  });

  it('gives the two set-up commands package.json and .ci/run actually run', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(README).toContain('npm install && npm start');
    expect(README).toContain('bash scripts/services.sh && npm test');
    expect(scripts.start).toBeDefined();
    expect(scripts.test).toBeDefined();
    expect(existsSync(join(ROOT, 'scripts/services.sh'))).toBe(true);
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toMatch(/scripts\/services\.sh/);
    expect(ci).toMatch(/npm test/);
  });

  it('lists the ports npm start binds, each under the variable that moves it', () => {
    const start = settingsOf('start');
    const rows = [...README.matchAll(/^\| ([\d /]+) \| [^|]*\(([^)]*)\) \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(8);
    for (const [, portsText, namesText] of rows) {
      const ports = portsText!.trim().split(' / ').map(Number);
      const names = [...namesText!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!);
      expect(names, `row ${portsText}`).toHaveLength(ports.length);
      ports.forEach((port, i) => {
        const setting = Object.values(start).find((s) => s.env === names[i]);
        expect(setting, `${names[i]} is a setting of tidepool start`).toBeDefined();
        expect(setting!.default, `${names[i]} defaults to ${port}`).toBe(port);
      });
    }
  });

  it('names only commands, flags and environment variables that exist, here and in docs/', () => {
    const commands = new Set(COMMANDS.map((c) => c.name));
    const codeVariables = variablesReadByCode();
    const unknown: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      const code = codeOf(readFileSync(join(ROOT, file), 'utf8'));
      for (const text of code) {
        for (const m of text.matchAll(/(?:^|[\s`(])(?:tidepool|main\.js) ([a-z][a-z-]*)/g)) {
          if (!commands.has(m[1]!) && m[1] !== 'start') unknown.push(`${file}: command tidepool ${m[1]}`);
        }
      }
      if (file !== 'README.md') continue;
      for (const text of code) {
        for (const m of text.matchAll(/(?:^|[\s`])--([a-z][a-z0-9-]+)/g)) {
          if (!settingFlags.has(m[1]!)) unknown.push(`${file}: flag --${m[1]}`);
        }
        for (const m of text.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|PORT)\b/g)) {
          if (!settingEnvs.has(m[1]!) && !codeVariables.has(m[1]!)) unknown.push(`${file}: variable ${m[1]}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  it('links every folder README from the documentation index or the README', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8') + README;
    const readmes = trackedFiles.filter((f) => /^(engine|ops|bench|proto|schemas|native)\/.*README\.md$/.test(f));
    const unlinked = readmes.filter((f) => !index.includes(f.replace(/\/README\.md$/, '/')) && !index.includes(f));
    expect(unlinked).toEqual([]);
  });
});
