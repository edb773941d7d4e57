/** Reading a strategy_configs row's parameters (JSON): each bad value is TP_ERR_CONFIG_INVALID naming it. */
import { ErrorCode, TpError } from '../errors.js';

const U64 = /^(0|[1-9][0-9]{0,19})$/;
const ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

function bad(key: string, message: string): never {
  throw new TpError(ErrorCode.ConfigInvalid, `strategy parameter ${key} ${message}`, { context: { setting: key } });
}

export class StrategyParams {
  constructor(
    private readonly params: Record<string, unknown>,
    private readonly strategy: string,
  ) {}

  address(key: string): string {
    const v = this.params[key];
    if (typeof v !== 'string' || !ADDRESS.test(v)) bad(key, `(${this.strategy}) must be a base58 address, got ${JSON.stringify(v)}`);
    return v as string;
  }

  u64(key: string, fallback?: bigint): bigint {
    const v = this.params[key];
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== 'string' || !U64.test(v)) bad(key, `(${this.strategy}) must be a u64 decimal string, got ${JSON.stringify(v)}`);
    return BigInt(v as string);
  }

  number(key: string, fallback?: number, min = Number.NEGATIVE_INFINITY): number {
    const v = this.params[key];
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) bad(key, `(${this.strategy}) must be a number${min > Number.NEGATIVE_INFINITY ? ` of at least ${min}` : ''}, got ${JSON.stringify(v)}`);
    return v as number;
  }

  optionalNumber(key: string): number | undefined {
    return this.params[key] === undefined ? undefined : this.number(key, undefined, 0);
  }

  /** A list of strings each matching `pattern`, or undefined when absent. */
  optionalStringList(key: string, pattern: RegExp): string[] | undefined {
    const v = this.params[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string' && pattern.test(x))) bad(key, `(${this.strategy}) must be a non-empty list of names matching ${pattern.source}, got ${JSON.stringify(v)}`);
    return [...(v as string[])];
  }
}
