import { describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import type { SimEndpoints } from '../sim/simulator.js';
import { aggregatorConfigUnderSim, externalConfigUnderSim, START_AGGREGATOR_HTTP_PORT, startSchema } from './start-config.js';

const SIM: SimEndpoints = { rpc: 'http://127.0.0.1:18899', ws: 'ws://127.0.0.1:18900', stream: '127.0.0.1:19999', geyser: '127.0.0.1:20000', http: 'http://127.0.0.1:18890' };
const UPSTREAMS = { local: '127.0.0.1:15052', external: '127.0.0.1:15053' };

describe('tidepool start settings', () => {
  it('gives no two settings the same environment variable or flag', () => {
    const owners = (pick: (d: { env?: string; flag?: string }) => string | undefined): [string, string[]][] => {
      const by = new Map<string, string[]>();
      for (const [key, def] of Object.entries(startSchema)) {
        const name = pick(def);
        if (name !== undefined) by.set(name, [...(by.get(name) ?? []), key]);
      }
      return [...by].filter(([, keys]) => keys.length > 1);
    };
    expect(owners((d) => d.env)).toEqual([]);
    expect(owners((d) => d.flag)).toEqual([]);
  });

  it('wires the aggregator to the engine, the external service and the simulator when left at their defaults', () => {
    const loaded = loadConfig(startSchema, { env: {} });
    const aggregator = aggregatorConfigUnderSim(loaded, SIM, UPSTREAMS);
    expect(aggregator.localQuoteAddr).toBe(UPSTREAMS.local);
    expect(aggregator.externalQuoteAddr).toBe(UPSTREAMS.external);
    expect(aggregator.oracleUrl).toBe('http://127.0.0.1:18890/price/v3');
    expect(aggregator.httpPort).toBe(START_AGGREGATOR_HTTP_PORT);
    expect(aggregator.grpcPort).toBe(50051);
    expect(aggregator.busEnabled).toBe(false);
    expect(aggregator.localTimeout).toBe(10);
    expect(aggregator.externalTimeout).toBe(100);
    const external = externalConfigUnderSim(loaded, SIM);
    expect(external.quoteUrl).toBe('http://127.0.0.1:18890/quote');
    expect(external.grpcPort).toBe(50053);
  });

  it('shares TLS_CERT_FILE / TLS_KEY_FILE with the aggregator and the external service, and has the aggregator reach its upstreams over TLS trusting that certificate', () => {
    const plain = aggregatorConfigUnderSim(loadConfig(startSchema, { env: {} }), SIM, UPSTREAMS);
    expect(plain['tls.upstream']).toBe(false);
    const loaded = loadConfig(startSchema, { env: { TLS_CERT_FILE: '/etc/tp/cert.pem', TLS_KEY_FILE: '/etc/tp/key.pem' } });
    const aggregator = aggregatorConfigUnderSim(loaded, SIM, UPSTREAMS);
    expect(aggregator).toMatchObject({ 'tls.certFile': '/etc/tp/cert.pem', 'tls.keyFile': '/etc/tp/key.pem', 'tls.upstream': true, 'tls.upstreamCaFile': '/etc/tp/cert.pem' });
    expect(externalConfigUnderSim(loaded, SIM)).toMatchObject({ 'tls.certFile': '/etc/tp/cert.pem', 'tls.keyFile': '/etc/tp/key.pem' });
    const told = aggregatorConfigUnderSim(loadConfig(startSchema, { env: { TLS_CERT_FILE: '/c.pem', TLS_KEY_FILE: '/k.pem', UPSTREAM_TLS: 'false' } }), SIM, UPSTREAMS);
    expect(told).toMatchObject({ 'tls.upstream': false, 'tls.upstreamCaFile': '' });
  });

  it('keeps what the user set: prefixed flags, the commands\' own environment variables', () => {
    const loaded = loadConfig(startSchema, {
      env: { BUS_ENABLED: 'true', EXTERNAL_QUOTE_URL: 'https://quotes.example/swap/v1/quote', LOCAL_TIMEOUT: '20ms' },
      flags: { 'aggregator-http-port': '18082', 'aggregator-external-quote-addr': '10.0.0.5:50053', 'external-rate-limit-rps': '5' },
    });
    const aggregator = aggregatorConfigUnderSim(loaded, SIM, UPSTREAMS);
    expect(aggregator.httpPort).toBe(18082);
    expect(aggregator.externalQuoteAddr).toBe('10.0.0.5:50053');
    expect(aggregator.localQuoteAddr).toBe(UPSTREAMS.local);
    expect(aggregator.busEnabled).toBe(true);
    expect(aggregator.localTimeout).toBe(20);
    const external = externalConfigUnderSim(loaded, SIM);
    expect(external.quoteUrl).toBe('https://quotes.example/swap/v1/quote');
    expect(external.rateLimitRps).toBe(5);
  });
});
