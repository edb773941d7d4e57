/**
 * Test support for the services' start on their host: a port someone else holds, whether a port is
 * still bound, and a heartbeat key space the app owns beside the test's own reader. Each takes the
 * test's cleanup list, so what it opened is closed after the test, last opened first.
 */
import { createServer, type Server } from 'node:net';

import { KeySpace, RedisStore } from '../../state/index.js';
import { TEST_REDIS_URL, createRedisKeySpace } from '../../state/kv/testing.js';

export type Cleanup = (() => Promise<unknown>)[];

/** A loopback port held by a listener of the test until cleanup: the app's bind must fail. */
export async function takenPort(cleanup: Cleanup): Promise<number> {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => blocker.close(resolve)));
  return (blocker.address() as { port: number }).port;
}

/** Whether something still listens on the loopback port (a probe cannot bind it). */
export function listening(port: number): Promise<boolean> {
  const probe: Server = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

/** A key space of the app's own (its host closes the store) and the test's reader of the same keys. */
export async function heartbeatKeys(cleanup: Cleanup): Promise<{ app: KeySpace; reader: KeySpace }> {
  const kv = await createRedisKeySpace();
  cleanup.push(() => kv.drop());
  return { app: new KeySpace(await RedisStore.connect({ url: TEST_REDIS_URL }), kv.keys.prefix), reader: kv.keys };
}

/**
 * Watches the close of `keys`' store: `closed()` says whether a close has finished (a close that
 * was only begun, not awaited, says false: the store's QUIT is still on its way to Redis).
 */
export function watchClose(keys: KeySpace): { closed: () => boolean } {
  const store = keys.store;
  const close = store.close.bind(store);
  let done = false;
  store.close = async () => {
    await close();
    done = true;
  };
  return { closed: () => done };
}
