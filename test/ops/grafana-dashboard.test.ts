/**
 * The Grafana dashboard (ops/grafana/dashboards/tidepool.json): a row per service, and every query
 * checked: it parses as PromQL (promtool), selects its row's job, and every metric it names is in
 * that service's /metrics, scraped from the real services started here on port 0. The services
 * that export no metrics yet (planners, executors, wallets, dead letters) may name only the metrics
 * listed in ops/prometheus/assumed-metrics.json. The alert rules are held to the same scrapes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAggregatorApp, type AggregatorApp } from '../../engine/app/aggregator-app.js';
import { PARSE_WORKER, startEngineUnderSim, type EngineUnderSim } from '../../engine/app/testing.js';
import { defaultAggregatorConfig } from '../../engine/aggregator/aggregator-config.js';
import { defaultExternalConfig } from '../../engine/external/external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from '../../engine/external/external-quote-service.js';
import { createLogger } from '../../engine/obs/logger.js';
import { hasPromtool } from '../../engine/obs/promtool.js';
import { defaultRpcProxyConfig } from '../../engine/rpc-proxy/rpc-proxy-config.js';
import { EXECUTOR_METRIC_NAMES } from '../../engine/executor/executor-metrics.js';
import { PLANNER_METRIC_NAMES } from '../../engine/planner/planner-metrics.js';
import { createRpcProxy, type RpcProxy } from '../../engine/rpc-proxy/rpc-proxy.js';
import { checkExpressions, exposedNames, metricNames } from './promql.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops/grafana/dashboards/tidepool.json'), 'utf8')) as { uid: string; panels: Panel[] };
const assumed = JSON.parse(readFileSync(join(ROOT, 'ops/prometheus/assumed-metrics.json'), 'utf8')) as Record<string, string[] | string>;
const RUNNING = ['quote-service', 'scanner', 'aggregator', 'external-quotes', 'rpc-proxy'] as const;
const PENDING = ['planner', 'executor', 'wallets', 'bus'] as const;

interface Panel {
  type: string;
  title: string;
  tidepoolService?: string;
  targets?: { expr: string }[];
}

/** Each query of the dashboard with the service of its row. */
function queries(): { service: string; panel: string; expr: string }[] {
  const out: { service: string; panel: string; expr: string }[] = [];
  let service = '';
  for (const p of dashboard.panels) {
    if (p.type === 'row') service = p.tidepoolService ?? '';
    else for (const t of p.targets ?? []) out.push({ service, panel: p.title, expr: t.expr });
  }
  return out;
}

/** Each alert expression of ops/prometheus/rules/<service>.yml (multi-line `|` blocks included). */
function ruleExpressions(file: string): string[] {
  const text = readFileSync(join(ROOT, 'ops/prometheus/rules', file), 'utf8');
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (m === null) continue;
    if (m[2] !== '|') {
      out.push(m[2]!);
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || lines[i + 1]!.search(/\S/) > m[1]!.length)) block.push(lines[++i]!.trim());
    out.push(block.join(' '));
  }
  return out;
}

describe('the Grafana dashboard', () => {
  it('has a row per service, in the issue\'s list, and a provisioning file that loads it', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.tidepoolService);
    expect(rows).toEqual(['quote-service', 'scanner', 'aggregator', 'external-quotes', 'rpc-proxy', 'planner', 'executor', 'wallets', 'bus']);
    for (const service of rows) expect(queries().filter((q) => q.service === service).length, service).toBeGreaterThan(0);
    const provisioning = readFileSync(join(ROOT, 'ops/grafana/provisioning/dashboards/tidepool.yml'), 'utf8');
    expect(provisioning).toContain('type: file');
    expect(existsSync(join(ROOT, 'ops/grafana/provisioning/datasources/prometheus.yml'))).toBe(true);
  });

  it('selects its row\'s job in every query (the jobs of the scrape configurations)', () => {
    for (const q of queries()) {
      if (q.service === 'bus') continue; // dead letters come from whichever service consumes a stream
      expect(q.expr, q.panel).toContain(`job="${q.service}"`);
    }
  });

  it.skipIf(!hasPromtool())('parses as PromQL, query by query (promtool)', () => {
    const exprs = queries().map((q) => q.expr);
    const r = checkExpressions(exprs);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.status).toBe(0);
  });

  it.skipIf(!hasPromtool())('the parse check refuses a broken expression', () => {
    const r = checkExpressions(['sum(rate(quote_service_quotes_total[1m])']);
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/unclosed|parse error|expected/i);
  });

  it('names no metric but the listed ones for the services that do not export theirs yet', () => {
    for (const service of PENDING) {
      const allowed = new Set(assumed[service] as string[]);
      for (const q of queries().filter((x) => x.service === service)) {
        for (const name of metricNames(q.expr)) expect(allowed.has(name.replace(/_bucket$/, '')), `${q.panel}: ${name}`).toBe(true);
      }
    }
    for (const [file, service] of [['planners.yml', 'planner'], ['executors.yml', 'executor'], ['wallets.yml', 'wallets'], ['bus.yml', 'bus']] as const) {
      const allowed = new Set(assumed[service] as string[]);
      for (const expr of ruleExpressions(file)) for (const name of metricNames(expr)) expect(allowed.has(name.replace(/_bucket$/, '')), `${file}: ${name}`).toBe(true);
    }
  });

  it("names the planner's metrics as the planner exports them", () => {
    const exported = new Set<string>(Object.values(PLANNER_METRIC_NAMES));
    for (const name of assumed['planner'] as string[]) expect(exported.has(name), name).toBe(true);
  });

  it("names the executor's metrics as the executor exports them", () => {
    const exported = new Set<string>(Object.values(EXECUTOR_METRIC_NAMES));
    for (const name of assumed['executor'] as string[]) expect(exported.has(name), name).toBe(true);
  });

  it('reads metric names the way PromQL does', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{job="x", source="cache"}[5m]))) > 1e9')).toEqual(['a_seconds_bucket']);
    expect(metricNames('b_total / on (job) group_left c_total and d == 0 unless up{job=~"a|b"} offset 5m')).toEqual(['b_total', 'c_total', 'd', 'up']);
  });
});

describe.skipIf(!existsSync(PARSE_WORKER))('the dashboard and the alert rules against the services\' /metrics', () => {
  let e: EngineUnderSim;
  let external: ExternalQuoteService;
  let aggregator: AggregatorApp;
  let proxy: RpcProxy;
  const exposed = new Map<string, Set<string>>();
  const logger = createLogger({ name: 'ops-test', level: 'silent' });

  beforeAll(async () => {
    e = await startEngineUnderSim();
    external = createExternalQuoteService(defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: `${e.simEndpoints.http}/quote` }), { logger });
    const ext = await external.start();
    aggregator = await createAggregatorApp(defaultAggregatorConfig({ grpcPort: 0, httpPort: 0, localQuoteAddr: e.endpoints.localQuotes, externalQuoteAddr: ext.grpc, busEnabled: false, shutdownTimeout: 2000 }), { logger });
    const agg = await aggregator.start();
    proxy = createRpcProxy(defaultRpcProxyConfig({ endpoints: [e.simEndpoints.rpc], port: 0, health_check_interval: 60_000 }), { logger });
    const proxyPort = await proxy.start();
    const scrape = async (service: string, url: string): Promise<void> => {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      exposed.set(service, exposedNames(await res.text()));
    };
    await scrape('quote-service', e.endpoints.quoteMetrics);
    await scrape('scanner', e.endpoints.scannerMetrics);
    await scrape('external-quotes', `${ext.metrics}/metrics`);
    await scrape('aggregator', `http://127.0.0.1:${agg.httpPort}/metrics`);
    await scrape('rpc-proxy', `http://127.0.0.1:${proxyPort}/rpc/metrics`);
  });

  afterAll(async () => {
    await proxy?.close();
    await aggregator?.close();
    await external?.close();
    await e?.close();
  });

  it('finds every metric of every query in its service\'s /metrics', () => {
    let checked = 0;
    for (const q of queries().filter((x) => (RUNNING as readonly string[]).includes(x.service))) {
      const names = exposed.get(q.service)!;
      for (const name of metricNames(q.expr)) {
        expect(names.has(name), `${q.service} / ${q.panel}: ${name}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('finds every metric of the alert rules in their service\'s /metrics', () => {
    const files = readdirSync(join(ROOT, 'ops/prometheus/rules')).filter((f) => f.endsWith('.yml'));
    for (const service of RUNNING) {
      const file = `${service}.yml`;
      expect(files).toContain(file);
      for (const expr of ruleExpressions(file)) for (const name of metricNames(expr)) expect(exposed.get(service)!.has(name), `${file}: ${name}`).toBe(true);
    }
    // Spec 02's rules (ops/prometheus/tidepool-rules.yml) read the scanner's and the quote service's.
    const both = new Set([...exposed.get('scanner')!, ...exposed.get('quote-service')!]);
    const spec02 = readFileSync(join(ROOT, 'ops/prometheus/tidepool-rules.yml'), 'utf8');
    for (const m of spec02.matchAll(/\b(blockstream_\w+|end_to_end_\w+|parsing_errors_total|bus_publish_errors_total|quote_service_\w+)/g)) expect(both.has(m[1]!), m[1]).toBe(true);
  });
});
