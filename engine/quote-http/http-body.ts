/**
 * Reading a request body on the uWS quote port, bounded: a body above `maxBytes` (by its
 * Content-Length, or by what arrives) is refused with 413 TP_ERR_PAYLOAD_TOO_LARGE without reading
 * the rest; an aborted request calls nothing. uWS hands each chunk in a buffer valid only during
 * its callback, so chunks are copied.
 */
import type uws from '@trufflesuite/uws-js-unofficial';

import { ErrorCode } from '../errors.js';
import { httpError, type HttpError } from './http-errors.js';

/** Largest `POST /v1/quote` body. */
export const MAX_QUOTE_BODY_BYTES = 16 * 1024;
/** Largest `POST /v1/quote/batch` body (100 requests of ~1 KiB with room to spare). */
export const MAX_BATCH_BODY_BYTES = 256 * 1024;

export function payloadTooLarge(maxBytes: number): HttpError {
  return httpError(ErrorCode.PayloadTooLarge, `the request body is larger than ${maxBytes} bytes`);
}

/**
 * Reads the body of `res` (call from the handler, with the request's Content-Length header as
 * read there). `done` gets the bytes, or the 413 to answer; not called when the client aborts.
 * `onAborted` is registered here: the caller must not register its own.
 */
export function readBody(
  res: uws.HttpResponse,
  contentLength: string,
  maxBytes: number,
  done: (body: Buffer | HttpError, aborted: () => boolean) => void,
): void {
  let aborted = false;
  const isAborted = (): boolean => aborted;
  res.onAborted(() => {
    aborted = true;
  });
  if (contentLength !== '' && (!/^[0-9]{1,12}$/.test(contentLength) || Number(contentLength) > maxBytes)) {
    done(payloadTooLarge(maxBytes), isAborted);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished || aborted) return;
    size += chunk.byteLength;
    if (size > maxBytes) {
      finished = true;
      done(payloadTooLarge(maxBytes), isAborted);
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
    if (isLast) {
      finished = true;
      done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), isAborted);
    }
  });
}
