/**
 * Settings of the one-process engine (`tidepool engine`, and `tidepool start` under the simulator):
 * the scanner's and the quote service's settings side by side, each under its spec 02 name and
 * environment variable, with the collisions of running both in one process resolved:
 * - METRICS_PORT is the quote service's metrics port (9090); the scanner's (9091) is
 *   SCANNER_METRICS_PORT / --scanner-metrics-port.
 * - One log level (LOG_LEVEL) and one RPC_ENDPOINTS list, used by the scanner's account reads and
 *   the quote service's RPC fallback alike.
 * - No bus settings: in one process the scanner feeds the cache directly (docs/architecture.md §1); the
 *   split deployment's services keep theirs.
 */
import { busAuthSchema, loadConfig, setting, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { port } from '../config/index.js';
import { authIssues } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { quoteSchema } from '../quote-service/index.js';
import { scannerSchema } from '../scanner/index.js';

/** A schema without the bus credentials and TLS settings (busAuthSchema): the engine has no bus. */
function withoutBusAuth<S extends Record<string, unknown>>(schema: S): Omit<S, keyof typeof busAuthSchema> {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !(key in busAuthSchema))) as Omit<S, keyof typeof busAuthSchema>;
}

const {
  'metrics.prometheusPort': _scannerMetricsPort,
  'metrics.logLevel': _scannerLogLevel,
  'bus.servers': _scannerBusServers,
  'bus.streamName': _scannerStreamName,
  'bus.maxAge': _scannerBusMaxAge,
  ...scannerSettings
} = withoutBusAuth(scannerSchema);

const {
  'rpc.endpoints': _quoteRpcEndpoints,
  'bus.enabled': _busEnabled,
  'bus.servers': _quoteBusServers,
  'bus.streamName': _quoteStreamName,
  'bus.consumerName': _consumerName,
  'bus.maxAge': _quoteBusMaxAge,
  ...quoteSettings
} = withoutBusAuth(quoteSchema);

export const engineSchema = {
  ...scannerSettings,
  'scanner.metricsPort': setting({ description: "scanner's Prometheus /metrics port", parse: port(), default: 9091, env: 'SCANNER_METRICS_PORT', flag: 'scanner-metrics-port' }),
  ...quoteSettings,
};

export type EngineConfig = ConfigValues<typeof engineSchema>;

/** Loads and checks the engine's settings; TpError(TP_ERR_CONFIG_INVALID) naming every problem. */
export function loadEngineConfig(options: LoadOptions = {}): LoadedConfig<typeof engineSchema> {
  const loaded = loadConfig(engineSchema, options);
  checkEngineConfig(loaded.values);
  return loaded;
}

/** Cross-setting checks: heartbeats need their IP, and no two servers may share a port. */
export function checkEngineConfig(v: EngineConfig): void {
  const issues: string[] = [];
  if (v['blockstream.enableHeartbeat'] && v['blockstream.heartbeatIp'] === '') {
    issues.push('blockstream.heartbeatIp: required when blockstream.enableHeartbeat is true (BLOCKSTREAM_HEARTBEAT_IP)');
  }
  const ports: [string, number][] = [
    ['port', v.port],
    ['metrics.port', v['metrics.port']],
    ['grpc.port', v['grpc.port']],
    ['health.port', v['health.port']],
    ['scanner.metricsPort', v['scanner.metricsPort']],
  ];
  const seen = new Map<number, string>();
  for (const [key, p] of ports) {
    if (p === 0) continue;
    const other = seen.get(p);
    if (other !== undefined) issues.push(`${key}: port ${p} is also ${other}`);
    seen.set(p, key);
  }
  issues.push(...authIssues(v, v.host));
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
}
