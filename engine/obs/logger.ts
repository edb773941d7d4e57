import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

import { maskSecrets, maskSecretsInText } from '../secret-mask.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * JSON logs with pino. The level comes from LOG_LEVEL (default `info`); secrets are redacted by
 * path wherever they appear, and masked by content everywhere else (engine/secret-mask.ts): a URL's
 * user info, `api-key=`/`token=` parameters, `Bearer` tokens and fields named like secrets, in the
 * message, the logged object, errors (message and stack) and child bindings. Services log to
 * stdout; the inspection commands, whose stdout is their data, log to stderr.
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
  throw new TpError(ErrorCode.ConfigInvalid, `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`, { context: { setting: 'LOG_LEVEL' } });
}

const CHINDINGS = pino.symbols.chindingsSym;

/** A copy of `err` (same prototype, so pino's err serializer still sees an Error) with its fields masked. */
function maskError(err: Error): Error {
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Record<string, unknown>;
  for (const key of Object.getOwnPropertyNames(err)) {
    const value = (err as unknown as Record<string, unknown>)[key];
    copy[key] = value instanceof Error ? maskError(value) : maskSecrets(value, 4);
  }
  return copy as unknown as Error;
}

/** The logged object with its secrets masked; errors keep their type and (masked) stack. */
function maskLogObject(obj: Record<string, unknown>): Record<string, unknown> {
  const errors: Record<string, Error> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v instanceof Error) errors[k] = maskError(v);
    else rest[k] = v;
  }
  return { ...maskSecrets(rest), ...errors };
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const opts: LoggerOptions = {
    level: resolveLogLevel(options.level ?? process.env.LOG_LEVEL),
    base: { service: options.name ?? 'tidepool', pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.epochTime,
    formatters: { level: (label) => ({ level: label }), log: maskLogObject, bindings: (bindings) => maskSecrets(bindings) },
    // pino resets the bindings formatter for children; their bindings are masked as serialized text.
    onChild: (child) => {
      const holder = child as unknown as Record<symbol, string>;
      holder[CHINDINGS] = maskSecretsInText(holder[CHINDINGS] ?? '');
    },
    hooks: {
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = maskSecretsInText(args[i] as string);
        method.apply(this, args);
      },
    },
  };
  const dest = options.destination ?? pino.destination({ fd: options.stderr ? 2 : 1, sync: false });
  return pino(opts, dest);
}
