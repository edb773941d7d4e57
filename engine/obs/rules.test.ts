import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasPromtool, runPromtool } from './promtool.js';

const promtoolMissing = !hasPromtool();
const rulesDir = fileURLToPath(new URL('../../ops/prometheus/', import.meta.url));
const rules = `${rulesDir}tidepool-rules.yml`;
const ruleTests = `${rulesDir}tidepool-rules.test.yml`;

describe('ops/prometheus alert rules', () => {
  it.skipIf(promtoolMissing)('pass promtool check rules with the five alerts of spec 02', () => {
    const r = runPromtool(['check', 'rules', rules]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('SUCCESS: 5 rules found');
    expect(r.status).toBe(0);
  });

  it.skipIf(promtoolMissing)('pass their promtool unit tests (each alert firing and not firing)', () => {
    const r = runPromtool(['test', 'rules', ruleTests]);
    expect(`${r.stdout}${r.stderr}`).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });
});
