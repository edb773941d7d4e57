import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { duration, loadConfig, setting, str } from '../config/index.js';
import { COMMANDS } from './commands/index.js';
import { renderConfigReference, settingsTable } from './config-reference.js';

describe('the configuration reference', () => {
  it('docs/configuration.md is the rendering of every command\'s settings (npm run docs:config)', () => {
    const file = readFileSync(resolve(import.meta.dirname, '../../docs/configuration.md'), 'utf8');
    expect(file, 'docs/configuration.md is out of date: run npm run docs:config').toBe(renderConfigReference(COMMANDS));
  });

  it('lists each setting with its flag, variable and default; durations as text the loader reads back; secrets hidden', () => {
    const schema = {
      'a.timeout': setting({ description: 'how long | at most', parse: duration(), default: 90_000, env: 'A_TIMEOUT', flag: 'a-timeout' }),
      'a.token': setting({ description: 'a token', parse: str(), default: 'hunter2', env: 'A_TOKEN', secret: true }),
    };
    const table = settingsTable(schema);
    expect(table).toContain('| `a.timeout` | `--a-timeout` | `A_TIMEOUT` | `1m30s` | how long \\| at most |');
    expect(table).toContain('| `a.token` |  | `A_TOKEN` | (secret) | a token |');
    expect(table).not.toContain('hunter2');
    expect(loadConfig(schema, { env: { A_TIMEOUT: '1m30s' } }).values['a.timeout']).toBe(90_000);
  });

  it('shows a default computed from the machine by its rule, so the reference is the same on every machine', () => {
    const schema = {
      workers: setting({ description: 'threads', parse: str(), default: 'depends', defaultText: 'cores - 1' }),
    };
    expect(settingsTable(schema)).toContain('| `workers` |  |  | `cores - 1` | threads |');
    const text = renderConfigReference(COMMANDS);
    expect(text).toContain('| `PARSE_WORKERS` | `cores - 1, at least 1` |');
    expect(text).toContain('| `RPC_READ_THREAD` | `true with 4 or more cores` |');
  });

  it('covers every command that reads settings', () => {
    const text = renderConfigReference(COMMANDS);
    for (const c of COMMANDS.filter((c) => c.settings !== undefined)) expect(text).toContain(`## tidepool ${c.name}\n`);
    expect(COMMANDS.filter((c) => c.settings !== undefined).map((c) => c.name)).toEqual(
      expect.arrayContaining(['aggregator', 'engine', 'external-quotes', 'quote-service', 'scanner', 'sim', 'start']),
    );
  });
});
