/**
 * The CPU baseline of the `rpc-proxy` bench suite: the cheapest JSON-RPC forwarder on the proxy's
 * own stack, uWebSockets.js in and an undici keep-alive pool out, with none of the proxy's
 * features (no parsing, routing, health, failover, limits, metrics or auth). POST /rpc: the body
 * gathered, sent as it is to `--endpoint`, the answer's status and body written back. Same process
 * shape as the other bench servers: 127.0.0.1, any free port, one JSON ready line on stdout, runs
 * until stdin closes.
 */
import { parseArgs } from 'node:util';

import uws from '@trufflesuite/uws-js-unofficial';
import { Pool } from 'undici';

import { finishStartup } from './common.js';
import { readPostBody } from './post-body.js';

const { values } = parseArgs({ options: { endpoint: { type: 'string' } } });
if (values.endpoint === undefined) throw new Error('--endpoint is required');
const upstream = new Pool(values.endpoint, { connections: 32, pipelining: 1 });
const CONTENT_TYPE = 'Content-Type';
const JSON_TYPE = 'application/json';
const HEADERS = { 'content-type': JSON_TYPE };

let listenSocket: uws.us_listen_socket | undefined;
const app = uws.App().post('/rpc', (res) => {
  readPostBody(res, (body, aborted) => {
    upstream
      .request({ path: '/', method: 'POST', headers: HEADERS, body })
      .then(async ({ statusCode, body: answer }) => {
        const bytes = Buffer.from(await answer.arrayBuffer());
        if (aborted()) return;
        res.cork(() => {
          res.writeStatus(String(statusCode)).writeHeader(CONTENT_TYPE, JSON_TYPE).end(bytes);
        });
      })
      .catch((err: unknown) => {
        if (aborted()) return;
        res.cork(() => {
          res.writeStatus('502 Bad Gateway').end(String(err));
        });
      });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    process.stderr.write('bench bare-forwarder: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  const port = uws.us_socket_local_port(socket as unknown as uws.us_socket);
  finishStartup({ port }, async () => {
    if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
    await upstream.close();
  });
});
