/**
 * The CPU baseline of the `rpc-proxy` bench suite: the cheapest JSON-RPC forwarder on the proxy's
 * own stack, uWebSockets.js in and an undici keep-alive pool out, with none of the proxy's
 * features (no parsing, routing, health, failover, limits, metrics or auth). POST /rpc: the body
 * gathered, sent as it is to `--endpoint`, the answer's status and body written back. Same process
 * shape as the other bench servers: 127.0.0.1, any free port, one JSON ready line on stdout, runs
 * until stdin closes.
 *
 * It uses undici's raw handler API (dispatch: raw header list, body chunks gathered), the cheapest
 * way into undici and the one the proxy uses: `request()` with `arrayBuffer()` (its readable
 * stream, parsed header object and promises) cost about 6 µs more a call (28 against 22 µs,
 * 2026-11-29), which made the baseline look dearer than a forwarder on this stack needs to be.
 */
import { parseArgs } from 'node:util';

import uws from '@trufflesuite/uws-js-unofficial';
import { Pool, type Dispatcher } from 'undici';

import { finishStartup } from './common.js';
import { readPostBody } from './post-body.js';

const { values } = parseArgs({ options: { endpoint: { type: 'string' } } });
if (values.endpoint === undefined) throw new Error('--endpoint is required');
const upstream = new Pool(values.endpoint, { connections: 32, pipelining: 1 });
const CONTENT_TYPE = 'Content-Type';
const JSON_TYPE = 'application/json';
const HEADERS = { 'content-type': JSON_TYPE };

/** One forwarded call's answer, gathered as undici's raw handler API hands it over. */
class Forward implements Dispatcher.DispatchHandler {
  private status = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly res: uws.HttpResponse,
    private readonly aborted: () => boolean,
  ) {}

  onConnect(): void {}

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.aborted()) return;
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.res.cork(() => {
      this.res.writeStatus(String(this.status)).writeHeader(CONTENT_TYPE, JSON_TYPE).end(bytes);
    });
  }

  onError(err: Error): void {
    if (this.aborted()) return;
    this.res.cork(() => {
      this.res.writeStatus('502 Bad Gateway').end(String(err));
    });
  }
}

let listenSocket: uws.us_listen_socket | undefined;
const app = uws.App().post('/rpc', (res) => {
  readPostBody(res, (body, aborted) => {
    upstream.dispatch({ path: '/', method: 'POST', headers: HEADERS, body }, new Forward(res, aborted));
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    process.stderr.write('bench bare-forwarder: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  const port = uws.us_socket_local_port(socket as unknown as uws.us_socket);
  void finishStartup({ port }, async () => {
    if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
    await upstream.close();
  });
});
