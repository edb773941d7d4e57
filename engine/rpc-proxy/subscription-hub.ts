import { Backoff } from '../common/index.js';
import type { Logger } from '../obs/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { EndpointSet } from './endpoint-set.js';
import type { RpcCall } from './json-rpc-request.js';
import { JsonRpcErrorCode, errorReply } from './proxy-errors.js';
import { endsSubscription, withSubscriptionId, type Notification } from './pubsub-message.js';
import { subscriptionKind } from './rpc-methods.js';
import { NO_ENDPOINT, type RpcProxyMetrics } from './rpc-proxy-metrics.js';
import type { UpstreamEndpoint } from './upstream-endpoint.js';
import { connectionLost, UpstreamPubsub, type CallAnswer } from './upstream-pubsub.js';
import { subscriptionKey } from './subscription-key.js';

/**
 * The WebSocket subscriptions of /rpc/ws, held on healthy upstreams.
 *
 * A client subscription gets its id from the proxy (from 1, unique in the proxy), not from the
 * node: it is placed on an endpoint in rotation (round robin) through the proxy's one PubSub
 * connection to that endpoint, and keeps its id wherever it lives later. Equivalent subscriptions
 * share one upstream subscription, as a node shares them: the same method and params as JSON values
 * (subscription-key.ts) join an existing one wherever it lives, and two the node answers with the
 * same id on one connection (defaults it fills in) become one, with every holder counted, so one
 * client leaving never ends another's. Each notification is relayed to every holder with
 * the holder's id written in; nothing else of it changes.
 *
 * When an upstream fails (its connection closes, errors, stops answering pings or a subscribe, or
 * the health checks take the endpoint out of rotation) every subscription on it is subscribed
 * again on another endpoint in rotation; clients keep their ids and notifications continue from
 * the new endpoint. Notifications sent while no endpoint held the subscription are not replayed.
 * When no endpoint takes it, the proxy tries again after 0.5 s, then doubling up to 30 s, until
 * one does or the client unsubscribes.
 */

/** Subscriptions one client connection may hold. */
export const MAX_SUBSCRIPTIONS_PER_CLIENT = 4096;
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/** A /rpc/ws client connection. */
export class WsClient {
  readonly subs = new Map<number, ClientSub>();
  closed = false;

  constructor(readonly send: (bytes: Uint8Array) => void) {}
}

class ClientSub {
  upstream: UpstreamSub | null = null;

  constructor(
    readonly id: number,
    readonly client: WsClient,
    readonly key: string,
    readonly method: string,
    readonly params: Uint8Array | null,
  ) {}

  /** Still wanted: the client has not unsubscribed or gone. */
  get live(): boolean {
    return !this.client.closed && this.client.subs.get(this.id) === this;
  }
}

/** One subscription on one upstream connection, shared by its holders. */
class UpstreamSub {
  upstreamId: number | null = null;
  readonly holders = new Set<ClientSub>();
  /** Resolves when the node has answered the subscribe (with its id). */
  confirmed: Promise<void>;

  constructor(
    readonly conn: UpstreamPubsub,
    readonly key: string,
    readonly method: string,
    readonly params: Uint8Array | null,
    subscribe: Promise<CallAnswer>,
  ) {
    this.confirmed = subscribe.then((answer) => {
      if ('error' in answer) throw new Rejected(answer.error, conn.endpoint.name, method);
      const id = Number(answer.result.toString('latin1'));
      if (!Number.isSafeInteger(id) || id < 0) throw connectionLost(`${conn.endpoint.name}: ${method} answered a subscription id that is not a number`, conn.endpoint.name);
      this.upstreamId = id;
    });
  }
}

/** The node refused the subscription: RpcFailed (kind rpc) carrying its JSON-RPC error, raw, to pass on as it is. */
class Rejected extends TpError<typeof ErrorCode.RpcFailed> {
  constructor(
    readonly error: Buffer,
    endpoint: string,
    method: string,
  ) {
    super(ErrorCode.RpcFailed, `${endpoint}: ${method} refused by the node`, { context: { kind: 'rpc', endpoint, method } });
  }
}

/** Per connection: its subscriptions by key and by the node's id. */
interface ConnState {
  byKey: Map<string, UpstreamSub>;
  byId: Map<number, UpstreamSub>;
}

export interface SubscriptionHubOptions {
  set: EndpointSet;
  metrics: RpcProxyMetrics;
  timeoutMs: number;
  maxPayload: number;
  logger?: Logger;
}

export class SubscriptionHub {
  private readonly set: EndpointSet;
  private readonly metrics: RpcProxyMetrics;
  private readonly logger: Logger | undefined;
  private readonly conns = new Map<number, UpstreamPubsub>();
  private readonly state = new Map<UpstreamPubsub, ConnState>();
  private readonly clients = new Set<WsClient>();
  private readonly retries = new Set<NodeJS.Timeout>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SubscriptionHubOptions) {
    this.set = options.set;
    this.metrics = options.metrics;
    this.logger = options.logger;
    // An endpoint leaving rotation takes its subscriptions elsewhere.
    this.set.onStateChange((e) => {
      if (!e.inRotation) this.conns.get(e.index)?.close('endpoint out of rotation');
    });
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Open client subscriptions by the endpoint holding them (`none`: being placed). */
  subscriptionsByEndpoint(): Map<string, number> {
    const out = new Map<string, number>();
    for (const client of this.clients) {
      for (const sub of client.subs.values()) {
        const name = sub.upstream?.conn.endpoint.name ?? NO_ENDPOINT;
        out.set(name, (out.get(name) ?? 0) + 1);
      }
    }
    return out;
  }

  connect(send: (bytes: Uint8Array) => void): WsClient {
    const client = new WsClient(send);
    this.clients.add(client);
    return client;
  }

  /** The client is gone: its subscriptions end. */
  disconnect(client: WsClient): void {
    client.closed = true;
    this.clients.delete(client);
    for (const sub of client.subs.values()) this.release(sub);
    client.subs.clear();
  }

  /** `<kind>Subscribe`: the reply to send (the client's id, or the node's error). */
  async subscribe(client: WsClient, call: RpcCall): Promise<Buffer> {
    if (client.subs.size >= MAX_SUBSCRIPTIONS_PER_CLIENT) {
      return errorReply(JsonRpcErrorCode.InvalidRequest, `Invalid request: at most ${MAX_SUBSCRIPTIONS_PER_CLIENT} subscriptions per connection`, call.id);
    }
    const params = call.params;
    const key = subscriptionKey(call.method, params);
    const sub = new ClientSub(this.nextId++, client, key, call.method, params);
    let placed: UpstreamSub;
    try {
      placed = await this.place(key, call.method, params, 0);
    } catch (err) {
      if (err instanceof Rejected) return Buffer.concat([ERROR_HEAD, err.error, ID_KEY, call.id ?? NULL, CLOSE]);
      return errorReply(JsonRpcErrorCode.Unavailable, 'no RPC endpoint took the subscription', call.id, { reason: (err as Error).message });
    }
    if (client.closed) {
      this.releaseLater(placed);
      return errorReply(JsonRpcErrorCode.Unavailable, 'connection closed', call.id);
    }
    client.subs.set(sub.id, sub);
    sub.upstream = placed;
    placed.holders.add(sub);
    return Buffer.concat([RESULT_HEAD, Buffer.from(String(sub.id)), ID_KEY, call.id ?? NULL, CLOSE]);
  }

  /** `<kind>Unsubscribe [id]`: true, or the node's "Invalid subscription id." for an id the client does not hold. */
  unsubscribe(client: WsClient, call: RpcCall): Buffer {
    let id: unknown;
    try {
      const params = call.params === null ? null : (JSON.parse(Buffer.from(call.params).toString('utf8')) as unknown);
      id = Array.isArray(params) && params.length === 1 ? params[0] : undefined;
    } catch {
      id = undefined;
    }
    const sub = typeof id === 'number' ? client.subs.get(id) : undefined;
    if (sub === undefined) return errorReply(JsonRpcErrorCode.InvalidParams, 'Invalid subscription id.', call.id);
    client.subs.delete(sub.id);
    this.release(sub);
    return Buffer.concat([RESULT_HEAD, TRUE, ID_KEY, call.id ?? NULL, CLOSE]);
  }

  /** Closes every upstream connection and stops re-subscribing. */
  close(): void {
    this.closed = true;
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    for (const conn of [...this.conns.values()]) conn.close('proxy closing');
  }

  /**
   * The upstream subscription for `key`, placed on the next endpoint in rotation that takes it,
   * shared when that connection already has it. Tries each endpoint at most once; a node's
   * refusal (a JSON-RPC error) ends the search, since another node would refuse it too.
   */
  private async place(key: string, method: string, params: Uint8Array | null, avoid: number): Promise<UpstreamSub> {
    // Joining an identical subscription where it already lives costs the node nothing.
    for (const [conn, st] of this.state) {
      const us = st.byKey.get(key);
      if (us !== undefined && us.upstreamId !== null && !conn.isLost && conn.endpoint.inRotation && (avoid & conn.endpoint.bit) === 0) return us;
    }
    let tried = avoid;
    let last: Error = connectionLost('no endpoint');
    for (let attempt = 0; attempt < this.set.list.length; attempt++) {
      const e = this.set.pick(tried);
      if ((tried & e.bit) !== 0 && attempt > 0) break;
      tried |= e.bit;
      const conn = this.connection(e);
      const st = this.state.get(conn)!;
      let us = st.byKey.get(key);
      if (us === undefined) {
        us = new UpstreamSub(conn, key, method, params, conn.call(method, params));
        st.byKey.set(key, us);
        const created = us;
        created.confirmed.then(
          () => {
            // Whoever waits for it attaches its holders, or releases it when they have gone.
            if (conn.isLost) return;
            // The node already gave this id to another subscription of ours: to the node they are
            // one, so they are one here too (its holders, its key aliased).
            const same = st.byId.get(created.upstreamId!);
            if (same === undefined) st.byId.set(created.upstreamId!, created);
            else st.byKey.set(key, same);
          },
          () => {
            if (st.byKey.get(key) === created) st.byKey.delete(key);
          },
        );
      }
      try {
        await us.confirmed;
        if (conn.isLost) throw connectionLost(`${e.name}: PubSub connection lost`, e.name);
        return st.byId.get(us.upstreamId!) ?? us;
      } catch (err) {
        if (err instanceof Rejected) throw err;
        last = err as Error;
      }
    }
    throw last;
  }

  /** The proxy's PubSub connection to `e`, opened when there is none. */
  private connection(e: UpstreamEndpoint): UpstreamPubsub {
    let conn = this.conns.get(e.index);
    if (conn === undefined || conn.isLost) {
      conn = new UpstreamPubsub(
        e,
        { onNotification: (c, n, bytes) => this.onNotification(c, n, bytes), onLost: (c, reason) => this.onLost(c, reason) },
        { timeoutMs: this.options.timeoutMs, maxPayload: this.options.maxPayload },
      );
      this.conns.set(e.index, conn);
      this.state.set(conn, { byKey: new Map(), byId: new Map() });
    }
    return conn;
  }

  private onNotification(conn: UpstreamPubsub, n: Notification, bytes: Buffer): void {
    const st = this.state.get(conn);
    const us = st?.byId.get(n.subscription);
    if (st === undefined || us === undefined) return;
    const counter = this.metrics.wsNotifications.labels(conn.endpoint.name);
    for (const holder of us.holders) {
      holder.client.send(withSubscriptionId(bytes, n, holder.id));
      counter.inc();
    }
    if (endsSubscription(bytes, n)) {
      // The node has dropped it: so do the proxy and its holders.
      st.byId.delete(n.subscription);
      deleteKeysOf(st, us);
      for (const holder of us.holders) {
        if (holder.live) holder.client.subs.delete(holder.id);
        holder.upstream = null;
      }
      us.holders.clear();
    }
  }

  /** A connection is gone: every subscription on it moves to another endpoint. */
  private onLost(conn: UpstreamPubsub, reason: string): void {
    if (this.conns.get(conn.endpoint.index) === conn) this.conns.delete(conn.endpoint.index);
    const st = this.state.get(conn);
    this.state.delete(conn);
    if (st === undefined) return;
    let moved = 0;
    // A merged subscription is under several keys: move it once.
    for (const us of new Set(st.byKey.values())) {
      const holders = [...us.holders].filter((h) => h.live);
      us.holders.clear();
      for (const h of holders) h.upstream = null;
      if (holders.length === 0 || this.closed) continue;
      moved += holders.length;
      void this.resubscribe(holders, us, conn.endpoint.bit, Backoff.doubling(RETRY_FIRST_MS, RETRY_MAX_MS));
    }
    if (moved > 0) this.logger?.warn({ endpoint: conn.endpoint.name, reason, subscriptions: moved }, 'pubsub upstream lost; subscribing again elsewhere');
  }

  private async resubscribe(holders: ClientSub[], from: UpstreamSub, avoid: number, backoff: Backoff): Promise<void> {
    let placed: UpstreamSub;
    try {
      placed = await this.place(from.key, from.method, from.params, avoid);
    } catch (err) {
      const live = holders.filter((h) => h.live);
      if (live.length === 0 || this.closed) return;
      const retryInMs = backoff.next();
      this.logger?.warn({ err: (err as Error).message, subscriptions: live.length, retryInMs }, 'no endpoint took the subscriptions; trying again');
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        void this.resubscribe(live, from, 0, backoff);
      }, retryInMs);
      this.retries.add(timer);
      return;
    }
    const counter = this.metrics.wsResubscriptions.labels(placed.conn.endpoint.name);
    for (const h of holders) {
      if (!h.live) continue;
      h.upstream = placed;
      placed.holders.add(h);
      counter.inc();
    }
    this.releaseLater(placed);
  }

  /** Releases `us` if still unheld once the other waiters for it have attached (they resume first). */
  private releaseLater(us: UpstreamSub): void {
    setImmediate(() => this.releaseIfUnheld(us));
  }

  /** A client subscription ends: its upstream one too when nobody else holds it. */
  private release(sub: ClientSub): void {
    const us = sub.upstream;
    sub.upstream = null;
    if (us === null) return;
    us.holders.delete(sub);
    this.releaseIfUnheld(us);
  }

  private releaseIfUnheld(us: UpstreamSub): void {
    if (us.holders.size > 0 || us.upstreamId === null) return;
    const st = this.state.get(us.conn);
    if (st === undefined || st.byId.get(us.upstreamId) !== us) return;
    deleteKeysOf(st, us);
    st.byId.delete(us.upstreamId);
    const kind = subscriptionKind(us.method);
    if (kind !== null) us.conn.notify(`${kind}Unsubscribe`, `[${us.upstreamId}]`);
  }
}

/** Every key under which `us` is found (its own, and those merged into it). */
function deleteKeysOf(st: ConnState, us: UpstreamSub): void {
  for (const [key, value] of st.byKey) if (value === us) st.byKey.delete(key);
}

const RESULT_HEAD = Buffer.from('{"jsonrpc":"2.0","result":');
const ERROR_HEAD = Buffer.from('{"jsonrpc":"2.0","error":');
const ID_KEY = Buffer.from(',"id":');
const CLOSE = Buffer.from('}');
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
