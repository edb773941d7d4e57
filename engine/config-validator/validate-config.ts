import { readFileSync } from 'node:fs';

import { busAuthOf, parseUpstreamAddress, serverTlsOf, upstreamTargetsOf, upstreamTlsOf, type BusAuth, type UpstreamTarget } from '../config/index.js';
import { TpError } from '../errors.js';
import { maskSecretsInText } from '../secret-mask.js';
import { keypairFromBase58 } from '../wallets/index.js';
import { checkBlockEngine, checkExternalQuote, checkNats, checkPostgres, checkRedis, checkQuoteUpstream, checkRpc, checkShredstream, type ConnectionCheck } from './connection-checks.js';
import { schemaViolations, type PlatformConfig, type Violation } from './config-schema.js';

/**
 * `tidepool validate-config`: the schema (every violation at once, each with its path), each
 * wallet key (the public half of its 64 bytes must be the key its seed derives), then each
 * connection. Exit codes: 0 valid, 1 invalid, 2 valid but a dependency unreachable.
 */

export const ValidationExit = { Valid: 0, Invalid: 1, Unreachable: 2 } as const;

export interface WalletKeyCheck {
  path: string;
  /** The public key, when the secret is sound. */
  address?: string;
  error?: string;
}

export interface ConfigReport {
  violations: Violation[];
  keys: WalletKeyCheck[];
  connections: ConnectionCheck[];
  exitCode: number;
}

/** Reads FILE as JSON; a file that is not JSON is one violation at `/`. */
export function readConfigFile(path: string): { config: unknown; violations: Violation[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { config: undefined, violations: [{ path: '/', message: `cannot read ${path}: ${(err as Error).message}` }] };
  }
  try {
    return { config: JSON.parse(text) as unknown, violations: [] };
  } catch (err) {
    return { config: undefined, violations: [{ path: '/', message: `not JSON: ${(err as Error).message}` }] };
  }
}

function checkKey(path: string, value: unknown): WalletKeyCheck | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return { path, address: keypairFromBase58(value, path).address };
  } catch (err) {
    return { path, error: err instanceof TpError ? err.message : String(err) };
  }
}

export interface ValidateOptions {
  /** Skip the connection tests. */
  offline?: boolean;
  /** Per connection. Default: the config's rpcTimeout, or 5000 ms. */
  timeoutMs?: number;
}

/** The bus credentials and TLS of a platform config, as the services take them (engine/bus bus-auth.ts). */
function natsAuthOf(c: Partial<PlatformConfig>): BusAuth {
  return busAuthOf({
    'bus.token': c.natsToken ?? '',
    'bus.user': c.natsUser ?? '',
    'bus.password': c.natsPassword ?? '',
    'bus.credsFile': c.natsCredsFile ?? '',
    'bus.tls': c.natsTls ?? false,
    'bus.tlsCaFile': c.natsTlsCaFile ?? '',
    'bus.tlsCertFile': c.natsTlsCertFile ?? '',
    'bus.tlsKeyFile': c.natsTlsKeyFile ?? '',
  });
}

/** The platform config key of each TLS setting, for the violation's path. */
const TLS_PATHS: Record<string, string> = {
  'tls.certFile': '/tlsCertFile',
  'tls.keyFile': '/tlsKeyFile',
  'tls.upstreamCaFile': '/upstreamTlsCaFile',
  localQuoteAddr: '/localQuoteAddr',
  externalQuoteAddr: '/externalQuoteAddr',
};

type UpstreamName = 'localQuoteAddr' | 'externalQuoteAddr';

/** The aggregator upstreams a platform config names well (others are schema violations already). */
function upstreamAddressesOf(c: Partial<PlatformConfig>): Partial<Record<UpstreamName, string>> {
  const out: Partial<Record<UpstreamName, string>> = {};
  for (const name of ['localQuoteAddr', 'externalQuoteAddr'] as const) {
    const address = c[name];
    if (typeof address === 'string' && typeof parseUpstreamAddress(address) !== 'string') out[name] = address;
  }
  return out;
}

/**
 * How the aggregator would reach the upstreams of `c`, as it decides at start (engine/config
 * server-tls-settings.ts `upstreamTargetsOf`): TLS by each address's scheme, else `upstreamTls`.
 */
function upstreamTargetsOfConfig(c: Partial<PlatformConfig>): Partial<Record<UpstreamName, UpstreamTarget>> {
  const caFile = typeof c.upstreamTlsCaFile === 'string' ? c.upstreamTlsCaFile : '';
  return upstreamTargetsOf({ 'tls.upstream': c.upstreamTls === true, 'tls.upstreamCaFile': caFile }, upstreamAddressesOf(c) as Record<UpstreamName, string>);
}

/**
 * The services' TLS files, read as the services read them at start (engine/config
 * server-tls-settings.ts): readable, PEM, and the key the certificate's. Each failure names the setting.
 */
function tlsViolations(c: Partial<PlatformConfig>): Violation[] {
  const violations: Violation[] = [];
  const violation = (err: unknown): Violation => {
    const setting = err instanceof TpError && typeof err.context?.['setting'] === 'string' ? err.context['setting'] : 'tls.certFile';
    return { path: TLS_PATHS[setting] ?? '/', message: err instanceof Error ? err.message : String(err) };
  };
  const file = (value: unknown): string => (typeof value === 'string' ? value : ''); // other types are schema violations
  try {
    serverTlsOf({ 'tls.certFile': file(c.tlsCertFile), 'tls.keyFile': file(c.tlsKeyFile) });
  } catch (err) {
    violations.push(violation(err));
  }
  try {
    // With the upstream addresses named, the CA file must serve one that uses TLS (as the
    // aggregator requires at start); without them, it must at least be a readable PEM certificate.
    if (Object.keys(upstreamAddressesOf(c)).length > 0) upstreamTargetsOfConfig(c);
    else if (file(c.upstreamTlsCaFile) !== '') upstreamTlsOf({ 'tls.upstream': true, 'tls.upstreamCaFile': file(c.upstreamTlsCaFile) });
  } catch (err) {
    violations.push(violation(err));
  }
  return violations;
}

export async function validateConfig(config: unknown, options: ValidateOptions = {}): Promise<ConfigReport> {
  const c = (config ?? {}) as Partial<PlatformConfig>;
  const schema = schemaViolations(config);
  const violations = [...schema, ...(config !== null && typeof config === 'object' ? tlsViolations(c) : [])];
  const keys: WalletKeyCheck[] = [];
  const treasure = checkKey('/treasureWallet', c.treasureWallet);
  if (treasure !== undefined) keys.push(treasure);
  if (Array.isArray(c.workerWallets)) c.workerWallets.forEach((w, i) => {
    const k = checkKey(`/workerWallets/${i}`, w);
    if (k !== undefined) keys.push(k);
  });
  const badPaths = new Set(violations.map((v) => v.path));
  const connections: ConnectionCheck[] = [];
  if (options.offline !== true && config !== null && typeof config === 'object') {
    const timeoutMs = options.timeoutMs ?? (typeof c.rpcTimeout === 'number' && c.rpcTimeout > 0 ? c.rpcTimeout : 5000);
    const usable = (path: string, value: unknown): value is string => typeof value === 'string' && !badPaths.has(path);
    const checks: Promise<ConnectionCheck>[] = [];
    if (Array.isArray(c.rpcEndpoints)) {
      c.rpcEndpoints.forEach((url, i) => {
        if (usable(`/rpcEndpoints/${i}`, url) && /^https?:/.test(url)) checks.push(checkRpc(url, timeoutMs));
      });
    }
    if (usable('/redisUrl', c.redisUrl)) checks.push(checkRedis(c.redisUrl, c.redisPassword, timeoutMs));
    if (usable('/databaseUrl', c.databaseUrl)) checks.push(checkPostgres(c.databaseUrl, timeoutMs));
    if (usable('/natsUrl', c.natsUrl)) checks.push(checkNats(c.natsUrl, natsAuthOf(c), timeoutMs));
    if (usable('/blockEngineUrl', c.blockEngineUrl)) checks.push(checkBlockEngine(c.blockEngineUrl, badPaths.has('/blockEngineUuid') ? undefined : c.blockEngineUuid, timeoutMs));
    if (usable('/externalQuoteUrl', c.externalQuoteUrl)) checks.push(checkExternalQuote(c.externalQuoteUrl, c.externalQuoteApiKey, timeoutMs));
    if (usable('/shredstreamUrl', c.shredstreamUrl)) checks.push(checkShredstream(c.shredstreamUrl, timeoutMs));
    if (!['/localQuoteAddr', '/externalQuoteAddr', '/upstreamTlsCaFile'].some((p) => badPaths.has(p))) {
      const targets = upstreamTargetsOfConfig(c);
      for (const name of ['localQuoteAddr', 'externalQuoteAddr'] as const) {
        const target = targets[name];
        if (target !== undefined) checks.push(checkQuoteUpstream(c[name]!, target.hostPort, target.tls, timeoutMs));
      }
    }
    connections.push(...(await Promise.all(checks)));
  }
  const invalid = violations.length > 0 || keys.some((k) => k.error !== undefined);
  const exitCode = invalid ? ValidationExit.Invalid : connections.some((x) => !x.ok) ? ValidationExit.Unreachable : ValidationExit.Valid;
  return { violations, keys, connections, exitCode };
}

/**
 * The report with every secret masked (engine/secret-mask.ts): a connection target such as
 * `redis://:password@host` or an RPC URL with `?api-key=`, and error messages quoting them.
 */
export function maskedReport(report: ConfigReport): ConfigReport {
  return {
    ...report,
    violations: report.violations.map((v) => ({ ...v, message: maskSecretsInText(v.message) })),
    keys: report.keys.map((k) => (k.error === undefined ? k : { ...k, error: maskSecretsInText(k.error) })),
    connections: report.connections.map((c) => ({
      ...c,
      target: maskSecretsInText(c.target),
      ...(c.error === undefined ? {} : { error: maskSecretsInText(c.error) }),
    })),
  };
}

/** The report as lines for a terminal. No secret is printed: keys show as their addresses. */
export function formatReport(report: ConfigReport): string {
  const lines: string[] = [];
  for (const v of report.violations) lines.push(`invalid  ${v.path}: ${v.message}`);
  for (const k of report.keys) lines.push(k.error === undefined ? `key ok   ${k.path}: ${k.address}` : `invalid  ${k.path}: ${k.error}`);
  for (const x of report.connections) {
    lines.push(x.ok ? `reached  ${x.name} ${x.target} in ${x.latencyMs!.toFixed(1)} ms` : `FAILED   ${x.name} ${x.target}: ${x.error}`);
  }
  lines.push(report.exitCode === 0 ? 'configuration valid' : report.exitCode === 1 ? 'configuration invalid' : 'configuration valid, but a dependency is unreachable');
  return `${lines.join('\n')}\n`;
}
