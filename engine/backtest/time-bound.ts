/**
 * A backtest's --from / --to: an ISO 8601 time (`2026-11-27T10:00:00Z`, a date alone is midnight
 * UTC) or Unix milliseconds (`1795600000000`). Anything else, and a range that ends before it
 * starts, is a usage error (exit code 2).
 */
import { ErrorCode, TpError } from '../errors.js';

const UNIX_MS = /^[0-9]{1,15}$/;
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Unix ms of `raw`, naming `flag` in the error. */
export function parseTimeBound(flag: string, raw: string): number {
  const text = raw.trim();
  if (UNIX_MS.test(text)) return Number(text);
  if (ISO.test(text)) {
    // A time without a zone is read as UTC, not as the machine's local time: the same arguments give the same range anywhere.
    const zoned = /[T ]\d{2}:\d{2}/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T');
    const ms = Date.parse(zoned);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  throw new TpError(ErrorCode.Usage, `--${flag}: ${JSON.stringify(raw)} is not an ISO 8601 time (2026-11-27T10:00:00Z) or Unix milliseconds`, { context: { setting: flag } });
}

/** The range [from, to], both inclusive; `from` after `to` is a usage error. */
export function parseTimeRange(from: string, to: string): { from: number; to: number } {
  const range = { from: parseTimeBound('from', from), to: parseTimeBound('to', to) };
  if (range.from > range.to) throw new TpError(ErrorCode.Usage, `--from (${new Date(range.from).toISOString()}) is after --to (${new Date(range.to).toISOString()})`, { context: { setting: 'from' } });
  return range;
}
