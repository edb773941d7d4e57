import { getProgramAccounts } from './program-account-methods.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Logger } from '../../obs/index.js';
import type { FaultInjector } from '../faults.js';
import { getAccountInfo, getBalance, getMultipleAccounts, getTokenAccountBalance } from './account-methods.js';
import {
  getBlockHeight,
  getEpochInfo,
  getEpochSchedule,
  getGenesisHash,
  getHealth,
  getLatestBlockhash,
  getSlot,
  getVersion,
  isBlockhashValid,
} from './cluster-methods.js';
import { JsonRpcEndpoint, type RpcMethodHandler } from './json-rpc-endpoint.js';
import {
  contextPrefix,
  DEFAULT_NODE_INFO,
  DEFAULT_RPC_HOST,
  type BoundAddress,
  type RpcChainBackend,
  type RpcMethodContext,
  type RpcNodeInfo,
} from './rpc-backend.js';
import { getTokenAccountsByOwner } from './token-account-methods.js';
import { requestAirdrop, simRequestTokens } from './faucet-methods.js';
import { getSignatureStatuses, sendTransaction, simulateTransaction } from './transaction-methods.js';
import { getTransaction } from './transaction-history-methods.js';
import { getMinimumBalanceForRentExemption, getRecentPrioritizationFees } from './fee-methods.js';

/**
 * The simulator's Solana JSON-RPC over HTTP: POST a JSON-RPC 2.0 request or batch to any path,
 * answered as an agave node answers (jsonrpc-http-server in front of jsonrpc-core): 200 with the
 * response and a newline, an empty body for notifications, 415 without a JSON content type, 405
 * for other HTTP methods, 413 over the body limit; `GET /health` answers `ok`.
 */

export const RPC_HTTP_METHODS: ReadonlyMap<string, RpcMethodHandler<RpcMethodContext>> = new Map([
  ['getAccountInfo', getAccountInfo],
  ['getMultipleAccounts', getMultipleAccounts],
  ['getBalance', getBalance],
  ['getTokenAccountBalance', getTokenAccountBalance],
  ['getSlot', getSlot],
  ['getBlockHeight', getBlockHeight],
  ['getEpochInfo', getEpochInfo],
  ['getEpochSchedule', getEpochSchedule],
  ['getLatestBlockhash', getLatestBlockhash],
  ['isBlockhashValid', isBlockhashValid],
  ['getHealth', getHealth],
  ['getVersion', getVersion],
  ['getGenesisHash', getGenesisHash],
  ['sendTransaction', sendTransaction],
  ['simulateTransaction', simulateTransaction],
  ['getSignatureStatuses', getSignatureStatuses],
  ['getTokenAccountsByOwner', getTokenAccountsByOwner],
  ['getProgramAccounts', getProgramAccounts],
  ['getTransaction', getTransaction],
  ['getRecentPrioritizationFees', getRecentPrioritizationFees],
  ['getMinimumBalanceForRentExemption', getMinimumBalanceForRentExemption],
  ['requestAirdrop', requestAirdrop],
  // The simulator's own: a real node answers -32601 Method not found.
  ['simRequestTokens', simRequestTokens],
]);

export const DEFAULT_RPC_HTTP_PORT = 8899;
/** The node's `MAX_REQUEST_BODY_SIZE`. */
export const MAX_REQUEST_BODY_BYTES = 50 * 1024;

export interface JsonRpcHttpServerOptions {
  backend: RpcChainBackend;
  /** Per-method errors and latency; none when absent. */
  faults?: FaultInjector;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8899; 0 picks a free port. */
  port?: number;
  /** getVersion, `context.apiVersion`, getGenesisHash. */
  node?: Partial<RpcNodeInfo>;
  maxRequestBodyBytes?: number;
  /** How long close() lets requests in flight finish before cutting their connections. Default 2000 ms. */
  closeGraceMs?: number;
  logger?: Logger;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';
const UNSUPPORTED_CONTENT_TYPE = 'Supplied content type is not allowed. Content-Type: application/json is required\n';
const METHOD_NOT_ALLOWED = 'Used HTTP Method is not allowed. POST or OPTIONS is required\n';
const TOO_LARGE = 'request body size exceeds allowed maximum';
const EMPTY_BODY = Buffer.alloc(0);

/** jsonrpc-http-server's `is_json`: exactly these, any case. */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.toLowerCase();
  return v === 'application/json' || v === 'application/json; charset=utf-8' || v === 'application/json;charset=utf-8';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Body of one POST being read; kept on the request so the shared listeners need no closure. */
class PendingBody {
  chunk: Buffer | null = null;
  chunks: Buffer[] | null = null;
  size = 0;
  refused = false;

  constructor(
    readonly server: JsonRpcHttpServer,
    readonly res: ServerResponse,
  ) {}
}

const PENDING = Symbol('tidepool.rpc.pendingBody');
type RequestWithBody = IncomingMessage & { [PENDING]?: PendingBody };

function onBodyData(this: RequestWithBody, data: Buffer): void {
  const body = this[PENDING]!;
  if (body.refused) return;
  body.size += data.length;
  if (body.size > body.server.maxRequestBodyBytes) {
    body.refused = true;
    body.chunk = null;
    body.chunks = null;
    body.server.sendText(body.res, 413, TOO_LARGE, true);
    return;
  }
  if (body.chunk === null) body.chunk = data;
  else (body.chunks ??= [body.chunk]).push(data);
}

function onBodyEnd(this: RequestWithBody): void {
  const body = this[PENDING]!;
  this[PENDING] = undefined;
  if (body.refused) return;
  const bytes = body.chunks !== null ? Buffer.concat(body.chunks) : (body.chunk ?? Buffer.alloc(0));
  body.server.answer(body.res, bytes);
}

export class JsonRpcHttpServer {
  readonly backend: RpcChainBackend;
  readonly endpoint: JsonRpcEndpoint<RpcMethodContext>;
  readonly maxRequestBodyBytes: number;
  private readonly ctx: RpcMethodContext;
  private readonly server: Server;
  private readonly host: string;
  private readonly port: number;
  private readonly closeGraceMs: number;
  private readonly logger: Logger | undefined;
  private bound: BoundAddress | null = null;
  /** Set while close() runs: answers then ask clients to close their connection. */
  private closing: Promise<void> | null = null;

  constructor(options: JsonRpcHttpServerOptions) {
    this.backend = options.backend;
    const node: RpcNodeInfo = { ...DEFAULT_NODE_INFO, ...options.node };
    this.ctx = { backend: options.backend, node, contextPrefix: contextPrefix(node) };
    this.endpoint = new JsonRpcEndpoint(RPC_HTTP_METHODS, { faults: options.faults, logger: options.logger });
    this.maxRequestBodyBytes = options.maxRequestBodyBytes ?? MAX_REQUEST_BODY_BYTES;
    this.host = options.host ?? DEFAULT_RPC_HOST;
    this.port = options.port ?? DEFAULT_RPC_HTTP_PORT;
    this.closeGraceMs = options.closeGraceMs ?? 2000;
    this.logger = options.logger;
    this.server = createServer(this.onRequest.bind(this));
  }

  /** The bound address once started, else null. */
  get address(): BoundAddress | null {
    return this.bound;
  }

  /** Listens on the configured host and port; resolves with the bound address. */
  async start(): Promise<BoundAddress> {
    if (this.bound !== null) return this.bound;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const info = this.server.address() as AddressInfo;
    const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
    this.bound = { host: info.address, port: info.port, url: `http://${host}:${info.port}` };
    this.logger?.info({ url: this.bound.url }, 'solana json-rpc http listening');
    return this.bound;
  }

  /**
   * Stops accepting connections, lets requests in flight finish (up to closeGraceMs), closes idle
   * keep-alive connections, then cuts whatever remains.
   */
  async close(): Promise<void> {
    if (this.bound === null) return;
    this.closing ??= new Promise<void>((resolve) => {
      const cut = setTimeout(() => this.server.closeAllConnections(), this.closeGraceMs);
      cut.unref();
      this.server.close(() => {
        clearTimeout(cut);
        this.bound = null;
        this.closing = null;
        resolve();
      });
      this.server.closeIdleConnections();
    });
    return this.closing;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    switch (req.method) {
      case 'POST': {
        if (!isJsonContentType(req.headers['content-type'])) {
          this.sendText(res, 415, UNSUPPORTED_CONTENT_TYPE, false);
          return;
        }
        (req as RequestWithBody)[PENDING] = new PendingBody(this, res);
        req.on('data', onBodyData);
        req.on('end', onBodyEnd);
        return;
      }
      case 'OPTIONS':
        res.writeHead(200, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'OPTIONS, POST',
          'access-control-allow-headers': 'origin, content-type, accept, user-agent, solana-client',
          'access-control-max-age': '86400',
          'content-length': '0',
        });
        res.end();
        return;
      case 'GET':
        if (req.url === '/health') {
          this.sendText(res, 200, 'ok', false);
          return;
        }
        break;
      default:
        break;
    }
    this.sendText(res, 405, METHOD_NOT_ALLOWED, false);
  }

  /** @internal Answers a complete POST body. */
  answer(res: ServerResponse, bytes: Buffer): void {
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.sendText(res, 400, `utf-8 encoding error at byte ${utf8ValidUpTo(bytes)} in request body`, false);
      return;
    }
    const reply = this.endpoint.handle(this.ctx, text);
    if (reply === null || typeof reply === 'string') {
      this.sendJson(res, reply);
      return;
    }
    reply.then(
      (late) => this.sendJson(res, late),
      (err: unknown) => {
        this.logger?.error({ err }, 'json-rpc reply failed');
        this.sendText(res, 500, 'Internal Server Error', false);
      },
    );
  }

  private sendJson(res: ServerResponse, reply: string | null): void {
    if (res.destroyed) return;
    // A response is the JSON text and a newline (for curl), or nothing for notifications. Encoded
    // once: the length header and the write share the bytes.
    const body = reply === null ? EMPTY_BODY : Buffer.from(reply + '\n');
    res.writeHead(
      200,
      this.closing !== null
        ? { 'content-type': JSON_CONTENT_TYPE, 'content-length': body.length, connection: 'close' }
        : { 'content-type': JSON_CONTENT_TYPE, 'content-length': body.length },
    );
    res.end(body);
  }

  /** @internal A plain-text answer (errors of the HTTP layer). */
  sendText(res: ServerResponse, status: number, text: string, close: boolean): void {
    if (res.headersSent || res.destroyed) return;
    const body = Buffer.from(text);
    res.writeHead(
      status,
      close || this.closing !== null
        ? { 'content-type': TEXT_CONTENT_TYPE, 'content-length': body.length, connection: 'close' }
        : { 'content-type': TEXT_CONTENT_TYPE, 'content-length': body.length },
    );
    res.end(body);
  }
}

/** Length of the longest valid UTF-8 prefix (Rust's `Utf8Error::valid_up_to`). */
function utf8ValidUpTo(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    try {
      utf8.decode(bytes.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return i;
}
