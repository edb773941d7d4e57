import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * JSON logs with pino. The level comes from LOG_LEVEL (default `info`); secrets are redacted by
 * path wherever they appear. Services log to stdout; the inspection commands, whose stdout is their
 * data, log to stderr.
 */

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Field paths never written in clear. */
export const REDACTED_PATHS = [
  'password',
  'token',
  'secret',
  'privateKey',
  'encryptedPrivateKey',
  '*.password',
  '*.token',
  '*.secret',
  '*.privateKey',
  '*.encryptedPrivateKey',
  'config["jwt.secret"]',
  'config["bus.token"]',
  'headers.authorization',
  'req.headers.authorization',
];

export interface CreateLoggerOptions {
  name?: string;
  level?: string;
  /** Write to stderr instead of stdout. */
  stderr?: boolean;
  destination?: DestinationStream;
}

export function resolveLogLevel(level: string | undefined): LogLevel {
  const v = (level ?? 'info').toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const opts: LoggerOptions = {
    level: resolveLogLevel(options.level ?? process.env.LOG_LEVEL),
    base: { service: options.name ?? 'tidepool', pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.epochTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  const dest = options.destination ?? pino.destination({ fd: options.stderr ? 2 : 1, sync: false });
  return pino(opts, dest);
}
