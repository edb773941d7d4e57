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
 */
export function repeatedParameter(query: string | undefined): string | undefined {
  if (query === undefined || query.length === 0) return undefined;
  let seen: string[] | undefined;
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    if (end > start) {
      const eq = query.indexOf('=', start);
      const name = query.slice(start, eq === -1 || eq > end ? end : eq);
      if (seen === undefined) seen = [name];
      else if (seen.includes(name)) return name;
      else seen.push(name);
    }
    start = end + 1;
  }
  return undefined;
}
