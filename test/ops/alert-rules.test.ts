/**
 * The alert rules of every service (ops/prometheus/rules/*.yml): promtool checks them, runs their
 * unit tests (ops/prometheus/rules/tests/*.test.yml), and every alert has at least one test case
 * where it fires and one where it does not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { hasPromtool, runPromtool } from '../../engine/obs/promtool.js';

const RULES = resolve(import.meta.dirname, '../../ops/prometheus/rules');
const TESTS = join(RULES, 'tests');
const ruleFiles = readdirSync(RULES).filter((f) => f.endsWith('.yml')).sort();
const testFiles = readdirSync(TESTS).filter((f) => f.endsWith('.test.yml')).sort();
const promtoolMissing = !hasPromtool();

/** `- alert: Name` lines of a rules file. */
function alertNames(text: string): string[] {
  return [...text.matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)].map((m) => m[1]!);
}

/** Each alert_rule_test case of a test file: its alert and whether it expects alerts. */
function cases(text: string): { alert: string; fires: boolean }[] {
  return text
    .split(/^\s*- eval_time:/m)
    .slice(1)
    .map((block) => ({ alert: /alertname:\s*(\S+)/.exec(block)![1]!, fires: !/exp_alerts:\s*\[\]/.test(block) }));
}

describe('alert rules of every service', () => {
  it('cover the quote service, scanner, aggregator, external quotes, RPC proxy, planners, executors, wallets and the bus', () => {
    expect(ruleFiles).toEqual(['aggregator.yml', 'bus.yml', 'executors.yml', 'external-quotes.yml', 'planners.yml', 'quote-service.yml', 'rpc-proxy.yml', 'scanner.yml', 'targets.yml', 'wallets.yml']);
    expect(testFiles).toEqual(ruleFiles.map((f) => f.replace(/\.yml$/, '.test.yml')));
  });

  it.skipIf(promtoolMissing)('pass promtool check rules', () => {
    const r = runPromtool(['check', 'rules', ...ruleFiles.map((f) => join(RULES, f))]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.match(/SUCCESS: \d+ rules found/g)).toHaveLength(ruleFiles.length);
  });

  it.skipIf(promtoolMissing)('pass their promtool unit tests', () => {
    const r = runPromtool(['test', 'rules', ...testFiles.map((f) => join(TESTS, f))]);
    expect(`${r.stdout}${r.stderr}`).not.toContain('FAILED');
    expect(r.status).toBe(0);
  });

  for (const file of ruleFiles) {
    it(`${file}: every alert has a case that fires it and one that does not`, () => {
      const alerts = alertNames(readFileSync(join(RULES, file), 'utf8'));
      expect(alerts.length).toBeGreaterThan(0);
      const test = readFileSync(join(TESTS, file.replace(/\.yml$/, '.test.yml')), 'utf8');
      expect(test).toContain(`rule_files: [../${file}]`);
      const all = cases(test);
      for (const alert of alerts) {
        expect(all.some((c) => c.alert === alert && c.fires), `${alert} fires somewhere`).toBe(true);
        expect(all.some((c) => c.alert === alert && !c.fires), `${alert} stays quiet somewhere`).toBe(true);
      }
    });
  }
});
