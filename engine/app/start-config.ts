/**
 * Settings of `tidepool start` (what `npm start` runs): the engine's, the simulator's, the quote
 * aggregator's and the external quote service's settings side by side.
 * - The simulator's flags gain a `sim-` prefix (`--sim-seed`, `--sim-tx-rate`) because both sides
 *   have a `--host`; their environment variables (SIM_*) and config-file keys (`sim.*`) are unchanged.
 * - The aggregator's settings live under `aggregator.*` with `aggregator-` flags
 *   (`--aggregator-grpc-port`, `--aggregator-http-port`), the external quote service's under
 *   `external.*` with `external-` flags (`--external-grpc-port`, `--external-quote-url`); their
 *   environment variables are their own commands' (AGGREGATOR_GRPC_PORT, EXTERNAL_QUOTE_URL, ...).
 *   One LOG_LEVEL and one set of node:http limits (`http.*`) for everything, and one set of JWT auth settings (`auth.*`: TIDEPOOL_AUTH,
 *   TIDEPOOL_JWT_SECRET, ...; engine/auth) for the three gRPC servers, each deciding `auto` by its
 *   own bind host. The aggregator's upstream token (TIDEPOOL_JWT_TOKEN) is its own
 *   (`aggregator.upstreamToken`).
 * - Defaults that differ from the standalone commands (docs/architecture.md §1 and Ports): the aggregator's
 *   HTTP port is 8082 (8080 is the quote service's), it publishes no SwapRouteEvents unless
 *   BUS_ENABLED=true (npm start needs no servers), and the external quote service may poll the
 *   local simulator at 50 requests/s.
 * - Left at their defaults, the aggregator's upstream addresses are the engine's and the external
 *   service's bound gRPC ports, and the external provider and the oracle are the simulator's.
 */
import { startPaperTradingSchema } from './start-paper-trading.js';
import { aggregatorSchema, type AggregatorConfig } from '../aggregator/index.js';
import { AUTH_KEYS, authIssues } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { HEALTH_KEYS, httpServerSchema, serverTlsSchema, setting, types, type ConfigSchema, type ConfigValues, type LoadedConfig, type SettingDef } from '../config/index.js';
import { startConsoleSchema } from '../console/index.js';
import { externalSchema, type ExternalQuotesConfig } from '../external/index.js';
import { databaseSchema, redisSchema, scannerMetricsSchema } from '../state/index.js';
import { simSchema } from '../sim/index.js';
import type { SimEndpoints } from '../sim/index.js';
import { checkEngineConfig, engineSchema, type EngineConfig } from './engine-config.js';

function prefixFlags<S extends ConfigSchema>(schema: S, prefix: string): S {
  const out: ConfigSchema = {};
  for (const [key, def] of Object.entries(schema)) out[key] = def.flag === undefined ? def : { ...def, flag: `${prefix}${def.flag}` };
  return out as S;
}

type Namespaced<S extends ConfigSchema, P extends string, Omitted extends keyof S> = {
  [K in Exclude<keyof S, Omitted> as `${P}${K & string}`]: S[K];
};

/** `schema` without `omit`, its keys under `keyPrefix`, its flags under `flagPrefix`, some defaults replaced. */
function namespaced<S extends ConfigSchema, P extends string, O extends keyof S>(
  schema: S,
  keyPrefix: P,
  flagPrefix: string,
  omit: readonly O[],
  defaults: { [K in keyof S]?: ConfigValues<S>[K] } = {},
): Namespaced<S, P, O> {
  const out: ConfigSchema = {};
  for (const [key, def] of Object.entries(prefixFlags(schema, flagPrefix))) {
    if ((omit as readonly string[]).includes(key)) continue;
    out[`${keyPrefix}${key}`] = key in defaults ? ({ ...def, default: defaults[key as keyof S] } as SettingDef<unknown>) : def;
  }
  return out as Namespaced<S, P, O>;
}

/** The `http.*` limits (timeouts, connection cap): one set for every node:http port of the process. */
const HTTP_KEYS = Object.keys(httpServerSchema) as (keyof typeof httpServerSchema)[];

/** tls.certFile / tls.keyFile: one certificate for every TLS port of the process (the engine's settings). */
const TLS_KEYS = Object.keys(serverTlsSchema) as (keyof typeof serverTlsSchema)[];

/** The aggregator's HTTP port inside `npm start` (docs/architecture.md, Ports). */
export const START_AGGREGATOR_HTTP_PORT = 8082;
/** Requests per second the external quote service may send to the local simulator. */
export const START_EXTERNAL_RATE_LIMIT_RPS = 50;

export const startSchema = {
  ...engineSchema,
  ...prefixFlags(simSchema, 'sim-'),
  ...namespaced(aggregatorSchema, 'aggregator.', 'aggregator-', ['log.level', ...AUTH_KEYS, ...HTTP_KEYS, ...HEALTH_KEYS, ...TLS_KEYS], { httpPort: START_AGGREGATOR_HTTP_PORT, busEnabled: false }),
  ...namespaced(externalSchema, 'external.', 'external-', ['log.level', ...AUTH_KEYS, ...HTTP_KEYS, ...TLS_KEYS], { rateLimitRps: START_EXTERNAL_RATE_LIMIT_RPS }),
  // Platform state (engine/state): embedded PostgreSQL and an in-process store unless URLs are set.
  'platform.enabled': setting({
    description: 'keep platform state: service heartbeats and the scanner_metrics rows (embedded PostgreSQL unless DATABASE_URL)',
    parse: types.bool(),
    default: true,
    env: 'PLATFORM_STATE',
    flag: 'platform-state',
  }),
  ...databaseSchema,
  ...redisSchema,
  ...scannerMetricsSchema,
  // The web console (engine/console) on its own port, watching the services of the process.
  ...startConsoleSchema,
  // The arbitrage planner and a paper executor, joined in the process (start-paper-trading.ts).
  ...startPaperTradingSchema,
};

type StartLoaded = LoadedConfig<typeof startSchema>;

/**
 * The checks of `tidepool start` before anything runs: the engine's, then the shared auth settings
 * against the aggregator's and the external service's bind hosts. TP_ERR_CONFIG_INVALID.
 */
export function checkStartConfig(v: ConfigValues<typeof startSchema>): void {
  checkEngineConfig(v);
  const issues = [...authIssues(v, v['aggregator.host'], 'aggregator.host'), ...authIssues(v, v['external.host'], 'external.host')];
  if (issues.length > 0) {
    const unique = [...new Set(issues)];
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${unique.join('\n  ')}`, { context: { issues: unique } });
  }
}

/** The settings under `prefix`, with the prefix taken off (and the shared log level, auth, HTTP, health and TLS settings). */
function section<T>(loaded: StartLoaded, prefix: string): { values: T; fromDefault: (key: string) => boolean } {
  const values: Record<string, unknown> = { 'log.level': loaded.values['log.level'] };
  for (const key of AUTH_KEYS) values[key] = loaded.values[key];
  for (const key of HTTP_KEYS) values[key] = loaded.values[key];
  for (const key of HEALTH_KEYS) values[key] = loaded.values[key];
  for (const key of TLS_KEYS) values[key] = loaded.values[key];
  for (const [key, value] of Object.entries(loaded.values)) if (key.startsWith(prefix)) values[key.slice(prefix.length)] = value;
  const sources = loaded.sources as Record<string, string>;
  return { values: values as T, fromDefault: (key) => sources[`${prefix}${key}`] === 'default' };
}

/**
 * The engine's settings pointed at the simulator: the block-entry stream, the Geyser account stream
 * and the JSON-RPC are the simulator's unless set explicitly (flag, environment or file).
 */
export function engineConfigUnderSim(loaded: LoadedConfig<typeof startSchema>, sim: SimEndpoints): LoadedConfig<typeof engineSchema> {
  const values: EngineConfig = { ...loaded.values };
  const sources = { ...loaded.sources };
  const [host, port] = splitHostPort(sim.stream);
  if (loaded.sources['blockstream.host'] === 'default') values['blockstream.host'] = host;
  if (loaded.sources['blockstream.port'] === 'default') values['blockstream.port'] = port;
  if (loaded.sources['rpc.endpoints'] === 'default') values['rpc.endpoints'] = [sim.rpc];
  if (loaded.sources['scanner.geyserUrl'] === 'default') values['scanner.geyserUrl'] = `http://${sim.geyser}`;
  return { values, sources, ...(loaded.file === undefined ? {} : { file: loaded.file }) };
}

/** The external quote service's settings under the simulator: its /quote API unless set explicitly. */
export function externalConfigUnderSim(loaded: StartLoaded, sim: SimEndpoints): ExternalQuotesConfig {
  const { values, fromDefault } = section<ExternalQuotesConfig>(loaded, 'external.');
  if (fromDefault('quoteUrl')) values.quoteUrl = `${sim.http}/quote`;
  return values;
}

/**
 * The aggregator's settings in one process: its upstreams are the engine's and the external
 * service's bound gRPC addresses, its oracle the simulator's price API, unless set explicitly.
 */
export function aggregatorConfigUnderSim(loaded: StartLoaded, sim: SimEndpoints, upstreams: { local: string; external: string }): AggregatorConfig {
  const { values, fromDefault } = section<AggregatorConfig>(loaded, 'aggregator.');
  if (fromDefault('localQuoteAddr')) values.localQuoteAddr = upstreams.local;
  if (fromDefault('externalQuoteAddr')) values.externalQuoteAddr = upstreams.external;
  if (fromDefault('oracleUrl')) values.oracleUrl = `${sim.http}/price/v3`;
  // With TLS_CERT_FILE set the engine and the external service serve TLS too: reach them over
  // TLS, trusting that certificate (self-signed in a test deployment), unless told otherwise.
  if (values['tls.certFile'] !== '' && fromDefault('tls.upstream')) values['tls.upstream'] = true;
  if (values['tls.upstream'] && values['tls.certFile'] !== '' && fromDefault('tls.upstreamCaFile')) values['tls.upstreamCaFile'] = values['tls.certFile'];
  return values;
}

function splitHostPort(hostPort: string): [string, number] {
  const at = hostPort.lastIndexOf(':');
  return [hostPort.slice(0, at).replace(/^\[|\]$/g, ''), Number(hostPort.slice(at + 1))];
}
