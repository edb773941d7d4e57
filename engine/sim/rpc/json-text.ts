/**
 * JSON text as a Solana node writes it (leaf module).
 *
 * The node serializes u64 values (lamports, slots, rentEpoch = u64::MAX) as exact JSON integers,
 * which `JSON.stringify` cannot do for bigint; the servers therefore build their response text
 * themselves, writing bigints as raw digits. Results pass through serde_json's `Value` in the real
 * node, whose maps are ordered by key: `writeJson(value, true)` reproduces that order.
 */

/** JSON text of a value that may hold bigints (written as exact integers). */
export function writeJson(value: unknown, sortKeys = false): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? writeArray(value, sortKeys) : writeObject(value as Record<string, unknown>, sortKeys);
    default:
      return 'null';
  }
}

function writeArray(items: readonly unknown[], sortKeys: boolean): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += writeJson(items[i], sortKeys);
  }
  return out + ']';
}

function writeObject(object: Record<string, unknown>, sortKeys: boolean): string {
  const keys = Object.keys(object);
  if (sortKeys) keys.sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = object[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(key) + ':' + writeJson(v, sortKeys);
  }
  return out + '}';
}

/**
 * An f64 as serde_json writes it (ryu): shortest round-trip digits, always with a decimal point or
 * an exponent (`1.0`, `0.0001`, `1e-7`, `1e16`), never JavaScript's `1e+21` or `0.0000001`.
 */
export function writeF64(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  // toExponential() without an argument gives the shortest digits that round-trip, as ryu does.
  const exp = Math.abs(x).toExponential();
  const e = exp.indexOf('e');
  const digits = exp.slice(0, e).replace('.', '');
  const length = digits.length;
  // kk: position of the decimal point counted from the first digit (ryu's `kk`).
  const kk = Number(exp.slice(e + 1)) + 1;
  if (length <= kk && kk <= 16) return sign + digits + '0'.repeat(kk - length) + '.0';
  if (0 < kk && kk <= 16) return sign + digits.slice(0, kk) + '.' + digits.slice(kk);
  if (-5 < kk && kk <= 0) return sign + '0.' + '0'.repeat(-kk) + digits;
  const exponent = kk - 1;
  return sign + (length === 1 ? digits : digits[0] + '.' + digits.slice(1)) + 'e' + exponent;
}

/** The id of a request, echoed back: a number, a string or null. */
export function writeId(id: unknown): string {
  return typeof id === 'string' ? JSON.stringify(id) : typeof id === 'number' ? String(id) : 'null';
}

/**
 * A JSON value as Rust's `Debug` prints serde_json's `Value` (`String("x")`, `Number(1)`,
 * `Array [...]`, `Object {...}`), as jsonrpc-core puts it in some errors' `data`.
 */
export function rustDebugValue(value: unknown): string {
  if (value === null || value === undefined) return 'Null';
  switch (typeof value) {
    case 'boolean':
      return `Bool(${value})`;
    case 'number':
      return `Number(${Number.isInteger(value) ? String(value) : writeF64(value)})`;
    case 'string':
      return `String(${JSON.stringify(value)})`;
    default:
      break;
  }
  if (Array.isArray(value)) return `Array ${rustDebugList(value)}`;
  return `Object ${rustDebugMap(value as Record<string, unknown>)}`;
}

export function rustDebugList(items: readonly unknown[]): string {
  return '[' + items.map(rustDebugValue).join(', ') + ']';
}

export function rustDebugMap(object: Record<string, unknown>): string {
  const keys = Object.keys(object).sort();
  return '{' + keys.map((k) => `${JSON.stringify(k)}: ${rustDebugValue(object[k])}`).join(', ') + '}';
}
