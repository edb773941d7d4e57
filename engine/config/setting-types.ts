/**
 * Value parsers for settings. Each takes a raw value (a string from a flag or the environment, or
 * any JSON value from a config file) and returns the typed value, or throws a SettingIssue whose
 * message says what was expected. The loader adds which setting and which source it came from.
 */

import { ErrorCode, TpError } from '../errors.js';
import { parseUpstreamAddress } from './upstream-address.js';

export class SettingIssue extends TpError<typeof ErrorCode.ConfigInvalid> {
  constructor(message: string) {
    super(ErrorCode.ConfigInvalid, message);
  }
}

export type SettingParser<T> = ((raw: unknown) => T) & {
  /** How a value reads in help and docs (e.g. a duration as `30s`); JSON when absent. */
  format?(value: T): string;
};

/** A duration in ms as text the duration parser reads back: `1h30m`, `30s`, `1s500ms`, `10ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (!Number.isInteger(ms)) return `${ms}ms`;
  let rest = ms;
  let text = '';
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      text += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return rest === 0 ? text : `${text}${rest}ms`;
}

function describe(raw: unknown): string {
  return typeof raw === 'string' ? JSON.stringify(raw) : String(JSON.stringify(raw));
}

export function str(options: { nonEmpty?: boolean } = {}): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string') throw new SettingIssue(`expected a string, got ${describe(raw)}`);
    if (options.nonEmpty && raw.trim() === '') throw new SettingIssue('must not be empty');
    return raw;
  };
}

export function int(options: { min?: number; max?: number } = {}): SettingParser<number> {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  return (raw) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n)) throw new SettingIssue(`expected an integer, got ${describe(raw)}`);
    if (n < min || n > max) throw new SettingIssue(`expected an integer from ${min} to ${max}, got ${n}`);
    return n;
  };
}

export function num(options: { min?: number; max?: number; exclusiveMin?: boolean } = {}): SettingParser<number> {
  const { min = -Infinity, max = Infinity } = options;
  return (raw) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
    if (!Number.isFinite(n)) throw new SettingIssue(`expected a number, got ${describe(raw)}`);
    if (n < min || n > max || (options.exclusiveMin && n === min)) {
      throw new SettingIssue(`expected a number ${options.exclusiveMin ? '>' : '>='} ${min}${max === Infinity ? '' : ` and <= ${max}`}, got ${n}`);
    }
    return n;
  };
}

/** A TCP port; 0 means "any free port" (tests bind port 0). */
export const port = (): SettingParser<number> => int({ min: 0, max: 65535 });

export function bool(): SettingParser<boolean> {
  return (raw) => {
    if (typeof raw === 'boolean') return raw;
    if (typeof raw === 'string') {
      const v = raw.trim().toLowerCase();
      if (v === 'true' || v === '1' || v === 'yes' || v === 'on') return true;
      if (v === 'false' || v === '0' || v === 'no' || v === 'off') return false;
    }
    throw new SettingIssue(`expected true or false, got ${describe(raw)}`);
  };
}

export function oneOf<const T extends string>(values: readonly T[]): SettingParser<T> {
  return (raw) => {
    if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return raw as T;
    throw new SettingIssue(`expected one of ${values.join(', ')}, got ${describe(raw)}`);
  };
}

/** A list: a JSON array in a file, or comma-separated text from a flag or the environment. */
export function list<T>(item: SettingParser<T>, options: { min?: number } = {}): SettingParser<T[]> {
  return (raw) => {
    const parts: unknown[] = Array.isArray(raw)
      ? raw
      : typeof raw === 'string'
        ? raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
        : [];
    if (!Array.isArray(raw) && typeof raw !== 'string') throw new SettingIssue(`expected a list, got ${describe(raw)}`);
    const out = parts.map((p, i) => {
      try {
        return item(p);
      } catch (err) {
        throw new SettingIssue(`item ${i}: ${(err as Error).message}`);
      }
    });
    if (options.min !== undefined && out.length < options.min) {
      throw new SettingIssue(`expected at least ${options.min} items, got ${out.length}`);
    }
    return out;
  };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration in milliseconds: a number of ms, or text such as `10ms`, `30s`, `1.5m`, `1m30s`. */
export function duration(options: { min?: number } = {}): SettingParser<number> {
  const parse: SettingParser<number> = (raw) => {
    let ms: number;
    if (typeof raw === 'number') ms = raw;
    else if (typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim())) ms = Number(raw);
    else if (typeof raw === 'string' && /^((\d+(\.\d+)?)(ns|us|µs|ms|s|m|h))+$/.test(raw.trim())) {
      ms = 0;
      for (const m of raw.trim().matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
        ms += Number(m[1]) * (DURATION_UNITS[m[2]!] ?? NaN);
      }
    } else throw new SettingIssue(`expected a duration such as 10ms, 30s or 1m, got ${describe(raw)}`);
    if (!Number.isFinite(ms) || ms < (options.min ?? 0)) {
      throw new SettingIssue(`expected a duration of at least ${options.min ?? 0} ms, got ${describe(raw)}`);
    }
    return ms;
  };
  parse.format = formatDuration;
  return parse;
}

export function url(protocols: readonly string[] = ['http:', 'https:']): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string') throw new SettingIssue(`expected a URL, got ${describe(raw)}`);
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new SettingIssue(`expected a URL, got ${describe(raw)}`);
    }
    if (!protocols.includes(u.protocol)) {
      throw new SettingIssue(`expected a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL, got ${describe(raw)}`);
    }
    return raw;
  };
}

/** `host:port`, as gRPC targets are written. */
export function hostPort(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || !/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.test(raw)) {
      throw new SettingIssue(`expected host:port, got ${describe(raw)}`);
    }
    const p = Number(raw.slice(raw.lastIndexOf(':') + 1));
    if (p > 65535) throw new SettingIssue(`port out of range in ${describe(raw)}`);
    return raw;
  };
}

/**
 * A gRPC upstream's address: `host:port`, or with a scheme that says how to reach it, `https://` or
 * `grpcs://` (TLS) and `http://` or `grpc://` (plaintext) (engine/config server-tls-settings.ts).
 */
export function upstreamAddress(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string') throw new SettingIssue(`expected an upstream address, got ${describe(raw)}`);
    const parsed = parseUpstreamAddress(raw);
    if (typeof parsed === 'string') throw new SettingIssue(`${parsed}, got ${describe(raw)}`);
    return raw;
  };
}

/** A list without repeats: an entry listed twice is a typo, not a wish. */
export function uniqueList<T>(item: SettingParser<T>, options: { min?: number; max?: number } = {}): SettingParser<T[]> {
  const parseList = list(item, options.min === undefined ? {} : { min: options.min });
  return (raw) => {
    const values = parseList(raw);
    if (options.max !== undefined && values.length > options.max) {
      throw new SettingIssue(`expected at most ${options.max} items, got ${values.length}`);
    }
    const seen = new Set<T>();
    for (const v of values) {
      if (seen.has(v)) throw new SettingIssue(`${JSON.stringify(v)} is listed twice`);
      seen.add(v);
    }
    return values;
  };
}

/** A NATS server: `nats://host:port` (or tls, ws, wss) or bare `host:port`. */
export function busServer(): SettingParser<string> {
  return (raw) => {
    if (typeof raw === 'string') {
      if (/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(raw) && Number(raw.slice(raw.lastIndexOf(':') + 1)) <= 65535) return raw;
      try {
        const u = new URL(raw);
        if (['nats:', 'tls:', 'ws:', 'wss:'].includes(u.protocol) && u.hostname !== '') return raw;
      } catch {
        // reported below
      }
    }
    throw new SettingIssue(`expected a bus server such as nats://127.0.0.1:4222 or host:port, got ${describe(raw)}`);
  };
}

/** JetStream stream and consumer names: letters, digits, `_` and `-` (no `.`, `*`, `>`, spaces). */
export function jetStreamName(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,255}$/.test(raw)) {
      throw new SettingIssue(`expected a name of letters, digits, _ and -, got ${describe(raw)}`);
    }
    return raw;
  };
}
