import { afterAll, describe, expect, it } from 'vitest';

import { EndpointSet } from './endpoint-set.js';
import { EndpointState, UpstreamEndpoint, endpointNames } from './upstream-endpoint.js';

const endpoints = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'].map(
  (url, index) => new UpstreamEndpoint({ index, name: `e${index}`, url, wsUrl: url.replace('http', 'ws'), maxConnections: 1 }),
);

afterAll(async () => {
  await Promise.all(endpoints.map((e) => e.close()));
});

const names = (set: EndpointSet, n: number, tried = 0): string[] => Array.from({ length: n }, () => set.pick(tried).name);

describe('EndpointSet', () => {
  it('rotates over the endpoints in rotation, skipping those tried by the call', () => {
    const set = new EndpointSet(endpoints, { failureThreshold: 2 });
    expect(names(set, 4)).toEqual(['e0', 'e1', 'e2', 'e0']);
    set.setState(endpoints[1]!, EndpointState.Lagging, 'behind');
    expect(names(set, 3)).toEqual(['e2', 'e0', 'e2']);
    expect(set.pick(endpoints[0]!.bit).name).toBe('e2');
    // Every endpoint in rotation tried: round again among them, never to the lagging one.
    expect(set.pick(endpoints[0]!.bit | endpoints[2]!.bit).name).not.toBe('e1');
    set.setState(endpoints[1]!, EndpointState.Up, null);
  });

  it('tries every endpoint when none is in rotation', () => {
    const set = new EndpointSet(endpoints, { failureThreshold: 2 });
    for (const e of endpoints) set.setState(e, EndpointState.Down, 'x');
    const first = set.pick(0);
    const second = set.pick(first.bit);
    const third = set.pick(first.bit | second.bit);
    expect(new Set([first.name, second.name, third.name]).size).toBe(3);
    for (const e of endpoints) set.setState(e, EndpointState.Up, null);
  });

  it('takes an endpoint out after failure_threshold failures in a row, and says so', () => {
    const set = new EndpointSet(endpoints, { failureThreshold: 2 });
    const changes: string[] = [];
    set.onStateChange((e, from) => changes.push(`${e.name}:${from}->${e.state}`));
    const e = endpoints[2]!;
    set.recordFailure(e, 'reset');
    set.recordSuccess(e);
    set.recordFailure(e, 'reset');
    expect(e.state).toBe(EndpointState.Up);
    set.recordFailure(e, 'timeout');
    expect(e.state).toBe(EndpointState.Down);
    expect(e.reason).toBe('2 requests in a row failed, the last: timeout');
    expect(changes).toEqual(['e2:up->down']);
  });

  it('names endpoints by host and port, never by URL', () => {
    expect(endpointNames(['https://a.example/KEY1', 'https://a.example/KEY2', 'http://b:8899/?api-key=x'])).toEqual(['a.example/1', 'a.example/2', 'b:8899']);
  });
});
