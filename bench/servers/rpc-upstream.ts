/**
 * Upstream of the `rpc-proxy` bench suite: a bare uWebSockets.js JSON-RPC endpoint light enough
 * that it is not what limits either run. It reads each POST body and answers a fixed reply
 * (`--body`, a file: the suite passes a real getAccountInfo answer of the simulator), `getHealth`
 * with "ok" and `getSlot` with a slot, so that the proxy's health checks keep it in rotation.
 * Same process shape as the other bench servers: 127.0.0.1, any free port, one JSON ready line on
 * stdout, runs until stdin closes.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import uws from '@trufflesuite/uws-js-unofficial';

import { finishStartup } from './common.js';
import { readPostBody } from './post-body.js';

const { values } = parseArgs({ options: { body: { type: 'string' } } });
if (values.body === undefined) throw new Error('--body is required');
const reply = new Uint8Array(readFileSync(values.body));
const HEALTH = new TextEncoder().encode('{"jsonrpc":"2.0","result":"ok","id":1}');
const SLOT = new TextEncoder().encode('{"jsonrpc":"2.0","result":250000000,"id":1}');
const CONTENT_TYPE = new TextEncoder().encode('Content-Type');
const JSON_TYPE = new TextEncoder().encode('application/json');
const OK = new TextEncoder().encode('200 OK');
const GET_HEALTH = Buffer.from('"getHealth"');
const GET_SLOT = Buffer.from('"getSlot"');

function answerFor(body: Buffer): Uint8Array {
  if (body.length < 200 && body.includes(GET_HEALTH)) return HEALTH;
  if (body.length < 200 && body.includes(GET_SLOT)) return SLOT;
  return reply;
}

let listenSocket: uws.us_listen_socket | undefined;
const app = uws.App().post('/*', (res) => {
  readPostBody(res, (body, aborted) => {
    if (aborted()) return;
    res.cork(() => {
      res.writeStatus(OK).writeHeader(CONTENT_TYPE, JSON_TYPE).end(answerFor(body));
    });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    process.stderr.write('bench rpc-upstream: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  const port = uws.us_socket_local_port(socket as unknown as uws.us_socket);
  void finishStartup({ port, bodyBytes: reply.length }, () => {
    if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
    return Promise.resolve();
  });
});
