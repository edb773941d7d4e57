/**
 * Checks a command makes before it starts, so that a real deployment cannot be unsafe by omission.
 *
 * - **Shared state for services that move money** (`checkSharedState`): the executor in real mode
 *   and the wallet service take per-wallet locks and keep state in Redis, and record trades and
 *   transfers in PostgreSQL. Without REDIS_URL the locks live in one process (two executors could
 *   take the same wallet); without DATABASE_URL each process has its own embedded database. Such a
 *   service refuses to start (TP_ERR_CONFIG_INVALID naming each missing setting) unless the operator
 *   says, with `deployment.singleInstance` (TIDEPOOL_SINGLE_INSTANCE / --single-instance), that this
 *   one process runs alone; it then says so in its /health (`deploymentHealth`).
 * - **Simulator defaults next to a real chain** (`refuseLoopbackDefaults`): endpoints whose default
 *   is the simulator's loopback port (the block engine, the external aggregator) are refused when
 *   the RPC endpoint is remote and the setting was left at that default: the service would send
 *   bundles or ask quotes of a simulator that is not there (or, worse, is). Setting them, even to a
 *   loopback address, is a decision and passes.
 *
 * Messages name settings by their key and environment variable, never their values when secret;
 * RPC URLs (which carry provider keys) are never printed.
 */
import { ErrorCode, TpError } from '../errors.js';
import { setting, type ConfigSchema, type LoadedConfig } from './loader.js';
import { bool } from './setting-types.js';

export const deploymentSafetySchema = {
  'deployment.singleInstance': setting({
    description:
      'allow a service that moves money (executor in real mode, wallet service) to run without a shared Redis and PostgreSQL: this one process alone (its /health says so)',
    parse: bool(),
    default: false,
    env: 'TIDEPOOL_SINGLE_INSTANCE',
    flag: 'single-instance',
  }),
};

export interface SharedStateSettings {
  'redis.url': string;
  'database.url': string;
  'deployment.singleInstance': boolean;
}

export interface DeploymentSafety {
  /** true when the service runs without shared state (allowed by deployment.singleInstance). */
  singleInstance: boolean;
  /** The shared-state settings that are not set, as `ENV (key)`. */
  missing: string[];
}

const SHARED_STATE = [
  { key: 'redis.url', env: 'REDIS_URL', what: 'executor locks and strategy state shared between processes' },
  { key: 'database.url', env: 'DATABASE_URL', what: 'one database for every process' },
] as const;

/**
 * Refuses (TP_ERR_CONFIG_INVALID) a service that moves money without REDIS_URL and DATABASE_URL,
 * unless deployment.singleInstance allows this one process alone.
 */
export function checkSharedState(service: string, values: SharedStateSettings): DeploymentSafety {
  const missing = SHARED_STATE.filter((s) => values[s.key] === '');
  const names = missing.map((s) => `${s.env} (${s.key})`);
  if (missing.length > 0 && !values['deployment.singleInstance']) {
    throw new TpError(
      ErrorCode.ConfigInvalid,
      `${service} moves money and will not start without shared state: ${missing.map((s) => `${s.env} (${s.key}: ${s.what})`).join(', ')} not set. ` +
        'Set them, or set TIDEPOOL_SINGLE_INSTANCE=true (--single-instance) to run this one process alone.',
      { context: { setting: names.join(', '), service, missing: names } },
    );
  }
  return { singleInstance: missing.length > 0, missing: names };
}

/** What /health adds about the deployment: the single-instance mode, said plainly. */
export function deploymentHealth(safety: DeploymentSafety): { deployment: { mode: 'shared' | 'single-instance'; missing?: string[]; warning?: string } } {
  if (!safety.singleInstance) return { deployment: { mode: 'shared' } };
  return {
    deployment: {
      mode: 'single-instance',
      missing: safety.missing,
      warning: 'running alone without shared state (deployment.singleInstance): a second instance would not see this one\'s locks or records',
    },
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '::1', '[::1]']);

/** true for localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackUrl(raw: string): boolean {
  let host: string;
  try {
    host = new URL(raw).hostname.toLowerCase();
  } catch {
    return false;
  }
  return LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host.endsWith('.localhost');
}

function urlsOf(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * Refuses (TP_ERR_CONFIG_INVALID) endpoint settings left at a loopback default when any RPC URL in
 * `rpcKeys` is remote. `endpointKeys` are the settings whose default is the simulator's.
 */
export function refuseLoopbackDefaults<S extends ConfigSchema>(
  schema: S,
  loaded: LoadedConfig<S>,
  rpcKeys: readonly (keyof S & string)[],
  endpointKeys: readonly (keyof S & string)[],
): void {
  const values = loaded.values as Record<string, unknown>;
  const remoteRpc = rpcKeys.filter((k) => urlsOf(values[k]).some((u) => !isLoopbackUrl(u)));
  if (remoteRpc.length === 0) return;
  const offending = endpointKeys.filter((k) => loaded.sources[k] === 'default' && urlsOf(values[k]).some(isLoopbackUrl));
  if (offending.length === 0) return;
  const name = (k: keyof S & string) => (schema[k]?.env === undefined ? k : `${schema[k].env} (${k})`);
  throw new TpError(
    ErrorCode.ConfigInvalid,
    `the RPC endpoint (${remoteRpc.map(name).join(', ')}) is remote, but ${offending.map((k) => `${name(k)} is the simulator's loopback default ${urlsOf(values[k]).join(',')}`).join('; ')}: ` +
      'set each to the real endpoint (or, deliberately, to a local one)',
    { context: { setting: offending.join(', '), remoteRpc, settings: offending } },
  );
}
