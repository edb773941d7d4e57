import uws from '@trufflesuite/uws-js-unofficial';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { nativeStatus } from '../chain/native-addon.js';
import { ClientAddressKeys, remoteAddressesReadNatively, type RemoteAddressSource } from './client-address-key.js';

/** What one request saw: the key, the key the uWS.js way, and how often getRemoteAddress ran. */
interface Seen {
  key: string;
  uwsKey: string;
  calls: number;
}

const keys = new ClientAddressKeys();
const sockets: uws.us_listen_socket[] = [];

function uwsKeyOf(res: RemoteAddressSource): string {
  const raw = res.getRemoteAddress();
  if (raw.byteLength === 4) return `addr:${new Uint8Array(raw).join('.')}`;
  return `addr:${Buffer.from(res.getRemoteAddressAsText()).toString()}`;
}

/** A uWS app on `host` answering each request with what `keys` made of it. */
function listen(host: string): Promise<number> {
  const app = uws.App().ws('/ws', {
    open: (ws) => {
      const source = ws as unknown as RemoteAddressSource;
      ws.send(JSON.stringify({ key: keys.of(source), uwsKey: uwsKeyOf(source), calls: 0 }));
    },
  });
  app.get('/*', (res) => {
    // Count the uWS.js reads the key costs (an own property shadows the native method).
    let calls = 0;
    const original = res.getRemoteAddress.bind(res);
    (res as unknown as { getRemoteAddress: () => ArrayBuffer }).getRemoteAddress = () => {
      calls++;
      return original();
    };
    const key = keys.of(res);
    const seen: Seen = { key, uwsKey: uwsKeyOf({ getRemoteAddress: original, getRemoteAddressAsText: () => res.getRemoteAddressAsText() }), calls };
    res.end(JSON.stringify(seen));
  });
  return new Promise((resolve, reject) => {
    app.listen(host, 0, (socket) => {
      if (socket === false) return reject(new Error(`cannot listen on ${host}`));
      sockets.push(socket);
      resolve(uws.us_socket_local_port(socket as unknown as uws.us_socket));
    });
  });
}

let port4 = 0;
let port6 = 0;

beforeAll(async () => {
  port4 = await listen('127.0.0.1');
  port6 = await listen('::1');
});

afterAll(() => {
  for (const s of sockets) uws.us_listen_socket_close(s);
});

async function ask(url: string): Promise<Seen> {
  return (await (await fetch(url)).json()) as Seen;
}

describe('ClientAddressKeys', () => {
  it('keys an IPv4 client by its address, the same key as uWS.js gives, and reads it natively when the add-on is built', async () => {
    const first = await ask(`http://127.0.0.1:${port4}/a`);
    expect(first.key).toBe('addr:127.0.0.1');
    expect(first.key).toBe(first.uwsKey);
    const second = await ask(`http://127.0.0.1:${port4}/b`);
    expect(second.key).toBe('addr:127.0.0.1');
    if (nativeStatus.loaded) {
      // The add-on's first answer was checked against uWS.js; after that no ArrayBuffer is made.
      expect(remoteAddressesReadNatively()).toBe(true);
      expect(second.calls).toBe(0);
    } else {
      expect(remoteAddressesReadNatively()).toBe(false);
      expect(second.calls).toBe(1);
    }
  });

  it('keys a WebSocket client as uWS.js does, its kind checked on its own', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${port4}/ws`);
    const seen = await new Promise<Seen>((resolve, reject) => {
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as Seen));
      socket.once('error', reject);
    });
    socket.close();
    expect(seen.key).toBe('addr:127.0.0.1');
    expect(seen.key).toBe(seen.uwsKey);
    // The add-on agreed on this kind too (a disagreement would have turned it off).
    expect(remoteAddressesReadNatively()).toBe(nativeStatus.loaded);
  });

  it('keys an IPv6 client by the text of its address', async () => {
    const seen = await ask(`http://[::1]:${port6}/c`);
    expect(seen.key).toBe(seen.uwsKey);
    expect(seen.key).toMatch(/^addr:[0-9a-f:]+$/);
    expect(seen.key).not.toBe('addr:127.0.0.1');
  });

  it('reads any other source the uWS.js way', () => {
    const source = (bytes: number[], text: string): RemoteAddressSource => ({
      getRemoteAddress: () => Uint8Array.from(bytes).buffer,
      getRemoteAddressAsText: () => new TextEncoder().encode(text).buffer,
    });
    expect(keys.of(source([10, 0, 0, 7], '10.0.0.7'))).toBe('addr:10.0.0.7');
    expect(keys.of(source([192, 168, 1, 200], '192.168.1.200'))).toBe('addr:192.168.1.200');
    expect(keys.of(source(new Array<number>(16).fill(0).map((_, i) => (i === 15 ? 1 : 0)), '::1'))).toBe('addr:::1');
  });
});
