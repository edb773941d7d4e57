/**
 * The Prometheus scrape configurations of ops/prometheus/ (scripts/run-split.sh and npm start):
 * valid for `promtool check config` (which also checks every rule file they load), their jobs are
 * the ones the rules and the dashboard select, and their targets are the services' default ports.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { executorSchema } from '../../engine/app/executor-app.js';
import { plannerSchema } from '../../engine/app/planner-app.js';
import { walletServiceSchema } from '../../engine/app/wallet-service-app.js';
import { startSchema } from '../../engine/app/start-config.js';
import { scannerServiceSchema } from '../../engine/app/scanner-app.js';
import { aggregatorSchema } from '../../engine/aggregator/aggregator-config.js';
import { externalSchema } from '../../engine/external/external-config.js';
import { hasPromtool, runPromtool } from '../../engine/obs/promtool.js';
import { rpcProxySchema } from '../../engine/rpc-proxy/rpc-proxy-config.js';
import { quoteSchema } from '../../engine/quote-service/quote-config.js';

const DIR = resolve(import.meta.dirname, '../../ops/prometheus');

/** job name → its targets and metrics path, read from a scrape configuration. */
function jobs(file: string): Map<string, { targets: string[]; path: string }> {
  const out = new Map<string, { targets: string[]; path: string }>();
  const text = readFileSync(join(DIR, file), 'utf8').replace(/#.*$/gm, '');
  for (const block of text.split(/^\s*- job_name:/m).slice(1)) {
    const name = /^\s*(\S+)/.exec(block)![1]!;
    const targets = [...block.matchAll(/targets:\s*\[([^\]]*)\]/g)].flatMap((m) => m[1]!.split(',').map((t) => t.trim().replace(/^'|'$/g, '')));
    out.set(name, { targets, path: /metrics_path:\s*(\S+)/.exec(block)?.[1] ?? '/metrics' });
  }
  return out;
}

describe('Prometheus scrape configurations', () => {
  for (const file of ['prometheus-split.yml', 'prometheus-start.yml']) {
    it.skipIf(!hasPromtool())(`${file} passes promtool check config with every rule file`, () => {
      const r = runPromtool(['check', 'config', join(DIR, file)]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(`SUCCESS: ${join(DIR, file)} is valid prometheus config file syntax`);
      expect(r.stdout).toContain('SUCCESS: 11 rule files found');
    });
  }

  it('scrape the split services on their default ports', () => {
    const d = (schema: Record<string, { default: unknown }>, key: string): string => `127.0.0.1:${String(schema[key]!.default)}`;
    expect(Object.fromEntries(jobs('prometheus-split.yml'))).toEqual({
      'quote-service': { targets: [d(quoteSchema, 'metrics.port')], path: '/metrics' },
      scanner: { targets: [d(scannerServiceSchema, 'metrics.prometheusPort')], path: '/metrics' },
      aggregator: { targets: ['127.0.0.1:8082'], path: '/metrics' }, // run-split.sh sets AGGREGATOR_HTTP_PORT=8082
      'external-quotes': { targets: [d(externalSchema, 'metrics.port')], path: '/metrics' },
      'rpc-proxy': { targets: [d(rpcProxySchema, 'port')], path: '/rpc/metrics' },
      planner: { targets: [d(plannerSchema, 'planner.port')], path: '/metrics' },
      executor: { targets: [d(executorSchema, 'executor.port')], path: '/metrics' },
      wallets: { targets: [d(walletServiceSchema, 'wallets.port')], path: '/metrics' },
    });
    expect(String(aggregatorSchema.httpPort.default)).not.toBe('');
  });

  it("scrape npm start's services on its default ports", () => {
    const d = (key: keyof typeof startSchema): string => `127.0.0.1:${String(startSchema[key].default)}`;
    expect(Object.fromEntries(jobs('prometheus-start.yml'))).toEqual({
      'quote-service': { targets: [d('metrics.port')], path: '/metrics' },
      scanner: { targets: [d('scanner.metricsPort')], path: '/metrics' },
      aggregator: { targets: [d('aggregator.httpPort')], path: '/metrics' },
      'external-quotes': { targets: [d('external.metrics.port')], path: '/metrics' },
      executor: { targets: [d('paper.port')], path: '/metrics' },
    });
  });

  it('name the jobs the alert rules and the dashboard select', () => {
    const targets = readFileSync(join(DIR, 'rules/targets.yml'), 'utf8');
    const dashboard = readFileSync(resolve(DIR, '../grafana/dashboards/tidepool.json'), 'utf8');
    for (const job of jobs('prometheus-split.yml').keys()) {
      expect(targets).toContain(job);
      expect(dashboard).toContain(`job=\\"${job}\\"`);
    }
  });
});
