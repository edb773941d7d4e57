import { parseArgs } from 'node:util';
import { ErrorCode, TpError } from '../errors.js';
import type { ConfigSchema } from './loader.js';

/**
 * Splits a command line into the flags of a config schema, the command's own options, and
 * positional arguments. Accepts the Go-style single-dash long flags of spec 01 (`-http-port 8080`)
 * as well as `--http-port=8080`, and boolean flags written bare (`--enable-heartbeat`) or with a
 * value (`--enable-heartbeat=false`).
 */

export interface CommandOption {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  description: string;
}

export interface ParsedCommandLine {
  /** Config flags, by flag name, to pass to loadConfig. */
  flags: Record<string, string | boolean | undefined>;
  /** The command's own options (not config settings). */
  options: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

const isBool = (schema: ConfigSchema, name: string): boolean =>
  Object.values(schema).some((d) => d.flag === name && d.default !== undefined && typeof d.default === 'boolean');

export function parseCommandLine(
  argv: readonly string[],
  schema: ConfigSchema,
  ownOptions: Record<string, CommandOption> = {},
): ParsedCommandLine {
  const flagNames = new Set(Object.values(schema).flatMap((d) => (d.flag ? [d.flag] : [])));
  const normalized: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]!;
    if (arg === '--') {
      normalized.push(...argv.slice(i));
      break;
    }
    // Go-style `-long-flag` -> `--long-flag` (single letters stay short options).
    if (/^-[A-Za-z][A-Za-z0-9-]+(=.*)?$/.test(arg)) arg = `-${arg}`;
    const m = /^--([A-Za-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (m && flagNames.has(m[1]!) && isBool(schema, m[1]!)) {
      // A bare boolean flag means true; an explicit value is validated by the loader.
      const next = argv[i + 1];
      if (m[2] !== undefined) normalized.push(`--${m[1]}=${m[2]}`);
      else if (next !== undefined && /^(true|false|1|0|yes|no|on|off)$/i.test(next)) {
        normalized.push(`--${m[1]}=${next}`);
        i++;
      } else normalized.push(`--${m[1]}=true`);
      continue;
    }
    normalized.push(arg);
  }

  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const name of flagNames) options[name] = { type: 'string' };
  for (const [name, opt] of Object.entries(ownOptions)) {
    options[name] = { type: opt.type, ...(opt.multiple ? { multiple: true } : {}), ...(opt.short ? { short: opt.short } : {}) };
  }

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: normalized, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new TpError(ErrorCode.Usage, (err as Error).message, { cause: err });
  }
  const flags: ParsedCommandLine['flags'] = {};
  const own: ParsedCommandLine['options'] = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    if (flagNames.has(name) && !(name in ownOptions)) flags[name] = value as string | boolean;
    else own[name] = value as string | boolean | string[];
  }
  return { flags, options: own, positionals: parsed.positionals };
}

