import { SettingIssue, setting, types } from '../config/index.js';

const { duration, str, url } = types;
type SettingParser<T> = types.SettingParser<T>;

/**
 * Where the platform keeps its state, shared by every command that touches it (`tidepool migrate`,
 * `tidepool wallets`, the services): PostgreSQL and Redis when their URLs are set, otherwise the
 * embedded defaults (PGlite under the data directory, an in-process key-value store).
 */

/** A URL of one of `protocols`, or empty for "not configured". */
function optionalUrl(protocols: readonly string[]): SettingParser<string> {
  const parse = url(protocols);
  return (raw) => {
    if (raw === '') return '';
    return parse(raw);
  };
}

/** The data directory; `memory` keeps the embedded database in memory (gone with the process). */
function dataDir(): SettingParser<string> {
  const parse = str({ nonEmpty: true });
  return (raw) => {
    const v = parse(raw);
    if (v.includes('\0')) throw new SettingIssue('must be a path');
    return v;
  };
}

export const DEFAULT_DATA_DIR = '.tidepool';

export const databaseSchema = {
  'database.url': setting({
    description: 'PostgreSQL URL (postgres://user:password@host:5432/db); empty = the embedded PostgreSQL (PGlite) under the data directory',
    parse: optionalUrl(['postgres:', 'postgresql:']),
    default: '',
    env: 'DATABASE_URL',
    flag: 'database-url',
    secret: true,
  }),
  'database.dataDir': setting({
    description: "directory of the embedded database (its files go in <dir>/pglite); 'memory' keeps it in memory",
    parse: dataDir(),
    default: DEFAULT_DATA_DIR,
    env: 'TIDEPOOL_DATA_DIR',
    flag: 'data-dir',
  }),
};

export const redisSchema = {
  'redis.url': setting({
    description: 'Redis URL (redis://[:password@]host:6379[/db], rediss:// for TLS); empty = an in-process store (nothing shared, nothing kept)',
    parse: optionalUrl(['redis:', 'rediss:']),
    default: '',
    env: 'REDIS_URL',
    flag: 'redis-url',
    secret: true,
  }),
  'redis.password': setting({
    description: 'Redis password, when not in the URL',
    parse: str(),
    default: '',
    env: 'REDIS_PASSWORD',
    flag: 'redis-password',
    secret: true,
  }),
  'redis.keyPrefix': setting({
    description: 'prefix of every key tidepool writes (a namespace: several deployments or tests on one Redis)',
    parse: str(),
    default: '',
    env: 'REDIS_KEY_PREFIX',
    flag: 'redis-key-prefix',
  }),
};

export const scannerMetricsSchema = {
  'platform.databaseDelay': setting({
    description: 'inside tidepool start: how long after start-up the embedded database opens (its start-up is CPU-heavy)',
    parse: duration(),
    default: 10_000,
    env: 'PLATFORM_DB_DELAY',
    flag: 'platform-db-delay',
  }),
  'platform.scannerMetricsInterval': setting({
    description: 'how often the scanner writes its scanner_metrics row',
    parse: duration({ min: 1000 }),
    default: 10_000,
    env: 'SCANNER_METRICS_INTERVAL',
    flag: 'scanner-metrics-interval',
  }),
};

export const walletSchema = {
  'rpc.url': setting({
    description: 'Solana JSON-RPC URL wallets read balances from and send transfers to',
    parse: url(),
    default: 'http://127.0.0.1:8899',
    env: 'RPC_URL',
    flag: 'rpc-url',
  }),
  'wallets.passphrase': setting({
    description: 'passphrase the wallet keys are sealed with (environment only: a flag would show in ps)',
    parse: str(),
    default: '',
    env: 'TIDEPOOL_WALLET_PASSPHRASE',
    secret: true,
  }),
  'wallets.keyFile': setting({
    description: 'file whose bytes are the wallet passphrase (instead of TIDEPOOL_WALLET_PASSPHRASE)',
    parse: str(),
    default: '',
    env: 'TIDEPOOL_WALLET_KEY_FILE',
    flag: 'key-file',
  }),
};
