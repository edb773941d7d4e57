/**
 * Raw-socket probes of an HTTP port's limits, for tests: a slowloris client (a request head that
 * never ends) and an idle keep-alive client (one answered request, then silence). Each resolves when
 * the server closes the socket, so a test waits for the close event instead of sleeping.
 */
import { connect, type Socket } from 'node:net';

export interface ClosedSocket {
  /** Bytes the server sent before closing (e.g. a 408 answer). */
  received: string;
  /** ms from the probe's last write to the close. */
  closedAfterMs: number;
}

function open(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function untilClosed(socket: Socket, since: () => number, timeoutMs: number): Promise<ClosedSocket> {
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`socket still open after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('close', () => {
      clearTimeout(guard);
      resolve({ received, closedAfterMs: Date.now() - since() });
    });
  });
}

/**
 * Sends a request line and one header, then a header line every `dripMs` forever (slowloris).
 * Resolves when the server closes the socket; rejects if it is still open after `timeoutMs`.
 */
export async function slowlorisUntilClosed(port: number, options: { dripMs?: number; timeoutMs?: number; host?: string } = {}): Promise<ClosedSocket> {
  const socket = await open(port, options.host);
  const started = Date.now();
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  let n = 0;
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Drip-${n++}: a\r\n`);
  }, options.dripMs ?? 20);
  try {
    return await untilClosed(socket, () => started, options.timeoutMs ?? 10_000);
  } finally {
    clearInterval(drip);
  }
}

/**
 * Sends one complete keep-alive request to `path`, waits for the answer, then stays silent.
 * Resolves when the server closes the idle socket; rejects if it is still open after `timeoutMs`.
 */
export async function idleKeepAliveUntilClosed(port: number, path = '/metrics', options: { timeoutMs?: number; host?: string } = {}): Promise<ClosedSocket & { answered: boolean }> {
  const socket = await open(port, options.host);
  let answeredAt = 0;
  const closed = untilClosed(socket, () => answeredAt, options.timeoutMs ?? 10_000);
  socket.on('data', () => {
    if (answeredAt === 0) answeredAt = Date.now();
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
  const result = await closed;
  return { ...result, answered: answeredAt !== 0 };
}

/** Opens `count` sockets and resolves with how many the server closed without a byte sent. */
export async function refusedConnections(port: number, count: number, host = '127.0.0.1'): Promise<{ refused: number; sockets: Socket[] }> {
  const sockets = await Promise.all(Array.from({ length: count }, () => open(port, host)));
  // A refused socket is closed by the server right after accept; an accepted one stays open.
  const refusedFlags = await Promise.all(
    sockets.map(
      (s) =>
        new Promise<boolean>((resolve) => {
          if (s.destroyed) return resolve(true);
          const done = (v: boolean): void => {
            s.off('close', onClose);
            s.off('data', onData);
            resolve(v);
          };
          const onClose = (): void => done(true);
          const onData = (): void => done(false);
          s.once('close', onClose);
          s.once('data', onData);
          // Ask for an answer: an accepted socket answers, a refused one closes.
          s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
        }),
    ),
  );
  return { refused: refusedFlags.filter(Boolean).length, sockets };
}
