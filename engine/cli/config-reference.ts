/**
 * docs/configuration.md, rendered from the settings every command declares (`Command.settings`),
 * so the reference cannot drift from the code: a test compares the file with this rendering, and
 * `npm run docs:config` writes it.
 */
import { formatDefault, type ConfigSchema } from '../config/index.js';
import type { Command } from './command.js';

const INTRO = `# Configuration reference

Generated from the settings each command declares (\`engine/cli/config-reference.ts\`); do not edit
by hand: run \`npm run docs:config\` after changing a setting.

Every long-running command reads its settings from, in order of precedence:

1. its command-line flag (\`--port 8080\`);
2. its environment variable (\`PORT=8080\`);
3. a JSON config file given with \`--config FILE\` or \`TIDEPOOL_CONFIG\`, keyed by the setting's
   name (\`{"cache.stalenessThreshold": "30s"}\`);
4. the default.

Durations take \`10ms\`, \`30s\`, \`1m30s\` or a number of milliseconds. Lists take commas
(\`a,b,c\`) or a JSON array in the config file. Every invalid value is reported at start, naming the
setting and where it came from, and the command exits 1. Settings marked secret are never printed
(help, logs, \`/config\`).
`;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** One command's settings as a Markdown table. */
export function settingsTable(schema: ConfigSchema): string {
  const rows = Object.entries(schema).map(([key, def]) => {
    const flag = def.flag !== undefined ? `\`--${def.flag}\`` : '';
    const env = def.env !== undefined ? `\`${def.env}\`` : '';
    const dflt = def.secret ? '(secret)' : `\`${cell(formatDefault(def))}\``;
    return `| \`${key}\` | ${flag} | ${env} | ${dflt} | ${cell(def.description)} |`;
  });
  return ['| setting | flag | environment | default | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The whole reference: every command that declares settings, in name order. */
export function renderConfigReference(commands: readonly Command[]): string {
  const sections = [...commands]
    .filter((c) => c.settings !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => `## tidepool ${c.name}\n\n${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.\n\n${settingsTable(c.settings!)}\n`);
  return `${INTRO}\n${sections.join('\n')}`;
}
