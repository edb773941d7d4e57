/**
 * The specs' default ports collide (the aggregator's HTTP 8080 is the quote service's, the
 * scanner's and the quote service's METRICS_PORT differ, …). Wherever several services run on one
 * machine, each must be set apart explicitly. This reads scripts/run-split.sh as the shell would
 * run it and checks that no two of its processes bind the same port.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { COMMANDS } from '../engine/cli/commands/index.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Settings that name a port to connect to, not one to bind. */
const TARGET_PORTS = new Set(['blockstream.port', 'blockstream.heartbeatPort']);

interface Invocation {
  command: string;
  env: Map<string, string>;
  flags: Map<string, string>;
}

/** The `tidepool <command>` processes of the script, with the variables and flags each is given. */
function invocations(script: string): Invocation[] {
  const logical = script.replace(/\\\n\s*/g, ' ').split('\n');
  const out: Invocation[] = [];
  for (const line of logical) {
    const m = /^\s*((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)"\$\{tidepool\[@\]\}"\s+([a-z-]+)([^&]*)&\s*$/.exec(line);
    if (m === null) continue;
    const env = new Map([...m[1]!.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((a) => [a[1]!, a[2]!] as [string, string]));
    const flags = new Map([...m[3]!.matchAll(/--([a-z-]+)[ =](\S+)/g)].map((a) => [a[1]!, a[2]!] as [string, string]));
    out.push({ command: m[2]!, env, flags });
  }
  return out;
}

/** The ports a process binds: each listening port setting, from its flag, its variable or its default. */
function boundPorts(inv: Invocation): Map<string, number> {
  const command = COMMANDS.find((c) => c.name === inv.command);
  if (command === undefined) throw new Error(`run-split.sh runs an unknown command ${inv.command}`);
  const ports = new Map<string, number>();
  for (const [key, s] of Object.entries(command.settings ?? {})) {
    if (!/port$/i.test(key) || TARGET_PORTS.has(key) || typeof s.default !== 'number') continue;
    const given = (s.flag !== undefined ? inv.flags.get(s.flag) : undefined) ?? (s.env !== undefined ? inv.env.get(s.env) : undefined);
    ports.set(key, given === undefined ? s.default : Number(given));
  }
  return ports;
}

describe('scripts/run-split.sh', () => {
  const script = readFileSync(join(ROOT, 'scripts/run-split.sh'), 'utf8');
  const runs = invocations(script);

  it('runs every service of the split deployment', () => {
    const commands = runs.map((r) => r.command);
    for (const c of ['sim', 'rpc-proxy', 'scanner', 'quote-service', 'external-quotes', 'aggregator', 'market-scanner', 'planner', 'executor']) {
      expect(commands).toContain(c);
    }
  });

  it('binds no port twice: every colliding default is moved explicitly', () => {
    const owners = new Map<number, string>();
    const clashes: string[] = [];
    for (const run of runs) {
      for (const [key, port] of boundPorts(run)) {
        const owner = owners.get(port);
        if (owner !== undefined) clashes.push(`${port}: ${owner} and ${run.command} ${key}`);
        owners.set(port, `${run.command} ${key}`);
      }
    }
    expect(clashes).toEqual([]);
    expect(owners.size).toBeGreaterThanOrEqual(15);
  });

  it('would catch a clash: the aggregator left on its spec default takes the quote service\'s 8080', () => {
    const aggregator = runs.find((r) => r.command === 'aggregator')!;
    const bare = { ...aggregator, env: new Map([...aggregator.env].filter(([k]) => k !== 'AGGREGATOR_HTTP_PORT')) };
    const quote = runs.find((r) => r.command === 'quote-service')!;
    expect(boundPorts(bare).get('httpPort')).toBe(boundPorts(quote).get('port'));
  });
});
