/**
 * Protocol edges of the uWS quote port (issue 11 items 9 and 10) that JavaScript can see: what a
 * request may be before it is read at all, and a query that names a parameter twice.
 *
 * uWS.js v20.30 (the build this project uses) parses HTTP in C++ and calls JavaScript only for a
 * request it parsed. It has no limit of its own below ~its receive buffer on a URL or on header
 * fields (a 70 KB URL and a 70 KB header were both served), and for a request it cannot parse
 * (a bad request line, binary garbage, a request cut short) it answers nothing and calls no
 * handler: the socket is held until uWS's HTTP idle timeout (10 s) closes it. So:
 * - over-long URLs and header fields are refused here, in the handler: 414 past MAX_URL_CHARS of
 *   path and query, 431 past MAX_HEADER_CHARS of header names and values in all;
 * - malformed HTTP cannot get a 400 from this port: a held socket costs no JavaScript and is
 *   closed by uWS after 10 s (documented in engine/quote/README.md; a newer uWS answers 400 itself).
 */
import type uws from '@trufflesuite/uws-js-unofficial';

import { ErrorCode } from '../errors.js';
import { httpError, type HttpError } from './http-errors.js';

/** Path plus query, characters, at most (what browsers and proxies commonly accept). */
export const MAX_URL_CHARS = 8 * 1024;
/** Header names and values, characters in all, at most. */
export const MAX_HEADER_CHARS = 16 * 1024;

const URI_TOO_LONG = httpError(ErrorCode.UriTooLong, `the request URL is longer than ${MAX_URL_CHARS} characters`);
const HEADERS_TOO_LARGE = httpError(ErrorCode.HeadersTooLarge, `the request header fields are larger than ${MAX_HEADER_CHARS} characters in all`);

/**
 * The refusal of a request too large to be read (414, 431), or undefined. `query` is the whole
 * query string (`req.getQuery()`). Reads `req` synchronously (call it first in a handler).
 */
export function oversizedRequest(req: uws.HttpRequest, query: string | undefined): HttpError | undefined {
  if (req.getUrl().length + (query?.length ?? 0) > MAX_URL_CHARS) return URI_TOO_LONG;
  let size = 0;
  req.forEach((key, value) => {
    size += key.length + value.length;
  });
  return size > MAX_HEADER_CHARS ? HEADERS_TOO_LARGE : undefined;
}

/**
 * The first parameter name that `query` (the raw query string, `a=1&b=2`) gives twice, or
 * undefined. A repeated parameter is refused rather than read as its first value, which a client
 * (or a proxy that appends one) would not expect. Names are compared as sent (undecoded).
 *
 * Runs on every GET /quote: the names are compared in place (a handful of segments, each against
 * the ones before it), so a query without a repeat builds no string.
 */
export function repeatedParameter(query: string | undefined): string | undefined {
  if (query === undefined || query.length === 0) return undefined;
  for (let start = 0; start <= query.length; ) {
    const end = segmentEnd(query, start);
    if (end > start) {
      const nameEnd = nameEndOf(query, start, end);
      for (let prior = 0; prior < start; ) {
        const priorEnd = segmentEnd(query, prior);
        if (priorEnd > prior && sameName(query, prior, nameEndOf(query, prior, priorEnd), start, nameEnd)) return query.slice(start, nameEnd);
        prior = priorEnd + 1;
      }
    }
    start = end + 1;
  }
  return undefined;
}

function segmentEnd(query: string, start: number): number {
  const end = query.indexOf('&', start);
  return end === -1 ? query.length : end;
}

function nameEndOf(query: string, start: number, end: number): number {
  const eq = query.indexOf('=', start);
  return eq === -1 || eq > end ? end : eq;
}

function sameName(query: string, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; i < aEnd - a; i++) if (query.charCodeAt(a + i) !== query.charCodeAt(b + i)) return false;
  return true;
}
