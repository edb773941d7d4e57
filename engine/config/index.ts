export { loadConfig, setting, describeSchema, formatDefault, redactedValues } from './loader.js';
export type { ConfigSchema, ConfigValues, LoadedConfig, LoadOptions, SettingDef, SettingSource } from './loader.js';
export { parseCommandLine } from './command-line.js';
export type { CommandOption, ParsedCommandLine } from './command-line.js';
export * as types from './setting-types.js';
export { SettingIssue } from './setting-types.js';
export { bool, busServer, duration, hostPort, int, jetStreamName, num, oneOf, port, str, uniqueList, url, type SettingParser } from './setting-types.js';
export { DEFAULT_HTTP_LIMITS, httpLimitsOf, httpServerSchema, type HttpLimitValues } from './http-server-settings.js';
export { DEFAULT_HEALTH_THRESHOLDS, HEALTH_KEYS, healthSchema, healthThresholdsOf, type HealthThresholdValues } from './health-settings.js';
