import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';

import { isPubkey } from '../chain/index.js';
import { busAuthSchema, healthSchema, httpServerSchema, loadConfig, setting, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { SettingIssue, bool, busServer, duration, int, jetStreamName, oneOf, port, str, uniqueList, url, type SettingParser } from '../config/index.js';
import { AMM_LAYOUTS, AmmLayout, DEFAULT_ARRAYS_EACH_SIDE, DEFAULT_PROGRAM_IDS } from '../dex/index.js';
import { Dex, DEX_KINDS } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { LOG_LEVELS } from '../obs/index.js';
import { DEFAULT_GEYSER_ARRAYS_AHEAD, MAX_GEYSER_ARRAYS_AHEAD } from './geyser-state-source.js';
import { MAX_HEARTBEAT_REGIONS, type HeartbeatOptions } from './stream-client.js';

/**
 * The scanner's settings: every field and environment variable of spec 02's "Scanner
 * configuration", plus the few the spec leaves unnamed (heartbeat destination port, pools file,
 * health port). Precedence and error reporting are the shared loader's (docs/architecture.md §3).
 */

/** Shred destination port of a ShredStream proxy (its `--src-bind-port` default). */
export const DEFAULT_HEARTBEAT_UDP_PORT = 20_000;
export const DEFAULT_POOLS_FILE = 'config/monitored-pools.json';
/** getMultipleAccounts takes at most 100 accounts per call. */
const MAX_BATCH_SIZE = 100;
const MAX_REGION_LENGTH = 64;

/**
 * Where the scanner takes pool state from: `block-entries` (the block-entry stream finds the
 * transactions touching a pool, the pool is re-read over RPC) or `geyser` (pool, vault and tick or
 * bin array accounts streamed by a Yellowstone gRPC endpoint, applied by the slot/write-version rule).
 */
export const STATE_SOURCES = ['block-entries', 'geyser'] as const;
export type StateSource = (typeof STATE_SOURCES)[number];
/** The simulator's Geyser port (engine/sim/stream/geyser-server.ts GEYSER_DEFAULT_PORT). */
export const DEFAULT_GEYSER_URL = 'http://127.0.0.1:10000';

/** An http(s) URL with a host and port, or a bare host:port. */
function geyserUrl(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || raw === '') throw new SettingIssue(`expected a Geyser endpoint such as ${DEFAULT_GEYSER_URL}, got ${JSON.stringify(raw)}`);
    const withScheme = /^[a-z]+:\/\//i.test(raw) ? raw : `http://${raw}`;
    let parsed: URL;
    try {
      parsed = new URL(withScheme);
    } catch {
      throw new SettingIssue(`expected a Geyser endpoint such as ${DEFAULT_GEYSER_URL}, got ${JSON.stringify(raw)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new SettingIssue(`expected an http:// or https:// Geyser endpoint, got ${JSON.stringify(raw)}`);
    if (parsed.hostname === '' || (parsed.pathname !== '/' && parsed.pathname !== '')) throw new SettingIssue(`expected host:port with no path, got ${JSON.stringify(raw)}`);
    return raw;
  };
}

/** host:port of a `scanner.geyserUrl` value (gRPC target). */
export function geyserEndpoint(url: string): string {
  const parsed = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`);
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'https:' ? '443' : '80';
  return `${parsed.hostname}:${port}`;
}

function pubkey(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || !isPubkey(raw)) {
      throw new SettingIssue(`expected a base58 public key (32 bytes), got ${JSON.stringify(raw)}`);
    }
    return raw;
  };
}

function region(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || !/^[a-z][a-z0-9-]*$/.test(raw) || raw.length > MAX_REGION_LENGTH) {
      throw new SettingIssue(`expected a region name such as "ny" or "amsterdam", got ${JSON.stringify(raw)}`);
    }
    return raw;
  };
}

/** An IP address, or empty for "not set". */
function optionalIp(): SettingParser<string> {
  return (raw) => {
    if (raw === '') return '';
    if (typeof raw !== 'string' || isIP(raw) === 0) throw new SettingIssue(`expected an IP address, got ${JSON.stringify(raw)}`);
    return raw;
  };
}

const dexProgramSettings = {
  'pools.dexProgram.dexa_amm': setting({ description: `program id of ${Dex.Amm} pools (Raydium AMM v4)`, parse: pubkey(), default: DEFAULT_PROGRAM_IDS[Dex.Amm], flag: 'dex-program-dexa-amm' }),
  'pools.dexProgram.dexa_clmm': setting({ description: `program id of ${Dex.Clmm} pools (Raydium CLMM)`, parse: pubkey(), default: DEFAULT_PROGRAM_IDS[Dex.Clmm], flag: 'dex-program-dexa-clmm' }),
  'pools.dexProgram.dexb_dlmm': setting({ description: `program id of ${Dex.Dlmm} pools (Meteora DLMM)`, parse: pubkey(), default: DEFAULT_PROGRAM_IDS[Dex.Dlmm], flag: 'dex-program-dexb-dlmm' }),
  'pools.ammLayout': setting({
    description: `layout of ${Dex.Amm} pool accounts: ${AmmLayout.RaydiumAmmV4} (Raydium AmmInfo, reserves from its vaults) or ${AmmLayout.Spec02Simplified} (spec 02's fixture layout, reserves @64/@72; refused for the real Raydium AMM v4 program id)`,
    parse: oneOf(AMM_LAYOUTS),
    default: AmmLayout.RaydiumAmmV4,
    flag: 'amm-layout',
  }),
  'pools.dexProgram.dexc_whirlpool': setting({ description: `program id of ${Dex.Whirlpool} pools (Orca Whirlpool)`, parse: pubkey(), default: DEFAULT_PROGRAM_IDS[Dex.Whirlpool], flag: 'dex-program-dexc-whirlpool' }),
} as const;

export const scannerSchema = {
  'blockstream.host': setting({ description: 'block-entry stream (ShredStream proxy) host', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'BLOCKSTREAM_HOST', flag: 'blockstream-host' }),
  'blockstream.port': setting({ description: 'block-entry stream gRPC port', parse: int({ min: 1, max: 65535 }), default: 50051, env: 'BLOCKSTREAM_PORT', flag: 'blockstream-port' }),
  'blockstream.regions': setting({ description: `regions named in heartbeats (at most ${MAX_HEARTBEAT_REGIONS})`, parse: uniqueList(region(), { min: 1, max: MAX_HEARTBEAT_REGIONS }), default: ['ny'], env: 'BLOCKSTREAM_REGIONS', flag: 'blockstream-regions' }),
  'blockstream.enableHeartbeat': setting({ description: 'send SendHeartbeat every ttl_ms / 3', parse: bool(), default: false, env: 'BLOCKSTREAM_HEARTBEAT', flag: 'blockstream-heartbeat' }),
  'blockstream.heartbeatIp': setting({ description: "shred destination IP sent in heartbeats (the scanner host's own IP); required with heartbeats", parse: optionalIp(), default: '', env: 'BLOCKSTREAM_HEARTBEAT_IP', flag: 'blockstream-heartbeat-ip' }),
  'blockstream.heartbeatPort': setting({ description: 'shred destination UDP port sent in heartbeats', parse: int({ min: 1, max: 65535 }), default: DEFAULT_HEARTBEAT_UDP_PORT, env: 'BLOCKSTREAM_HEARTBEAT_PORT', flag: 'blockstream-heartbeat-port' }),
  'scanner.stateSource': setting({ description: `where pool state comes from: ${STATE_SOURCES[0]} (block-entry stream, then the pool re-read over RPC) or ${STATE_SOURCES[1]} (pool, vault and tick/bin array accounts streamed from scanner.geyserUrl, applied by slot and write version)`, parse: oneOf(STATE_SOURCES), default: 'block-entries' as StateSource, env: 'SCANNER_STATE_SOURCE', flag: 'state-source' }),
  'scanner.geyserUrl': setting({ description: 'Yellowstone gRPC (Geyser) endpoint used when scanner.stateSource is geyser; default: the simulator\'s Geyser port', parse: geyserUrl(), default: DEFAULT_GEYSER_URL, env: 'GEYSER_URL', flag: 'geyser-url' }),
  'scanner.geyserArraysAhead': setting({ description: `scanner.stateSource geyser: tick or bin arrays followed on the stream (and read once beforehand) beyond the ${DEFAULT_ARRAYS_EACH_SIDE} each side of the current one a concentrated or DLMM pool is read with, on each side, so a swap that moves the price into them finds them held instead of reading them over RPC; adds up to 2 n (4 n + 1 for Raydium CLMM and DLMM, whose unmarked arrays near the price are followed too) accounts per pool to the subscription; 0: off`, parse: int({ min: 0, max: MAX_GEYSER_ARRAYS_AHEAD }), default: DEFAULT_GEYSER_ARRAYS_AHEAD, env: 'GEYSER_ARRAYS_AHEAD', flag: 'geyser-arrays-ahead' }),
  'pools.monitored': setting({ description: 'monitored pool addresses; empty means load them from pools.file', parse: uniqueList(pubkey()), default: [] as string[], env: 'MONITORED_POOLS', flag: 'monitored-pools' }),
  'pools.discoverMints': setting({ description: 'keep the monitored pools current by themselves: the pools trading these mints are found on chain every pools.discoverInterval (new ones join up to pools.maxCount, closed ones leave); empty: off', parse: uniqueList(pubkey()), default: [] as string[], env: 'DISCOVER_MINTS', flag: 'discover-mints' }),
  'pools.discoverInterval': setting({ description: 'time between two pool discovery runs (pools.discoverMints)', parse: duration({ min: 1_000 }), default: 60_000, env: 'DISCOVER_INTERVAL', flag: 'discover-interval' }),
  'pools.maxCount': setting({ description: 'most pools pool discovery keeps in the monitored set (spec 02: 20 to 50 monitored pools)', parse: int({ min: 1, max: 10_000 }), default: 50, env: 'POOLS_MAX_COUNT', flag: 'pools-max-count' }),
  'pools.file': setting({ description: 'JSON file of monitored pool addresses, used when pools.monitored is empty', parse: str({ nonEmpty: true }), default: DEFAULT_POOLS_FILE, env: 'MONITORED_POOLS_FILE', flag: 'pools-file' }),
  ...dexProgramSettings,
  'bus.servers': setting({ description: 'message bus (NATS) servers', parse: uniqueList(busServer(), { min: 1 }), default: ['nats://127.0.0.1:4222'], env: 'BUS_SERVERS', flag: 'bus-servers' }),
  ...busAuthSchema,
  'bus.streamName': setting({ description: 'JetStream stream of pool state updates', parse: jetStreamName(), default: 'POOL_UPDATES', env: 'BUS_STREAM_NAME', flag: 'bus-stream-name' }),
  'bus.maxAge': setting({ description: 'age after which the stream discards a message', parse: duration({ min: 1000 }), default: 60_000, flag: 'bus-max-age' }),
  'rpc.endpoints': setting({ description: 'Solana JSON-RPC endpoints the pool accounts are read from (getMultipleAccounts)', parse: uniqueList(url(), { min: 1 }), default: ['http://127.0.0.1:8899'], env: 'RPC_ENDPOINTS', flag: 'rpc-endpoints' }),
  'performance.parseWorkers': setting({ description: 'parse worker threads (entry parsing and pool matching); default: cores - 1, at least 1', parse: int({ min: 1, max: 64 }), default: Math.max(1, availableParallelism() - 1), defaultText: 'cores - 1, at least 1', env: 'PARSE_WORKERS', flag: 'parse-workers' }),
  'performance.rpcReadThread': setting({ description: 'run the RPC reads (HTTP, JSON and base64 of getMultipleAccounts) on their own worker thread; default: on with 4 or more cores (on 2 cores the extra thread costs each read more than it saves the main thread)', parse: bool(), default: availableParallelism() >= 4, defaultText: 'true with 4 or more cores', env: 'RPC_READ_THREAD', flag: 'rpc-read-thread' }),
  'events.includeRawData': setting({ description: "put the base64 pool account data in each event's state.rawData", parse: bool(), default: false, env: 'EVENTS_RAW_DATA', flag: 'events-raw-data' }),
  'performance.maxConcurrentProcessing': setting({ description: 'account-read batches in flight at once', parse: int({ min: 1, max: 10_000 }), default: 20, flag: 'max-concurrent-processing' }),
  'performance.batchSize': setting({ description: 'transactions per account-read batch', parse: int({ min: 1, max: MAX_BATCH_SIZE }), default: 10, flag: 'batch-size' }),
  'performance.queueSizeLimit': setting({ description: 'queued transactions beyond which new ones are dropped and counted', parse: int({ min: 1, max: 1_000_000 }), default: 100, flag: 'queue-size-limit' }),
  'metrics.prometheusPort': setting({ description: 'Prometheus /metrics port', parse: port(), default: 9091, env: 'METRICS_PORT', flag: 'metrics-port' }),
  'metrics.logLevel': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  'health.port': setting({ description: 'health, stats and config HTTP port', parse: port(), default: 8081, env: 'HEALTH_PORT', flag: 'health-port' }),
  /** Timeouts and connection cap of the health and metrics ports (engine/obs createLimitedServer). */
  ...httpServerSchema,
  /** /health judges recent pool reads (engine/config health-settings.ts). */
  ...healthSchema,
  'health.maxEntryAge': setting({ description: '/health: the block-entry stream counts as stalled (503) when no entry came for this long, even while connected', parse: duration({ min: 1 }), default: 30_000, env: 'HEALTH_MAX_ENTRY_AGE', flag: 'health-max-entry-age' }),
};

export type ScannerConfig = ConfigValues<typeof scannerSchema>;

/**
 * Loads and validates the scanner's settings, including the checks that span two settings.
 * Throws TpError(TP_ERR_CONFIG_INVALID) naming every offending setting.
 */
export function loadScannerConfig(options: LoadOptions = {}): LoadedConfig<typeof scannerSchema> {
  const loaded = loadConfig(scannerSchema, options);
  checkScannerConfig(loaded.values);
  return loaded;
}

/** The checks that span two settings; TpError(TP_ERR_CONFIG_INVALID) naming every problem. */
export function checkScannerConfig(values: ScannerConfig): void {
  const issues: string[] = [];
  if (values['blockstream.enableHeartbeat'] && values['blockstream.heartbeatIp'] === '') {
    issues.push('blockstream.heartbeatIp: required when blockstream.enableHeartbeat is true (BLOCKSTREAM_HEARTBEAT_IP)');
  }
  const owners = new Map<string, string>();
  const programs = dexPrograms(values);
  for (const dex of DEX_KINDS) {
    const key = `pools.dexProgram.${dex}`;
    const id = programs[dex];
    const other = owners.get(id);
    if (other !== undefined) issues.push(`${key}: program id ${id} is also ${other}`);
    owners.set(id, key);
  }
  if (values['pools.ammLayout'] === AmmLayout.Spec02Simplified && programs[Dex.Amm] === DEFAULT_PROGRAM_IDS[Dex.Amm]) {
    issues.push(`pools.ammLayout: ${AmmLayout.Spec02Simplified} is spec 02's fixture layout and cannot be read for Raydium AMM v4 (${DEFAULT_PROGRAM_IDS[Dex.Amm]}): set pools.dexProgram.dexa_amm to the fixtures' program id`);
  }
  if (values['health.port'] !== 0 && values['health.port'] === values['metrics.prometheusPort']) {
    issues.push(`metrics.prometheusPort: ${values['metrics.prometheusPort']} is also health.port`);
  }
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
}

/** The program ids keyed by DEX identifier, for the decoder registry. */
export function dexPrograms(config: ScannerConfig): Record<Dex, string> {
  const ids = {} as Record<Dex, string>;
  for (const dex of DEX_KINDS) ids[dex] = config[`pools.dexProgram.${dex}` as const];
  return ids;
}

/** What BlockStreamClient needs from the configuration. */
export function blockStreamSettings(config: ScannerConfig): { host: string; port: number; heartbeat?: HeartbeatOptions } {
  const out: { host: string; port: number; heartbeat?: HeartbeatOptions } = {
    host: config['blockstream.host'],
    port: config['blockstream.port'],
  };
  if (config['blockstream.enableHeartbeat']) {
    out.heartbeat = { ip: config['blockstream.heartbeatIp'], port: config['blockstream.heartbeatPort'], regions: config['blockstream.regions'] };
  }
  return out;
}

/**
 * The monitored pools: `pools.monitored` when set, else the JSON file `pools.file` holding an array
 * of addresses or `{"pools": [...]}`. Throws TpError naming the file and the bad entry.
 */
export function monitoredPools(config: ScannerConfig): string[] {
  const fromSetting = config['pools.monitored'];
  if (fromSetting.length > 0) return fromSetting;
  return readPoolsFile(config['pools.file']);
}

export function readPoolsFile(path: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TpError(ErrorCode.ConfigFile, `pools.file ${path}: ${(err as Error).message}`, { cause: err, context: { path } });
  }
  const entries = Array.isArray(json) ? json : (json as { pools?: unknown } | null)?.pools;
  if (!Array.isArray(entries)) {
    throw new TpError(ErrorCode.ConfigInvalid, `pools.file ${path}: expected an array of pool addresses or {"pools": [...]}`);
  }
  try {
    return uniqueList(pubkey())(entries);
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `pools.file ${path}: ${(err as Error).message}`, { cause: err });
  }
}
