/**
 * Checks of PromQL expressions without a Prometheus server: syntax through `promtool check rules`
 * on a generated file of recording rules (promtool parses every `expr`), and the metric names an
 * expression reads, to hold against a service's /metrics.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runPromtool, type PromtoolResult } from '../../engine/obs/promtool.js';

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan', 'Inf', 'NaN']);

/** The metric names `expr` reads (selectors' names; no functions, labels, keywords or numbers). */
export function metricNames(expr: string): string[] {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  s = s.replace(/\{[^}]*\}/g, ' ');
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  s = s.replace(/\[[^\]]*\]/g, ' ');
  const out = new Set<string>();
  for (const m of s.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] !== undefined) continue; // a function call
    if (KEYWORDS.has(m[1]!)) continue;
    out.add(m[1]!);
  }
  return [...out].sort();
}

/** `promtool check rules` on one recording rule per expression: status 0 when all parse. */
export function checkExpressions(exprs: readonly string[]): PromtoolResult {
  const dir = mkdtempSync(join(tmpdir(), 'tp-promql-'));
  try {
    const file = join(dir, 'exprs.yml');
    const rules = exprs.map((e, i) => `      - record: tidepool:dashboard_check_${i}\n        expr: ${JSON.stringify(e)}`).join('\n');
    writeFileSync(file, `groups:\n  - name: dashboard-expressions\n    rules:\n${rules}\n`);
    return runPromtool(['check', 'rules', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every metric name an exposition declares or carries: TYPE lines (histograms with their _bucket / _sum / _count) and samples. */
export function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      names.add(type[1]!);
      if (type[2] === 'histogram' || type[2] === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${type[1]}${suffix}`);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}
