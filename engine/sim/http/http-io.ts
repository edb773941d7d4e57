import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

import { ErrorCode, TpError } from '../../errors.js';

/**
 * Request and response helpers shared by the simulator's HTTP routes. Errors are JSON
 * `{"error":{"code","message"}}` (docs/architecture.md §3), with a stable code per failure.
 */

/**
 * The codes of the simulator HTTP API's error bodies: the engine's own (engine/errors.ts), the
 * subset its routes answer with.
 */
export const HttpErrorCode = {
  InvalidParameter: ErrorCode.BadParameter,
  InvalidJson: ErrorCode.InvalidJson,
  PayloadTooLarge: ErrorCode.PayloadTooLarge,
  NotFound: ErrorCode.NotFound,
  MethodNotAllowed: ErrorCode.MethodNotAllowed,
  Internal: ErrorCode.Internal,
} as const;
export type HttpErrorCode = (typeof HttpErrorCode)[keyof typeof HttpErrorCode];

/**
 * Thrown by a route handler to answer with an error body; anything else becomes a 500. The status
 * is the error's own field, not its context: the codes' contexts (errors.ts) have no `status`.
 */
export class HttpError extends TpError<HttpErrorCode> {
  constructor(
    readonly status: number,
    code: HttpErrorCode,
    message: string,
    readonly headers: OutgoingHttpHeaders = {},
  ) {
    super(code, message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, { error: { code, message } }, headers);
}

/** The request body, at most `limitBytes` (413 HttpError beyond, without buffering the rest). */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    return Promise.reject(tooLarge(limitBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limitBytes) {
        failed = true;
        chunks.length = 0;
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
  });
}

/** The body parsed as JSON (400 HttpError naming the problem otherwise). */
export async function readJson(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const body = await readBody(req, limitBytes);
  if (body.length === 0) throw new HttpError(400, HttpErrorCode.InvalidJson, 'request body is empty; expected JSON');
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw new HttpError(400, HttpErrorCode.InvalidJson, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

function tooLarge(limitBytes: number): HttpError {
  return new HttpError(413, HttpErrorCode.PayloadTooLarge, `request body exceeds ${limitBytes} bytes`, {
    connection: 'close',
  });
}
