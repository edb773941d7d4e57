import type { IncomingMessage, ServerResponse } from 'node:http';

import bs58 from 'bs58';

import { isRpcError, rpcError, type RpcError, RpcErrorCode } from '../chain-backend.js';
import { readBody } from './http-io.js';

/**
 * JSON-RPC 2.0 over HTTP POST, framed as the Jito block engine frames it: one request per body,
 * errors as `{"jsonrpc":"2.0","error":{"code","message","data"},"id"}`. Request-level errors
 * answer HTTP 400 (415 for a non-JSON content type, 413 when too large), method errors 400,
 * internal errors 500.
 */

export type JsonRpcId = string | number | null;
export type JsonRpcMethod = (params: unknown[], req: IncomingMessage, res: ServerResponse) => unknown;

/** Bodies above this are refused: 5 transactions of 1232 bytes in base58 are about 8.5 KB. */
export const JSON_RPC_BODY_LIMIT = 256 * 1024;

export function invalidParams(message: string, data?: unknown): RpcError {
  return rpcError(RpcErrorCode.InvalidParams, `Invalid params: ${message}`, data);
}

function sendRpc(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendRpcError(res: ServerResponse, status: number, id: JsonRpcId, code: number, message: string, data?: unknown): void {
  sendRpc(res, status, { jsonrpc: '2.0', error: { code, message, data: data ?? null }, id });
}

function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && header.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * Serves one JSON-RPC request with `methods`. A method returns its result or throws RpcError;
 * any other throw is logged by the caller's `onInternal` and answered -32603.
 */
export async function serveJsonRpc(
  req: IncomingMessage,
  res: ServerResponse,
  methods: ReadonlyMap<string, JsonRpcMethod>,
  onInternal: (err: unknown, method: string) => void,
): Promise<void> {
  if (!isJsonContentType(req.headers['content-type'])) {
    req.resume();
    sendRpcError(res, 415, null, RpcErrorCode.InvalidRequest, 'Invalid content type');
    return;
  }
  let body: Buffer;
  try {
    body = await readBody(req, JSON_RPC_BODY_LIMIT);
  } catch {
    sendRpcError(res, 413, null, RpcErrorCode.InvalidRequest, 'Request too big');
    return;
  }
  let request: unknown;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch {
    sendRpcError(res, 400, null, RpcErrorCode.ParseError, 'Parse error');
    return;
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    sendRpcError(res, 400, null, RpcErrorCode.InvalidRequest, 'Invalid request');
    return;
  }
  const r = request as Record<string, unknown>;
  const rawId = r['id'];
  const id: JsonRpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  if (r['jsonrpc'] !== '2.0' || typeof r['method'] !== 'string' || (r['params'] !== undefined && !Array.isArray(r['params']))) {
    sendRpcError(res, 400, id, RpcErrorCode.InvalidRequest, 'Invalid request');
    return;
  }
  const name = r['method'];
  const method = methods.get(name);
  if (method === undefined) {
    sendRpcError(res, 400, id, RpcErrorCode.MethodNotFound, 'Method not found');
    return;
  }
  try {
    const result = await method((r['params'] as unknown[] | undefined) ?? [], req, res);
    sendRpc(res, 200, { jsonrpc: '2.0', result, id });
  } catch (err) {
    if (isRpcError(err)) {
      const status = err.context.rpcCode === RpcErrorCode.Internal ? 500 : 400;
      sendRpcError(res, status, id, err.context.rpcCode, err.message, err.context.data);
    } else {
      onInternal(err, name);
      sendRpcError(res, 500, id, RpcErrorCode.Internal, 'Internal error');
    }
  }
}

export type TxEncoding = 'base58' | 'base64';

/** The `encoding` of a `{encoding}` config param; base58 when absent (the deprecated default). */
export function txEncoding(config: unknown): TxEncoding {
  if (config === undefined || config === null) return 'base58';
  if (typeof config !== 'object' || Array.isArray(config)) throw invalidParams('the second parameter must be a config object');
  const encoding = (config as Record<string, unknown>)['encoding'];
  if (encoding === undefined || encoding === null) return 'base58';
  if (encoding === 'base58' || encoding === 'base64') return encoding;
  throw invalidParams(`unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** PACKET_DATA_SIZE: the largest serialized transaction. */
export const MAX_TRANSACTION_BYTES = 1232;

/** Decodes one encoded transaction; `index` names it in errors. */
export function decodeTransaction(text: unknown, encoding: TxEncoding, index: number): Uint8Array {
  if (typeof text !== 'string' || text.length === 0) throw invalidParams(`transaction ${index} must be a non-empty ${encoding} string`);
  let bytes: Uint8Array | undefined;
  if (encoding === 'base64') {
    bytes = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
  } else {
    bytes = bs58.decodeUnsafe(text);
  }
  if (bytes === undefined) throw invalidParams(`transaction ${index} is not valid ${encoding}`);
  if (bytes.length > MAX_TRANSACTION_BYTES) {
    throw invalidParams(`transaction ${index} is ${bytes.length} bytes, more than the ${MAX_TRANSACTION_BYTES}-byte limit`);
  }
  return bytes;
}
