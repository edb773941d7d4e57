import type { Server } from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { closeServer, listenOn } from './http-listen.js';
import { createLimitedServer, type HttpServerLimits } from './http-limits.js';
import { idleKeepAliveUntilClosed, refusedConnections, slowlorisUntilClosed } from './testing/socket-probes.js';

const SMALL: HttpServerLimits = { headersTimeoutMs: 200, requestTimeoutMs: 400, keepAliveTimeoutMs: 150, maxConnections: 4 };

let server: Server | undefined;
afterEach(async () => {
  if (server !== undefined) await closeServer(server);
  server = undefined;
});

async function serve(limits: HttpServerLimits): Promise<number> {
  server = createLimitedServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
  }, limits);
  return listenOn(server, '127.0.0.1', 0, 'test server');
}

describe('createLimitedServer', () => {
  it('closes a slowloris socket (a request head that never ends) at the header timeout', async () => {
    const port = await serve(SMALL);
    const closed = await slowlorisUntilClosed(port, { dripMs: 20, timeoutMs: 5_000 });
    // Node answers 408 when it gives up on the head.
    expect(closed.received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes an idle keep-alive socket at the idle timeout', async () => {
    const port = await serve(SMALL);
    const closed = await idleKeepAliveUntilClosed(port, '/', { timeoutMs: 5_000 });
    expect(closed.answered).toBe(true);
    expect(closed.received).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses connections past maxConnections', async () => {
    const port = await serve(SMALL);
    let dropped = 0;
    server!.on('drop', () => dropped++);
    const { refused, sockets } = await refusedConnections(port, SMALL.maxConnections + 3);
    for (const s of sockets) s.destroy();
    expect(refused).toBe(3);
    expect(dropped).toBe(3);
  });

  it('sets the limits on the server', () => {
    server = createLimitedServer(() => undefined, SMALL);
    expect(server.headersTimeout).toBe(200);
    expect(server.requestTimeout).toBe(400);
    expect(server.keepAliveTimeout).toBe(150);
    expect(server.maxConnections).toBe(4);
  });
});
