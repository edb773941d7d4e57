/**
 * The table `npm run bench` prints and saves: every figure of every suite (value, the baseline of
 * the same run, ratio, p50/p99/p99.9 from HDR histograms, goal), a row per suite that failed or timed
 * out with its reason, and with `--compare` the previous value and the change, regressions flagged.
 */
import type { RunComparison } from './compare.js';
import { figureKey } from './compare.js';
import type { SuiteRecord } from './results-store.js';

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined || Number.isNaN(n) ? '' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const amount = (n: number): string => fmt(n, Math.abs(n) < 100 ? 2 : 0);

/** A table cell: no pipe or line break may break the row. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

const STATUS_WORD = { ok: 'ok', failed: 'FAILED', timeout: 'TIMED OUT' } as const;

export function runTable(suites: readonly SuiteRecord[], comparison?: RunComparison): string {
  const compare = comparison !== undefined;
  const rows = [
    `| suite | figure | value | baseline | ratio | p50 µs | p99 µs | p99.9 µs | goal |${compare ? ' previous | change |' : ''}`,
    `|---|---|---:|---|---:|---:|---:|---:|---|${compare ? '---:|---|' : ''}`,
  ];
  for (const r of suites) {
    if (r.status !== 'ok') {
      rows.push(`| ${r.suite} | **${STATUS_WORD[r.status]}**: ${cell(r.reason)} | | | | | | | |${compare ? ' | |' : ''}`);
      continue;
    }
    for (const f of r.figures) {
      const goal = f.goal === undefined ? '' : `${f.goal} ${f.goalMet === undefined ? '' : f.goalMet ? '(met)' : '(not met)'}`;
      let tail = '';
      if (compare) {
        const c = comparison.figures.get(figureKey(r.suite, f.name));
        if (c === undefined) tail = ' | new |';
        else {
          const change = Number.isNaN(c.worse) ? 'n/a' : c.worse > 0 ? `+${fmt(c.worse * 100, 1)}% worse` : `${fmt(-c.worse * 100, 1)}% better`;
          tail = ` ${amount(c.previous)} ${cell(f.unit)} | ${c.regression ? `**REGRESSION** ${change}` : change} |`;
        }
      }
      rows.push(
        `| ${r.suite} | ${cell(f.name)} | ${amount(f.value)} ${cell(f.unit)} | ${cell(f.baseline.name)}: ${amount(f.baseline.value)} ${cell(f.unit)} | ${fmt(f.ratio, 2)}× | ${fmt(f.p50Us, 1)} | ${fmt(f.p99Us, 1)} | ${fmt(f.p999Us, 1)} | ${cell(goal.trim())} |${tail}`,
      );
    }
  }
  return `${rows.join('\n')}\n`;
}

/** The lines under the table: which suites ran, failed, timed out; regressions; clean-up trouble. */
export function runSummary(suites: readonly SuiteRecord[], comparison?: RunComparison): string[] {
  const lines: string[] = [];
  const ok = suites.filter((s) => s.status === 'ok');
  const bad = suites.filter((s) => s.status !== 'ok');
  lines.push(
    bad.length === 0
      ? `bench: all ${suites.length} suite${suites.length === 1 ? '' : 's'} ran to the end`
      : `bench: ${ok.length} of ${suites.length} suites ran to the end; ${bad.map((s) => `${s.suite} ${s.status === 'timeout' ? 'timed out' : 'failed'}`).join(', ')}`,
  );
  for (const s of suites) {
    if (s.cleanup.removed.length > 0) lines.push(`bench: ${s.suite}: cleaned up after it: ${s.cleanup.removed.join('; ')}`);
    if (s.cleanup.failed.length > 0) lines.push(`bench: ${s.suite}: COULD NOT CLEAN UP: ${s.cleanup.failed.join('; ')}`);
  }
  if (comparison !== undefined) {
    const pct = `${Math.round(comparison.threshold * 100)}%`;
    if (comparison.noPrevious.length > 0) lines.push(`bench: --compare: no previous run of this machine for ${comparison.noPrevious.join(', ')}`);
    if (comparison.missing.length > 0) lines.push(`bench: --compare: figures of the previous run missing from this one: ${comparison.missing.join('; ')}`);
    lines.push(
      comparison.regressions.length === 0
        ? `bench: --compare: no figure worse by more than ${pct} than the previous run of this machine`
        : `bench: --compare: ${comparison.regressions.length} figure${comparison.regressions.length === 1 ? '' : 's'} worse by more than ${pct}: ${comparison.regressions
            .map((c) => `${c.suite}: ${c.figure} ${amount(c.previous)} → ${amount(c.current)} ${c.unit} (+${fmt(c.worse * 100, 1)}%, previous run ${c.previousCommit} at ${c.previousAt})`)
            .join('; ')}`,
    );
  }
  return lines;
}
