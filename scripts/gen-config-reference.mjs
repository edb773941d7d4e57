// Writes docs/configuration.md from the settings every command declares. Run after `npm run build`
// (npm run docs:config does both).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { COMMANDS } = await import(join(root, 'dist/engine/cli/commands/index.js'));
const { renderConfigReference } = await import(join(root, 'dist/engine/cli/config-reference.js'));
const out = join(root, 'docs', 'configuration.md');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, renderConfigReference(COMMANDS));
console.log(`wrote ${out}`);
