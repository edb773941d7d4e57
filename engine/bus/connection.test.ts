import { afterEach, describe, expect, it } from 'vitest';

import { BusConnection, BusStatus, disabledBusStatus } from './connection.js';
import { LOCAL_NATS_URL, deadPort, waitFor } from './testing/local-nats.js';

describe('BusConnection', () => {
  const open: BusConnection[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  it('connects to the local server, runs connect listeners, and drains on close', async () => {
    const bus = BusConnection.open({ servers: [LOCAL_NATS_URL], name: 'tidepool-test' });
    open.push(bus);
    const seen: string[] = [];
    bus.onConnect(() => {
      seen.push('connect');
    });
    await bus.ready();
    expect(bus.status).toBe(BusStatus.Connected);
    expect(bus.jetstream()).toBeDefined();
    await waitFor(() => seen.length === 1, 5000, 'connect listener');
    const late: string[] = [];
    bus.onConnect(() => {
      late.push('connect');
    });
    await waitFor(() => late.length === 1, 5000, 'late connect listener');
    await bus.close();
    expect(bus.status).toBe(BusStatus.Disconnected);
    expect(bus.connection?.isClosed()).toBe(true);
    await bus.close();
  });

  it('keeps retrying while nothing listens, and closes cleanly meanwhile', async () => {
    const port = await deadPort();
    const bus = BusConnection.open({ servers: [`nats://127.0.0.1:${port}`], name: 'tidepool-test', connectTimeoutMs: 200 });
    open.push(bus);
    await new Promise((r) => setTimeout(r, 300));
    expect(bus.status).toBe(BusStatus.Connecting);
    expect(bus.jetstream()).toBeUndefined();
    await bus.close();
    expect(bus.status).toBe(BusStatus.Disconnected);
  });

  it('reports disabled when the bus is turned off', () => {
    expect(disabledBusStatus()).toBe('disabled');
  });
});
