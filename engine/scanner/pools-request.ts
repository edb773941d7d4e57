/**
 * The body of `POST /config/pools` (scanner HTTP port), read and checked so that no request can
 * hurt the scanner (issue 11, item 7):
 * - over `limitBytes`, the rest of the body is read and discarded (so the client, still sending,
 *   does not get a connection reset instead of the answer), then TP_ERR_PAYLOAD_TOO_LARGE (413) is
 *   answered and the connection closed. A client that sends forever is cut by http.requestTimeout,
 *   or at `discardLimitBytes`.
 * - the JSON may nest at most MAX_JSON_DEPTH levels, checked by a flat scan before parsing: a
 *   deeply nested array must not reach code that recurses over it (a stack overflow was a 500).
 * - every entry must be a string (checked without printing it), the list must not be empty (a
 *   scanner monitoring nothing while /health says ok helps nobody), and at most MAX_REPORTED_ISSUES
 *   problems are named in the answer.
 */
import type { IncomingMessage } from 'node:http';

import { ErrorCode, TpError } from '../errors.js';

export const MAX_POOLS_BODY_BYTES = 1 << 20;
/** `{"pools": [...]}` nests 2 levels; anything deeper is not a pools body. */
export const MAX_JSON_DEPTH = 4;
const MAX_REPORTED_ISSUES = 10;

/**
 * The request body as text, at most `limitBytes`. Over it, the rest is drained and discarded and
 * the promise rejects with TP_ERR_PAYLOAD_TOO_LARGE once the request has ended (or, past
 * `discardLimitBytes` of discarding, once the socket is destroyed).
 */
export function readLimitedBody(req: IncomingMessage, limitBytes = MAX_POOLS_BODY_BYTES, discardLimitBytes = 64 * limitBytes): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const tooLarge = (): TpError => new TpError(ErrorCode.PayloadTooLarge, `body over ${limitBytes} bytes`, { context: { limitBytes } });
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (!over && size > limitBytes) {
        over = true;
        chunks.length = 0;
      }
      if (!over) chunks.push(chunk);
      else if (size > discardLimitBytes) {
        req.destroy();
        reject(tooLarge());
      }
    });
    req.on('end', () => (over ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new TpError(ErrorCode.BadParameter, 'request body ended early'));
    });
  });
}

/**
 * The deepest nesting of arrays and objects in `text`, found by a flat scan that skips strings;
 * stops counting at `limit + 1`. Not a validator: JSON.parse still checks the syntax.
 */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The pool list of a POST /config/pools body; TpError(TP_ERR_CONFIG_INVALID) naming the problem. */
export function parsePoolsBody(text: string): string[] {
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new TpError(ErrorCode.ConfigInvalid, `body nests deeper than ${MAX_JSON_DEPTH} levels; expected {"pools": ["<base58 address>", ...]}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `body is not JSON: ${(err as Error).message}`);
  }
  const pools = Array.isArray(json) ? json : (json as { pools?: unknown } | null)?.pools;
  if (!Array.isArray(pools)) throw new TpError(ErrorCode.ConfigInvalid, 'body must be {"pools": ["<base58 address>", ...]} or an array of addresses');
  if (pools.length === 0) {
    throw new TpError(ErrorCode.ConfigInvalid, 'pools is empty: the scanner would monitor nothing; give at least one pool address');
  }
  const issues: string[] = [];
  let count = 0;
  for (const [i, p] of pools.entries()) {
    if (typeof p === 'string') continue;
    count++;
    if (issues.length < MAX_REPORTED_ISSUES) issues.push(`pools[${i}] is ${kindOf(p)}, not an address string`);
  }
  if (count > 0) {
    const more = count > issues.length ? `; and ${count - issues.length} more` : '';
    throw new TpError(ErrorCode.ConfigInvalid, `invalid monitored pools: ${issues.join('; ')}${more}`, { context: { issues } });
  }
  return pools as string[];
}
