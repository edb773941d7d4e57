import type { Logger } from '../obs/index.js';
import { invalidArgument } from '../errors.js';
import { FaultInjector, type RpcFault } from './faults.js';
import { JsonRpcHttpServer, JsonRpcWsServer, type RpcChainBackend } from './rpc/index.js';

/**
 * More RPC nodes of one simulated cluster: extra Solana JSON-RPC (HTTP) + PubSub (WebSocket) port
 * pairs over the same chain, as a cluster has several RPC nodes and a trading desk pays several
 * providers. Each node has
 * - its own FaultInjector (per-method errors and latency, the `ws.drop` action), apart from the
 *   simulator's main faults;
 * - a slot lag: the node reports every slot `slotLag` slots behind the chain (getSlot, response
 *   contexts, getBlockHeight, slotNotification), as a node that fell behind does. Only the slot
 *   numbers lag; account data is the chain's current state;
 * - a count of the JSON-RPC HTTP calls it received, by method (calls of known methods, counted as
 *   they arrive, before any injected latency), so a test can see what reached which node;
 * - stop(), which kills the node: every connection is cut at once (requests in flight get no
 *   answer, WebSocket clients see an abnormal close) and its ports refuse connections; start()
 *   brings it back on the same ports.
 *
 * The RPC proxy's tests put several of them behind the proxy; on a running simulator the
 * `/admin/rpc-nodes` routes (http/rpc-node-admin.ts) add and control them.
 */

export interface RpcNodeOptions {
  /** Slots the node reports behind the chain. Default 0. */
  slotLag?: number;
}

/** What `/admin/rpc-nodes` shows of a node. */
export interface RpcNodeSnapshot {
  id: number;
  running: boolean;
  /** `http://host:port`, kept while stopped (start() reuses the port). */
  rpc: string;
  /** `ws://host:port`. */
  ws: string;
  slotLag: number;
  /** JSON-RPC HTTP calls received, by method, since the node was added. */
  received: Record<string, number>;
  rpcFaults: Record<string, RpcFault>;
}

/** A FaultInjector that also counts each call it is consulted for: every call of a known method, as it arrives. */
class CountingFaults extends FaultInjector {
  readonly received = new Map<string, number>();

  override rpcFault(method: string): RpcFault | undefined {
    this.received.set(method, (this.received.get(method) ?? 0) + 1);
    return super.rpcFault(method);
  }
}

const LAGGED_READS = new Set<PropertyKey>(['slot', 'blockHeight', 'onSlot']);

/**
 * The chain as a node `lag()` slots behind sees it: slot() and blockHeight() less the lag (at
 * least 0), slot events shifted by it (none while the chain is not past the lag). Everything else
 * is the chain's own, so methods added to the chain later reach the node unchanged.
 */
export function laggingView(chain: RpcChainBackend, lag: () => number): RpcChainBackend {
  const behind = (value: bigint): bigint => {
    const d = BigInt(lag());
    return value > d ? value - d : 0n;
  };
  const overrides: Partial<RpcChainBackend> = {
    slot: (commitment) => behind(chain.slot(commitment)),
    blockHeight: (commitment) => behind(chain.blockHeight(commitment)),
    onSlot: (listener) =>
      chain.onSlot((slot, parent, root) => {
        const d = BigInt(lag());
        if (slot >= d) listener(slot - d, behind(parent), behind(root));
      }),
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(chain, {
    get(target, prop) {
      if (LAGGED_READS.has(prop)) return overrides[prop as keyof RpcChainBackend];
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(prop);
      if (fn === undefined) {
        fn = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(prop, fn);
      }
      return fn;
    },
  });
}

export class RpcNode {
  readonly id: number;
  /** This node's faults; the calls it received are counted here too. */
  readonly faults: FaultInjector;
  private readonly counting: CountingFaults;
  private readonly view: RpcChainBackend;
  private readonly host: string;
  private readonly logger: Logger | undefined;
  private lag: number;
  private http: JsonRpcHttpServer | null = null;
  private ws: JsonRpcWsServer | null = null;
  private rpcPort = 0;
  private wsPort = 0;
  private rpcUrl = '';
  private wsUrl = '';

  constructor(id: number, chain: RpcChainBackend, options: RpcNodeOptions & { host: string; logger?: Logger }) {
    this.id = id;
    this.counting = new CountingFaults(id + 1);
    this.faults = this.counting;
    this.lag = checkLag(options.slotLag ?? 0);
    this.view = laggingView(chain, () => this.lag);
    this.host = options.host;
    this.logger = options.logger?.child({ rpcNode: id });
  }

  get running(): boolean {
    return this.http !== null;
  }

  get slotLag(): number {
    return this.lag;
  }

  set slotLag(value: number) {
    this.lag = checkLag(value);
  }

  /** `http://host:port` of its JSON-RPC (empty before the first start). */
  get rpc(): string {
    return this.rpcUrl;
  }

  /** `ws://host:port` of its PubSub (empty before the first start). */
  get pubsub(): string {
    return this.wsUrl;
  }

  /** JSON-RPC HTTP calls of `method` received so far. */
  received(method: string): number {
    return this.counting.received.get(method) ?? 0;
  }

  /** Open PubSub subscriptions on this node (distinct, as the node counts them). */
  get subscriptions(): number {
    return this.ws?.subscriptionCount ?? 0;
  }

  /** Binds both ports (the same ones again after a stop). Idempotent. */
  async start(): Promise<{ rpc: string; ws: string }> {
    if (this.http !== null) return { rpc: this.rpcUrl, ws: this.wsUrl };
    // No grace on close: stop() is a node dying, not a node draining.
    const http = new JsonRpcHttpServer({ backend: this.view, faults: this.faults, host: this.host, port: this.rpcPort, closeGraceMs: 0, logger: this.logger });
    const ws = new JsonRpcWsServer({ backend: this.view, faults: this.faults, host: this.host, port: this.wsPort, closeGraceMs: 0, logger: this.logger });
    try {
      const [rpc, pubsub] = await Promise.all([http.start(), ws.start()]);
      this.rpcPort = rpc.port;
      this.wsPort = pubsub.port;
      this.rpcUrl = rpc.url;
      this.wsUrl = pubsub.url;
    } catch (err) {
      await Promise.allSettled([http.close(), ws.close()]);
      throw err;
    }
    this.http = http;
    this.ws = ws;
    return { rpc: this.rpcUrl, ws: this.wsUrl };
  }

  /** Kills the node: cuts every connection without an answer or a close handshake, frees the ports. Idempotent. */
  async stop(): Promise<void> {
    const { http, ws } = this;
    if (http === null || ws === null) return;
    this.http = null;
    this.ws = null;
    ws.dropAll();
    await Promise.all([http.close(), ws.close()]);
  }

  snapshot(): RpcNodeSnapshot {
    return {
      id: this.id,
      running: this.running,
      rpc: this.rpcUrl,
      ws: this.wsUrl,
      slotLag: this.lag,
      received: Object.fromEntries(this.counting.received),
      rpcFaults: this.faults.snapshot().rpc,
    };
  }
}

/** The largest slot lag a node takes (about 46 days of 400 ms slots). */
export const MAX_SLOT_LAG = 10_000_000;

function checkLag(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_SLOT_LAG) {
    throw invalidArgument('slotLag', value, `slotLag must be an integer in [0, ${MAX_SLOT_LAG}], got ${String(value)}`);
  }
  return value;
}

/** The extra RPC nodes of one simulator, by id (from 1; the simulator's own ports are node 0's). */
export class RpcNodes {
  private readonly nodes = new Map<number, RpcNode>();
  private nextId = 1;

  constructor(
    private readonly chain: RpcChainBackend,
    private readonly options: { host: string; logger?: Logger },
  ) {}

  /** Adds a node and starts it. */
  async add(options: RpcNodeOptions = {}): Promise<RpcNode> {
    const node = new RpcNode(this.nextId++, this.chain, { ...options, ...this.options });
    await node.start();
    this.nodes.set(node.id, node);
    this.options.logger?.info({ id: node.id, rpc: node.rpc, ws: node.pubsub, slotLag: node.slotLag }, 'rpc node added');
    return node;
  }

  get(id: number): RpcNode | undefined {
    return this.nodes.get(id);
  }

  list(): RpcNode[] {
    return [...this.nodes.values()];
  }

  /** Stops and forgets a node; false when there is none with that id. */
  async remove(id: number): Promise<boolean> {
    const node = this.nodes.get(id);
    if (node === undefined) return false;
    this.nodes.delete(id);
    await node.stop();
    return true;
  }

  /** Stops every node. */
  async close(): Promise<void> {
    const all = this.list();
    this.nodes.clear();
    await Promise.all(all.map((n) => n.stop()));
  }
}
