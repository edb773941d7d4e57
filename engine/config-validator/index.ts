/**
 * engine/config-validator: `tidepool validate-config`. The platform configuration's JSON
 * Schema (schemas/platform-config.schema.json), wallet key checks, connection tests with
 * latencies, and `--generate`.
 */
export { schemaViolations, schemaPath, type PlatformConfig, type Violation } from './config-schema.js';
export { checkNats, checkPostgres, checkRedis, checkRpc, type ConnectionCheck } from './connection-checks.js';
export { ValidationExit, formatReport, maskedReport, readConfigFile, validateConfig, type ConfigReport, type ValidateOptions, type WalletKeyCheck } from './validate-config.js';
export { GENERATED_DEFAULTS, GENERATED_WORKERS, freshWalletSecret, generateConfig } from './generate-config.js';
