import { WebSocket, type RawData } from 'ws';

import { ErrorCode, TpError } from '../errors.js';
import { member, objectMembers } from './json-scan.js';
import { readNotification, type Notification } from './pubsub-message.js';
import type { UpstreamEndpoint } from './upstream-endpoint.js';

/**
 * The proxy's one PubSub WebSocket to one endpoint, shared by every client subscription placed
 * there: calls with the proxy's own ids (so clients' ids never collide), their answers matched by
 * id, notifications handed up with their upstream subscription id. A ping every 30 s finds a dead
 * peer that never closed (no pong by the next ping: the connection is cut). Any loss (close, error,
 * missed pong, a call timing out on it) is reported once through `onLost`, and every call waiting
 * fails with TP_ERR_PUBSUB_CONNECTION_LOST.
 */

export const PING_INTERVAL_MS = 30_000;

/** A call's answer: the raw `result` or `error` value. */
export type CallAnswer = { result: Buffer } | { error: Buffer };

/** The connection was lost, or a call on it failed before its answer (ErrorCode.PubsubConnectionLost). */
export function connectionLost(message: string, endpoint?: string): TpError<typeof ErrorCode.PubsubConnectionLost> {
  return new TpError(ErrorCode.PubsubConnectionLost, message, endpoint === undefined ? {} : { context: { endpoint } });
}

/**
 * What a connection needs of its peer: a name for messages and the PubSub URL. The proxy passes
 * its UpstreamEndpoint; the market scanner's websocket mode a plain `{ name, wsUrl }`.
 */
export interface PubsubPeer {
  readonly name: string;
  readonly wsUrl: string;
}

export interface UpstreamPubsubEvents<E extends PubsubPeer = UpstreamEndpoint> {
  onNotification(conn: UpstreamPubsub<E>, n: Notification, bytes: Buffer): void;
  onLost(conn: UpstreamPubsub<E>, reason: string): void;
  /** A message that is neither a notification nor an answer to a call (malformed JSON included). */
  onUnreadable?(conn: UpstreamPubsub<E>, bytes: Buffer): void;
}

interface Waiting {
  resolve(answer: CallAnswer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export class UpstreamPubsub<E extends PubsubPeer = UpstreamEndpoint> {
  readonly endpoint: E;
  /** Resolves once open; rejects with TP_ERR_PUBSUB_CONNECTION_LOST when the connection fails first. */
  readonly ready: Promise<void>;
  private readonly socket: WebSocket;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private lost = false;
  private alive = true;
  private readonly pinger: NodeJS.Timeout;

  constructor(
    endpoint: E,
    private readonly events: UpstreamPubsubEvents<E>,
    private readonly options: { timeoutMs: number; maxPayload: number },
  ) {
    this.endpoint = endpoint;
    this.socket = new WebSocket(endpoint.wsUrl, { perMessageDeflate: false, maxPayload: options.maxPayload, handshakeTimeout: options.timeoutMs });
    this.ready = new Promise<void>((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('close', () => reject(connectionLost(`${endpoint.name}: PubSub connection closed before it opened`, endpoint.name)));
    });
    this.ready.catch(() => undefined);
    this.socket.on('message', (data) => this.onMessage(asBuffer(data)));
    this.socket.on('pong', () => {
      this.alive = true;
    });
    this.socket.on('error', (err) => this.fail(`PubSub connection error: ${err.message}`));
    this.socket.on('close', (code) => this.fail(`PubSub connection closed (${code})`));
    this.pinger = setInterval(() => this.ping(), PING_INTERVAL_MS);
    this.pinger.unref();
  }

  get isLost(): boolean {
    return this.lost;
  }

  /** Sends a call once the connection is open; its answer, or TP_ERR_PUBSUB_CONNECTION_LOST (timeouts also end the connection). */
  async call(method: string, params: Uint8Array | null): Promise<CallAnswer> {
    await this.ready;
    if (this.lost) throw connectionLost(`${this.endpoint.name}: PubSub connection lost`, this.endpoint.name);
    const id = this.nextId++;
    const text =
      params === null
        ? `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}}`
        : `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${Buffer.from(params).toString('utf8')}}`;
    return new Promise<CallAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(connectionLost(`${this.endpoint.name}: no answer to ${method} within ${this.options.timeoutMs} ms`, this.endpoint.name));
        // A node that does not answer a subscribe cannot be trusted with notifications either.
        this.close(`${method} timed out`);
      }, this.options.timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.socket.send(text);
    });
  }

  /** Sends a call whose answer nobody waits for (an unsubscribe). */
  notify(method: string, params: string): void {
    if (this.lost || this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(`{"jsonrpc":"2.0","id":${this.nextId++},"method":${JSON.stringify(method)},"params":${params}}`);
  }

  /** Cuts the connection; reported through onLost like any loss. Idempotent. */
  close(reason: string): void {
    this.socket.terminate();
    this.fail(reason);
  }

  private ping(): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (!this.alive) {
      this.close(`no pong within ${PING_INTERVAL_MS} ms`);
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  private onMessage(bytes: Buffer): void {
    const n = readNotification(bytes);
    if (n !== null) {
      this.events.onNotification(this, n, bytes);
      return;
    }
    const members = objectMembers(bytes, 0, bytes.length);
    const idSpan = members === null ? undefined : member(members, 'id');
    if (members === null || idSpan === undefined) {
      this.events.onUnreadable?.(this, bytes);
      return;
    }
    const id = Number(bytes.toString('latin1', idSpan.start, idSpan.end));
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    const result = member(members, 'result');
    const error = member(members, 'error');
    if (result !== undefined) w.resolve({ result: bytes.subarray(result.start, result.end) });
    else if (error !== undefined) w.resolve({ error: bytes.subarray(error.start, error.end) });
    else w.reject(connectionLost(`${this.endpoint.name}: an answer without result or error`, this.endpoint.name));
  }

  private fail(reason: string): void {
    if (this.lost) return;
    this.lost = true;
    clearInterval(this.pinger);
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(connectionLost(`${this.endpoint.name}: ${reason}`, this.endpoint.name));
    }
    this.waiting.clear();
    if (this.socket.readyState !== WebSocket.CLOSED) this.socket.terminate();
    this.events.onLost(this, reason);
  }
}
