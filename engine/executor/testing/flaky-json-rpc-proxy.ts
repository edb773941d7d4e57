import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { request } from 'undici';

/**
 * Test support: an HTTP proxy in front of a JSON-RPC server that loses requests on demand, as a
 * network does. Per method, a queue of what happens to its next calls:
 * - `dropBefore`: the connection is cut before the call reaches the server (nothing happened);
 * - `dropAfter`: the call reaches the server and runs, then the connection is cut before the
 *   answer (the client cannot know it ran);
 * - `pass` (also once the queue is empty): forwarded, answer returned.
 * It counts the calls it received per method. `beforeNext` runs something once before the next
 * call of a method is forwarded (move a pool between a transaction's build and its landing).
 */

export type ProxyAction = 'pass' | 'dropBefore' | 'dropAfter';

export class FlakyJsonRpcProxy {
  private readonly server: Server;
  private readonly plans = new Map<string, ProxyAction[]>();
  private readonly counts = new Map<string, number>();
  private readonly hooks = new Map<string, () => Promise<void> | void>();
  private base = '';

  constructor(private readonly target: string) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  /** `http://127.0.0.1:port` plus the path of the request (the target's path is kept as requested). */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.base;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** What happens to the next calls of `method`, in order. */
  plan(method: string, ...actions: ProxyAction[]): void {
    this.plans.set(method, [...(this.plans.get(method) ?? []), ...actions]);
  }

  /** Runs `hook` (awaited) before the next call of `method` is forwarded, once. */
  beforeNext(method: string, hook: () => Promise<void> | void): void {
    this.hooks.set(method, hook);
  }

  received(method: string): number {
    return this.counts.get(method) ?? 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let method = '';
    try {
      method = String((JSON.parse(body.toString('utf8')) as { method?: unknown }).method ?? '');
    } catch {
      // not a single call: forwarded as is
    }
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    const action = this.plans.get(method)?.shift() ?? 'pass';
    if (action === 'dropBefore') {
      req.socket.destroy();
      return;
    }
    const hook = this.hooks.get(method);
    this.hooks.delete(method);
    try {
      await hook?.();
      const upstream = await request(new URL(req.url ?? '/', this.target), { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, body });
      const text = await upstream.body.text();
      if (action === 'dropAfter') {
        req.socket.destroy();
        return;
      }
      res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
      res.end(text);
    } catch {
      req.socket.destroy();
    }
  }
}
