export { loadConfig, setting, describeSchema, formatDefault, redactedValues } from './loader.js';
export type { ConfigSchema, ConfigValues, LoadedConfig, LoadOptions, SettingDef, SettingSource } from './loader.js';
export { parseCommandLine } from './command-line.js';
export type { CommandOption, ParsedCommandLine } from './command-line.js';
export * as types from './setting-types.js';
export { SettingIssue } from './setting-types.js';
export { bool, busServer, duration, hostPort, int, jetStreamName, num, oneOf, port, str, uniqueList, upstreamAddress, url, type SettingParser } from './setting-types.js';
export { DEFAULT_HTTP_LIMITS, httpLimitsOf, httpServerSchema, type HttpLimitValues } from './http-server-settings.js';
export { heapProfileSchema } from './heap-profile-settings.js';
export { DEFAULT_HEALTH_THRESHOLDS, HEALTH_KEYS, healthSchema, healthThresholdsOf, type HealthThresholdValues } from './health-settings.js';
export { checkSharedState, deploymentHealth, deploymentSafetySchema, isLoopbackUrl, refuseLoopbackDefaults, type DeploymentSafety, type SharedStateSettings } from './deployment-safety.js';
export { busAuthOf, busAuthSchema, type BusAuth, type BusAuthValues } from './bus-auth-settings.js';
export {
  serverTlsOf,
  serverTlsSchema,
  upstreamTargetsOf,
  upstreamTlsOf,
  upstreamTlsSchema,
  type ServerTls,
  type ServerTlsValues,
  type UpstreamTarget,
  type UpstreamTls,
  type UpstreamTlsValues,
} from './server-tls-settings.js';
export { parseUpstreamAddress, type UpstreamAddress } from './upstream-address.js';
export { flashLoanSchema } from './flash-loan-settings.js';
