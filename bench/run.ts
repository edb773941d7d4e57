import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SuiteResult, markdownTable, ratioOf } from './harness.js';
import { SUITES } from './suites/index.js';

/**
 * `npm run bench [-- suite...]`: runs the named suites (all by default), prints a table and writes
 * bench/results/<suite>.json, bench/results/latest.md and a timestamped copy of both.
 */
async function main(): Promise<number> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  if (process.argv.includes('--list')) {
    for (const s of SUITES) process.stdout.write(`${s.name.padEnd(12)} ${s.description}\n`);
    return 0;
  }
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown suite(s): ${unknown.join(', ')}; known: ${SUITES.map((s) => s.name).join(', ')}\n`);
    return 2;
  }
  const selected = names.length === 0 ? SUITES : SUITES.filter((s) => names.includes(s.name));
  const { nativeStatus } = await import('../engine/chain/native-parser.js');
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const outDir = join(root, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const results: SuiteResult[] = [];
  for (const suite of selected) {
    process.stderr.write(`bench: running ${suite.name}: ${suite.description}\n`);
    const started = Date.now();
    const figures = await suite.run();
    const result: SuiteResult = {
      suite: suite.name,
      description: suite.description,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', native: nativeStatus.loaded },
      figures: figures.map((f) => ({ ...f, ratio: ratioOf(f) })),
    };
    results.push(result);
    const json = `${JSON.stringify(result, null, 2)}\n`;
    writeFileSync(join(outDir, `${suite.name}.json`), json);
    writeFileSync(join(outDir, `${suite.name}-${stamp}.json`), json);
    process.stdout.write(markdownTable([result]));
  }
  const table = markdownTable(results);
  writeFileSync(join(outDir, 'latest.md'), `# tidepool benchmarks, ${new Date().toISOString()}\n\n${table}`);
  process.stdout.write(`\nresults written to ${outDir}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
