import { readFileSync } from 'node:fs';
import { ErrorCode, TpError } from '../errors.js';
import { maskSecrets, maskSecretsInText } from '../secret-mask.js';
import { type SettingParser, SettingIssue } from './setting-types.js';

/**
 * The configuration loader every service shares.
 *
 * A service declares its settings as a schema: one entry per setting, keyed by its dotted path in
 * the config file (`blockstream.port`), with the environment variable and command-line flag that
 * may also set it. Precedence: flag > environment variable > config file > default
 * (docs/architecture.md §3). Every invalid value is reported at once, each naming the setting and the
 * source it came from, so a bad deployment fails at start with one clear message.
 */

export interface SettingDef<T> {
  /** What the setting does; shown by `--help`. */
  description: string;
  parse: SettingParser<T>;
  default: T;
  env?: string;
  /** Long flag name without the dashes, e.g. `blockstream-port`. */
  flag?: string;
  /** Never printed in full (tokens, passwords, keys). */
  secret?: boolean;
  /**
   * How help and docs/configuration.md show a default computed from the machine (its cores, say),
   * so that the generated reference is the same wherever it is generated.
   */
  defaultText?: string;
}

export type ConfigSchema = Record<string, SettingDef<unknown>>;
export type ConfigValues<S extends ConfigSchema> = { [K in keyof S]: S[K] extends SettingDef<infer T> ? T : never };
export type SettingSource = 'flag' | 'env' | 'file' | 'default';

export interface LoadedConfig<S extends ConfigSchema> {
  values: ConfigValues<S>;
  sources: Record<keyof S, SettingSource>;
  file?: string;
}

export interface LoadOptions {
  /** Flag values by flag name, as parsed from the command line (undefined = not given). */
  flags?: Record<string, string | boolean | undefined>;
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON config file; defaults to env TIDEPOOL_CONFIG when set. */
  file?: string;
}

/** Declares a setting with its type inferred from the parser. */
export function setting<T>(def: SettingDef<T>): SettingDef<T> {
  return def;
}

export function loadConfig<S extends ConfigSchema>(schema: S, options: LoadOptions = {}): LoadedConfig<S> {
  const env = options.env ?? process.env;
  const flags = options.flags ?? {};
  const filePath = options.file ?? (env.TIDEPOOL_CONFIG || undefined);
  const fileValues = filePath === undefined ? new Map<string, unknown>() : readConfigFile(filePath, schema);

  const values: Record<string, unknown> = {};
  const sources: Record<string, SettingSource> = {};
  const issues: string[] = [];

  for (const [key, def] of Object.entries(schema)) {
    let raw: unknown;
    let source: SettingSource = 'default';
    let origin = '';
    const flagValue = def.flag === undefined ? undefined : flags[def.flag];
    const envValue = def.env === undefined ? undefined : env[def.env];
    if (flagValue !== undefined) {
      raw = flagValue;
      source = 'flag';
      origin = `flag --${def.flag}`;
    } else if (envValue !== undefined && envValue !== '') {
      raw = envValue;
      source = 'env';
      origin = `environment variable ${def.env}`;
    } else if (fileValues.has(key)) {
      raw = fileValues.get(key);
      source = 'file';
      origin = `config file ${filePath}`;
    }
    if (source === 'default') {
      values[key] = def.default;
    } else {
      try {
        values[key] = def.parse(raw);
      } catch (err) {
        if (!(err instanceof SettingIssue)) throw err;
        // A secret's value must not reach a log, not even inside the parser's own message.
        // Nor a password inside a URL, an api-key parameter or a token (engine/secret-mask.ts).
        const why = def.secret ? err.message.split(String(raw)).join('(secret)') : maskSecretsInText(err.message);
        issues.push(`${key} from ${origin} = ${def.secret ? '(secret)' : maskSecretsInText(JSON.stringify(raw) ?? String(raw))}: ${why}`);
      }
    }
    sources[key] = source;
  }

  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, {
      context: { issues },
    });
  }
  const loaded: LoadedConfig<S> = { values: values as ConfigValues<S>, sources: sources as Record<keyof S, SettingSource> };
  if (filePath !== undefined) loaded.file = filePath;
  return loaded;
}

/** Reads a JSON config file into dotted keys; nested objects and dotted keys both work. */
function readConfigFile(path: string, schema: ConfigSchema): Map<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TpError(ErrorCode.ConfigFile, `cannot read config file ${path}: ${(err as Error).message}`, { cause: err, context: { path } });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.ConfigFile, `config file ${path} is not valid JSON: ${(err as Error).message}`, { cause: err, context: { path } });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new TpError(ErrorCode.ConfigFile, `config file ${path} must hold a JSON object`, { context: { path } });
  }
  const out = new Map<string, unknown>();
  const unknown: string[] = [];
  const walk = (obj: Record<string, unknown>, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix + k;
      if (key in schema) out.set(key, v);
      else if (v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, `${key}.`);
      else unknown.push(key);
    }
  };
  walk(json as Record<string, unknown>, '');
  if (unknown.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `config file ${path} has unknown settings: ${unknown.join(', ')}`, {
      context: { issues: unknown.map((key) => `${key}: unknown setting`), unknown },
    });
  }
  return out;
}

/** The schema as `--help` text: one line per setting with its flag, variable and default. */
export function describeSchema(schema: ConfigSchema): string {
  const rows = Object.entries(schema).map(([key, def]) => {
    const names = [def.flag ? `--${def.flag}` : '', def.env ?? ''].filter(Boolean).join(', ');
    const dflt = def.secret ? '' : ` (default ${formatDefault(def)})`;
    return `  ${names.padEnd(44)} ${def.description}${dflt} [${key}]`;
  });
  return rows.join('\n');
}

/** A setting's default as help and docs show it (a duration as `30s`, anything else as JSON). */
export function formatDefault(def: SettingDef<unknown>): string {
  if (def.defaultText !== undefined) return def.defaultText;
  return def.parse.format !== undefined ? def.parse.format(def.default) : JSON.stringify(def.default);
}

/**
 * Settings, secrets masked: what `/config` and start-up logs show. A `secret` setting is
 * `[redacted]`; every other value has the secrets inside it masked too (a password in an RPC URL,
 * an `api-key=` parameter: engine/secret-mask.ts).
 */
export function redactedValues<S extends ConfigSchema>(schema: S, loaded: LoadedConfig<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) {
    out[key] = schema[key]!.secret ? '[redacted]' : maskSecrets(loaded.values[key as keyof S]);
  }
  return out;
}
