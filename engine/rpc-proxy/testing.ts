/**
 * Test support for the RPC proxy: a manual simulator with RPC nodes behind a proxy on port 0, and
 * small clients over real HTTP and WebSocket. Never imported by runtime code.
 */
import { once } from 'node:events';

import { Agent, request } from 'undici';
import { WebSocket, type ClientOptions } from 'ws';

import { buildTransaction } from '../chain/index.js';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/logger.js';
import { createSimulator, memoInstruction, simSchema, systemTransfer, type RpcNode, type RpcNodeOptions, type Simulator } from '../sim/index.js';
import { defaultRpcProxyConfig, type RpcProxyConfig } from './rpc-proxy-config.js';
import { createRpcProxy, type RpcProxy, type RpcProxyHealth } from './rpc-proxy.js';

export const silent = createLogger({ level: 'silent' });

/** Waits until `probe` returns something other than undefined or false (polling every 10 ms). */
export async function eventually<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A manual simulator (slots only on advanceSlot) without generated traffic, at slot 100. */
export async function startSim(seed = 31): Promise<Simulator> {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: String(seed), 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '1', 'tx-rate': '0' },
  }).values;
  const sim = createSimulator(config, { manual: true, logger: silent });
  await sim.start();
  sim.chain.advanceSlot(100);
  return sim;
}

export function addNodes(sim: Simulator, options: readonly RpcNodeOptions[]): Promise<RpcNode[]> {
  return Promise.all(options.map((o) => sim.rpcNodes.add(o)));
}

/** A proxy on port 0 in front of `nodes` (their HTTP and PubSub URLs), started. */
export async function startProxy(nodes: readonly RpcNode[], overrides: Partial<RpcProxyConfig> = {}): Promise<{ proxy: RpcProxy; url: string; ws: string }> {
  const config = defaultRpcProxyConfig({
    endpoints: nodes.map((n) => n.rpc),
    ws_endpoints: nodes.map((n) => n.pubsub),
    port: 0,
    health_check_interval: 60_000,
    request_timeout: 2_000,
    shutdown_timeout: 2_000,
    ...overrides,
  });
  const proxy = createRpcProxy(config, { logger: silent });
  const port = await proxy.start();
  return { proxy, url: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}/rpc/ws` };
}

export interface HttpAnswer {
  status: number;
  text: string;
  json: any;
}

/** POSTs `body` (an object is JSON-encoded, a string or bytes go as they are). */
export async function post(url: string, body: unknown, path = '/rpc'): Promise<HttpAnswer> {
  const payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/** Per local address, one keep-alive agent: calls from 127.0.0.2 are another client to the proxy's rate limit. */
const agents = new Map<string, Agent>();

/** POSTs `body` (JSON-encoded) from `localAddress` (a loopback address other than 127.0.0.1 is another client); the Retry-After header too. */
export async function postFrom(url: string, body: unknown, localAddress: string, headers: Record<string, string> = {}): Promise<HttpAnswer & { retryAfter: string | null }> {
  let agent = agents.get(localAddress);
  if (agent === undefined) {
    agent = new Agent({ localAddress });
    agents.set(localAddress, agent);
  }
  const res = await request(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), dispatcher: agent });
  const text = await res.body.text();
  const retryAfter = res.headers['retry-after'];
  return { status: res.statusCode, text, json: text === '' ? undefined : JSON.parse(text), retryAfter: typeof retryAfter === 'string' ? retryAfter : null };
}

export async function getJson(url: string, path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, json: await res.json() };
}

export async function proxyHealth(url: string): Promise<RpcProxyHealth> {
  return (await getJson(url, '/rpc/health')).json as RpcProxyHealth;
}

/** A signed transfer from trader `from` to trader `to` (base64), distinct for each `memo`. */
export function transferTx(sim: Simulator, memo: string, lamports = 1_000n, from = 0, to = 1): string {
  const traders = sim.chain.genesis.actors.traders;
  const payer = traders[from]!.keypair;
  const tx = buildTransaction({
    payer,
    instructions: [systemTransfer(payer.address, traders[to]!.keypair.address, lamports), memoInstruction(payer.address, memo)],
    recentBlockhash: sim.chain.latestBlockhash().blockhash,
  });
  return Buffer.from(tx).toString('base64');
}

export function call(method: string, params?: unknown, id: unknown = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
}

/** A WebSocket client that queues what it receives. */
export class WsProbe {
  readonly messages: any[] = [];
  private readonly waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  closed: { code: number } | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const m = JSON.parse(String(data));
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else this.messages.push(m);
    });
    socket.on('close', (code) => {
      this.closed = { code };
    });
  }

  static async open(url: string, options?: ClientOptions): Promise<WsProbe> {
    const socket = new WebSocket(url, options);
    const probe = new WsProbe(socket);
    await once(socket, 'open');
    return probe;
  }

  /** The first message (queued or coming) that `match` accepts. */
  next(match: (m: any) => boolean = () => true, what = 'a message', ms = 20_000): Promise<any> {
    const i = this.messages.findIndex(match);
    if (i >= 0) return Promise.resolve(this.messages.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (m: any) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      // A waiter that timed out leaves the list, so that it never takes a later message.
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`timed out waiting for ${what}`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  /** Sends a call and waits for the answer with its id. */
  request(body: Record<string, unknown> | string, id?: unknown): Promise<any> {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const want = id ?? (typeof body === 'string' ? undefined : body.id);
    this.socket.send(text);
    return this.next((m) => 'id' in m && (want === undefined || m.id === want), `the answer to ${text.slice(0, 60)}`);
  }

  /** The next notification of `subscription`. */
  notification(subscription: number, what = 'a notification', ms?: number): Promise<any> {
    return this.next((m) => m.params?.subscription === subscription, what, ms);
  }

  close(): void {
    this.socket.terminate();
  }
}
