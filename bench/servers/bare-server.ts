/**
 * Baseline server process of the `quote` bench suite: a bare uWebSockets.js app answering every GET
 * (and every POST, once its body is read) with a fixed JSON body (`--body`, a file: the suite passes a real /quote response, so both servers
 * send the same bytes), 200 and Content-Type application/json, written inside `cork` as the quote
 * service writes. Same process shape as bench/servers/quote-server.ts: 127.0.0.1, any free port, one
 * JSON ready line on stdout, runs until stdin closes.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import uws from '@trufflesuite/uws-js-unofficial';

import { finishStartup } from './common.js';

/** `--idle-gc`: idle, then collect, before the ready line, as the quote suite's quote server does (bench/servers/common.ts). */
const { values } = parseArgs({ options: { body: { type: 'string' }, 'idle-gc': { type: 'boolean', default: false } } });
if (values.body === undefined) throw new Error('--body is required');
const body = readFileSync(values.body, 'utf8');

let listenSocket: uws.us_listen_socket | undefined;
const answer = (res: uws.HttpResponse): void => {
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
  });
};
// A POST (the batch baseline) is answered once its whole body has arrived, as the quote service reads it.
const app = uws
  .App()
  .get('/*', answer)
  .post('/*', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((_chunk, isLast) => {
      if (isLast && !aborted) answer(res);
    });
  });
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    process.stderr.write('bench bare-server: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  const port = uws.us_socket_local_port(socket as unknown as uws.us_socket);
  void finishStartup(
    { port, bodyBytes: Buffer.byteLength(body) },
    () => {
      if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
      return Promise.resolve();
    },
    { idleGc: values['idle-gc'] === true },
  );
});
