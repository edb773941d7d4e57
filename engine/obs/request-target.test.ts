import { connect } from 'node:net';

import { describe, expect, it } from 'vitest';

import { AggregatorHttpServer } from '../aggregator/http-server.js';
import { ServingStatusName } from '../aggregator/wire-types.js';
import { ExternalHttpServer } from '../external/external-http-server.js';
import { MetricsHttpServer } from '../common/index.js';
import { requestTarget } from './http-listen.js';

/** Sends `line` as the request line over a raw socket; resolves with the status line of the answer. */
function rawRequest(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${line}\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let data = '';
    socket.on('data', (c) => (data += String(c)));
    socket.on('end', () => resolve(data.split('\r\n')[0]!));
    socket.on('error', reject);
  });
}

describe('requestTarget', () => {
  it('splits path and query without ever throwing', () => {
    expect(requestTarget({ url: '/debug/pprof/heap?format=devtools' } as never)).toMatchObject({ path: '/debug/pprof/heap' });
    expect(requestTarget({ url: '/debug/pprof/heap?format=devtools' } as never).query.get('format')).toBe('devtools');
    expect(requestTarget({ url: '//[' } as never).path).toBe('//[');
    expect(requestTarget({ url: undefined } as never).path).toBe('/');
  });
});

describe('HTTP side ports under a request target new URL() refuses', () => {
  const servers = {
    'aggregator HTTP': () =>
      new AggregatorHttpServer(
        { health: () => ({ status: ServingStatusName.Serving, body: {} }), stats: () => ({}), metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }) },
        '127.0.0.1',
      ),
    'external quotes metrics': () => new ExternalHttpServer({ metrics: () => Promise.resolve(''), metricsContentType: 'text/plain', health: () => ({}) as never }),
    'quote service metrics': () => new MetricsHttpServer({ metrics: () => Promise.resolve({ status: 200, headers: new Map(), body: '' }) as never }),
  };
  it.each(Object.keys(servers))('%s answers 404 to GET //[ and keeps serving', async (name) => {
    const server = servers[name as keyof typeof servers]();
    const port = await server.start(0);
    try {
      expect(await rawRequest(port, 'GET //[ HTTP/1.1')).toMatch(/^HTTP\/1\.1 404/);
      expect(await rawRequest(port, 'GET /metrics HTTP/1.1')).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      await server.close();
    }
  });
});
