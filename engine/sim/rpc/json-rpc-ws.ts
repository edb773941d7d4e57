import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { WebSocketServer, WebSocket, type RawData } from 'ws';

import type { Logger } from '../../obs/index.js';
import type { AccountRecord, Commitment } from '../chain-backend.js';
import type { FaultAction, FaultInjector } from '../faults.js';
import { writeVersion } from './cluster-methods.js';
import { JsonRpcEndpoint, type RpcMethodHandler } from './json-rpc-endpoint.js';
import { writeJson } from './json-text.js';
import {
  DEFAULT_COMMITMENT,
  DEFAULT_NODE_INFO,
  DEFAULT_RPC_HOST,
  type BoundAddress,
  type RpcChainBackend,
  type RpcNodeInfo,
} from './rpc-backend.js';
import { readAccountInfoConfig } from './rpc-configs.js';
import {
  flattenedCommitment,
  invalidParams,
  isPubkey,
  isSignature,
  readBool,
  readString,
  readStruct,
  readU64,
  trailingArgs,
  tupleArgs,
} from './rpc-params.js';
import { EMPTY_ACCOUNT, NO_SLICE, writeUiAccount, type AccountEncoding } from './ui-account.js';

/**
 * The simulator's Solana PubSub over WebSocket, as an agave node serves it: accountSubscribe,
 * slotSubscribe, signatureSubscribe and their unsubscribes, getVersion. Subscription ids are
 * numbers from 0, shared by every subscriber with the same parameters (on any connection), as the
 * node deduplicates them. A FaultInjector `ws.drop` action cuts every connection at once.
 *
 * Notifications follow the chain's onAccount / onSlot events as they come: the chain decides
 * when a change is visible, whatever commitment the subscriber named. Signature subscriptions are
 * checked at each slot. A server is started once and closed for good.
 */

export const DEFAULT_RPC_WS_PORT = 8900;
/** The node's PubSub frame and message limit. */
export const MAX_WS_MESSAGE_BYTES = 4096;

export interface JsonRpcWsServerOptions {
  backend: RpcChainBackend;
  /** Listened to for `ws.drop`. */
  faults?: FaultInjector;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8900; 0 picks a free port. */
  port?: number;
  node?: Partial<RpcNodeInfo>;
  maxMessageBytes?: number;
  /** How long close() waits for clients to answer the close handshake. Default 1000 ms. */
  closeGraceMs?: number;
  logger?: Logger;
}

const Kind = { Account: 0, Slot: 1, Signature: 2 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

const COMMITMENT_RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** One server-side subscription, shared by every (connection, subscribe call) with the same parameters. */
class Subscription {
  readonly holders = new Set<PubSubConnection>();
  /** Detaches the chain listener; set for account subscriptions. */
  detach: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly key: string,
    readonly kind: Kind,
    /** Account address or signature; empty for slots. */
    readonly target: string,
    readonly encoding: AccountEncoding,
    readonly commitment: Commitment,
  ) {}
}

/** One WebSocket client and the subscriptions it holds by id. */
class PubSubConnection {
  readonly subscriptions = new Map<number, Subscription>();

  constructor(
    readonly server: JsonRpcWsServer,
    readonly socket: WebSocket,
  ) {}

  send(text: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
  }
}

const CONNECTION = Symbol('tidepool.rpc.pubsubConnection');
type SocketWithConnection = WebSocket & { [CONNECTION]?: PubSubConnection };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function rawText(data: RawData): string {
  if (Array.isArray(data)) return utf8.decode(Buffer.concat(data));
  return utf8.decode(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
}

function onSocketMessage(this: SocketWithConnection, data: RawData): void {
  const conn = this[CONNECTION];
  if (conn === undefined) return;
  let text: string;
  try {
    text = rawText(data);
  } catch {
    // The node closes a connection that sends bytes that are not UTF-8.
    this.close();
    return;
  }
  conn.server.onMessage(conn, text);
}

function onSocketClose(this: SocketWithConnection): void {
  const conn = this[CONNECTION];
  if (conn === undefined) return;
  this[CONNECTION] = undefined;
  conn.server.onClose(conn);
}

function onSocketError(this: SocketWithConnection, err: Error): void {
  this[CONNECTION]?.server.logger?.debug({ err }, 'pubsub socket error');
}

// --- methods: [params] → result JSON text ---

function accountSubscribe(conn: PubSubConnection, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const address = readString(args[0]);
  const config = readAccountInfoConfig(args[1]);
  if (!isPubkey(address)) throw invalidParams('Invalid Request: Invalid pubkey provided');
  // The node keeps dataSlice with the subscription but encodes notifications whole.
  const encoding = config.encoding ?? 'binary';
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const key = `account:${address}:${encoding}:${commitment}:${config.slice.offset}:${config.slice.length}`;
  return String(conn.server.subscribe(conn, key, Kind.Account, address, encoding, commitment));
}

function signatureSubscribe(conn: PubSubConnection, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const signature = readString(args[0]);
  const config = readStruct(args[1], 'RpcSignatureSubscribeConfig');
  let commitment: Commitment | undefined;
  let received = false;
  if (config !== null) {
    for (const key in config) {
      const x = config[key];
      if (key === 'commitment') commitment = flattenedCommitment(x);
      else if (key === 'enableReceivedNotification' && x !== null) received = readBool(x);
    }
  }
  if (!isSignature(signature)) throw invalidParams('Invalid Request: Invalid signature provided');
  const level = commitment ?? DEFAULT_COMMITMENT;
  const key = `signature:${signature}:${level}:${received}`;
  const id = conn.server.subscribe(conn, key, Kind.Signature, signature, 'base64', level);
  conn.server.checkSignatureSoon(id);
  return String(id);
}

function slotSubscribe(conn: PubSubConnection, params: unknown): string {
  trailingArgs(params, 0, 0);
  return String(conn.server.subscribe(conn, 'slot', Kind.Slot, '', 'base64', 'processed'));
}

/** All unsubscribe methods: the node drops the id whatever kind it was. */
function unsubscribe(conn: PubSubConnection, params: unknown): string {
  const id = Number(readU64(tupleArgs(params, 1)[0]));
  if (!conn.server.unsubscribe(conn, id)) throw invalidParams('Invalid subscription id.');
  return 'true';
}

function getVersion(conn: PubSubConnection, params: unknown): string {
  trailingArgs(params, 0, 0);
  return writeVersion(conn.server);
}

export const RPC_WS_METHODS: ReadonlyMap<string, RpcMethodHandler<PubSubConnection>> = new Map([
  ['accountSubscribe', accountSubscribe],
  ['accountUnsubscribe', unsubscribe],
  ['slotSubscribe', slotSubscribe],
  ['slotUnsubscribe', unsubscribe],
  ['signatureSubscribe', signatureSubscribe],
  ['signatureUnsubscribe', unsubscribe],
  ['getVersion', getVersion],
]);

export class JsonRpcWsServer {
  readonly backend: RpcChainBackend;
  readonly node: RpcNodeInfo;
  readonly logger: Logger | undefined;
  private readonly endpoint: JsonRpcEndpoint<PubSubConnection>;
  private readonly faults: FaultInjector | undefined;
  private readonly host: string;
  private readonly port: number;
  private readonly closeGraceMs: number;
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<PubSubConnection>();
  private readonly byKey = new Map<string, Subscription>();
  private readonly byId = new Map<number, Subscription>();
  private readonly signatures = new Set<Subscription>();
  private slotSubscription: Subscription | null = null;
  private nextId = 0;
  private detachSlot: (() => void) | null = null;
  private readonly signatureChecks: number[] = [];
  private bound: BoundAddress | null = null;
  private closing: Promise<void> | null = null;
  private readonly onFaultAction = (action: FaultAction): void => {
    if (action === 'ws.drop') this.dropAll();
  };

  constructor(options: JsonRpcWsServerOptions) {
    this.backend = options.backend;
    this.node = { ...DEFAULT_NODE_INFO, ...options.node };
    this.logger = options.logger;
    this.faults = options.faults;
    this.host = options.host ?? DEFAULT_RPC_HOST;
    this.port = options.port ?? DEFAULT_RPC_WS_PORT;
    this.closeGraceMs = options.closeGraceMs ?? 1000;
    this.endpoint = new JsonRpcEndpoint(RPC_WS_METHODS, { logger: options.logger });
    this.http = createServer(answerPlainHttp);
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: options.maxMessageBytes ?? MAX_WS_MESSAGE_BYTES,
      clientTracking: false,
    });
    this.wss.on('connection', (socket: WebSocket) => this.onConnection(socket));
    // ws re-emits the HTTP server's errors; start() reports listen errors itself.
    this.wss.on('error', ignoreError);
  }

  get address(): BoundAddress | null {
    return this.bound;
  }

  /** Open WebSocket connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Distinct live subscriptions (shared ones count once). */
  get subscriptionCount(): number {
    return this.byId.size;
  }

  async start(): Promise<BoundAddress> {
    if (this.bound !== null) return this.bound;
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.port, this.host, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.detachSlot = this.backend.onSlot((slot, parent, root) => this.onSlot(slot, parent, root));
    this.faults?.on('action', this.onFaultAction);
    const info = this.http.address() as AddressInfo;
    const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
    this.bound = { host: info.address, port: info.port, url: `ws://${host}:${info.port}` };
    this.logger?.info({ url: this.bound.url }, 'solana pubsub websocket listening');
    return this.bound;
  }

  /** Sends a close frame to every client, cuts those that do not answer in time, releases all listeners. */
  async close(): Promise<void> {
    if (this.bound === null) return;
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.faults?.off('action', this.onFaultAction);
    this.detachSlot?.();
    this.detachSlot = null;
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    for (const conn of this.connections) conn.socket.close(1001, 'server shutting down');
    const cut = setTimeout(() => {
      for (const conn of this.connections) conn.socket.terminate();
    }, this.closeGraceMs);
    cut.unref();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await closed;
    clearTimeout(cut);
    this.bound = null;
  }

  /** Cuts every connection without a close handshake: clients see an abnormal close (1006). */
  dropAll(): void {
    this.logger?.info({ connections: this.connections.size }, 'pubsub: dropping every connection (fault)');
    for (const conn of this.connections) conn.socket.terminate();
  }

  private onConnection(socket: WebSocket): void {
    const conn = new PubSubConnection(this, socket);
    (socket as SocketWithConnection)[CONNECTION] = conn;
    this.connections.add(conn);
    socket.on('message', onSocketMessage);
    socket.on('close', onSocketClose);
    socket.on('error', onSocketError);
  }

  /** @internal */
  onMessage(conn: PubSubConnection, text: string): void {
    const reply = this.endpoint.handle(conn, text);
    if (typeof reply === 'string') conn.send(reply);
    else if (reply !== null) void reply.then((late) => late !== null && conn.send(late));
    if (this.signatureChecks.length > 0) this.runSignatureChecks();
  }

  /** @internal */
  onClose(conn: PubSubConnection): void {
    this.connections.delete(conn);
    for (const sub of conn.subscriptions.values()) this.release(sub, conn);
    conn.subscriptions.clear();
  }

  /** @internal Adds `conn` as a holder of the subscription with `key`, creating it if new; its id. */
  subscribe(
    conn: PubSubConnection,
    key: string,
    kind: Kind,
    target: string,
    encoding: AccountEncoding,
    commitment: Commitment,
  ): number {
    let sub = this.byKey.get(key);
    if (sub === undefined) {
      sub = new Subscription(this.nextId++, key, kind, target, encoding, commitment);
      this.byKey.set(key, sub);
      this.byId.set(sub.id, sub);
      if (kind === Kind.Account) this.attachAccount(sub);
      else if (kind === Kind.Slot) this.slotSubscription = sub;
      else this.signatures.add(sub);
    }
    sub.holders.add(conn);
    conn.subscriptions.set(sub.id, sub);
    return sub.id;
  }

  /** @internal False when `conn` holds no subscription `id`. */
  unsubscribe(conn: PubSubConnection, id: number): boolean {
    const sub = conn.subscriptions.get(id);
    if (sub === undefined) return false;
    conn.subscriptions.delete(id);
    this.release(sub, conn);
    return true;
  }

  /** @internal Checks a signature subscription once its subscribe reply is sent. */
  checkSignatureSoon(id: number): void {
    this.signatureChecks.push(id);
  }

  private release(sub: Subscription, conn: PubSubConnection): void {
    sub.holders.delete(conn);
    if (sub.holders.size > 0) return;
    sub.detach?.();
    sub.detach = null;
    this.byKey.delete(sub.key);
    this.byId.delete(sub.id);
    if (sub === this.slotSubscription) this.slotSubscription = null;
    this.signatures.delete(sub);
  }

  private attachAccount(sub: Subscription): void {
    sub.detach = this.backend.onAccount(sub.target, (account, slot) => this.notifyAccount(sub, account, slot));
  }

  private notifyAccount(sub: Subscription, account: AccountRecord | null, slot: bigint): void {
    if (sub.holders.size === 0) return;
    const text =
      '{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":' +
      slot.toString() +
      '},"value":' +
      writeUiAccount(account ?? EMPTY_ACCOUNT, sub.encoding, NO_SLICE) +
      '},"subscription":' +
      sub.id +
      '}}';
    for (const holder of sub.holders) holder.send(text);
  }

  private onSlot(slot: bigint, parent: bigint, root: bigint): void {
    const sub = this.slotSubscription;
    if (sub !== null) {
      const text =
        '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"slot":' +
        slot.toString() +
        ',"parent":' +
        parent.toString() +
        ',"root":' +
        root.toString() +
        '},"subscription":' +
        sub.id +
        '}}';
      for (const holder of sub.holders) holder.send(text);
    }
    for (const signature of this.signatures) this.checkSignature(signature);
  }

  private runSignatureChecks(): void {
    const ids = this.signatureChecks.splice(0);
    for (const id of ids) {
      const sub = this.byId.get(id);
      if (sub !== undefined) this.checkSignature(sub);
    }
  }

  /** Notifies once the signature's status reaches the subscription's commitment; the subscription then ends. */
  private checkSignature(sub: Subscription): void {
    const status = this.backend.signatureStatus(sub.target);
    if (status === null || COMMITMENT_RANK[status.confirmationStatus] < COMMITMENT_RANK[sub.commitment]) return;
    const err = status.err === null || status.err === undefined ? 'null' : writeJson(status.err);
    const text =
      '{"jsonrpc":"2.0","method":"signatureNotification","params":{"result":{"context":{"slot":' +
      this.backend.slot(sub.commitment).toString() +
      '},"value":{"err":' +
      err +
      '}},"subscription":' +
      sub.id +
      '}}';
    for (const holder of [...sub.holders]) {
      holder.send(text);
      holder.subscriptions.delete(sub.id);
      this.release(sub, holder);
    }
  }
}

function ignoreError(): void {}

function answerPlainHttp(_req: IncomingMessage, res: ServerResponse): void {
  const body = 'WebSocket upgrade expected\n';
  res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
