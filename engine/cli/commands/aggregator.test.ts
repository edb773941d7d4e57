import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { FakeUpstream, SOL, USDC, makeQuote } from '../../aggregator/testing.js';
import type { CliIo } from '../command.js';
import { aggregatorCommand, startAggregatorService, type RunningAggregator } from './aggregator.js';

function io(env: NodeJS.ProcessEnv = {}): CliIo & { err: () => string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (c) => (text += String(c)));
  return { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env, err: () => text };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

describe('tidepool aggregator', () => {
  it('starts from Go-style flags and the environment, prints its endpoints, serves /health and closes', async () => {
    const local = new FakeUpstream();
    const external = new FakeUpstream();
    local.respond = (p) => makeQuote(p, 10n);
    external.respond = (p) => makeQuote(p, 11n);
    await local.start();
    await external.start();
    cleanups.push(() => local.close(), () => external.close());
    const cli = io({ EXTERNAL_QUOTE_SERVICE_ADDR: external.address, LOG_LEVEL: 'silent' });
    const running: RunningAggregator = await startAggregatorService(
      ['-grpc-port', '0', '-http-port', '0', '-local-quote-addr', local.address, '-bus-enabled=false', '-log-level', 'silent', '-enable-confidence-scoring', 'false'],
      cli,
    );
    cleanups.push(() => running.close());
    expect(cli.err()).toMatch(/aggregated quotes grpc:\/\/127\.0\.0\.1:[1-9]\d*/);
    expect(cli.err()).toContain(`external quotes   ${external.address}`);
    expect(cli.err()).toContain('route events      not published (bus disabled');
    const health = await fetch(`http://127.0.0.1:${running.ports.httpPort}/health`);
    const body = (await health.json()) as { upstreams: { local: { address: string }; external: { address: string } }; confidenceScoringEnabled: boolean; publisher: { enabled: boolean } };
    expect(body.upstreams.local.address).toBe(local.address);
    expect(body.upstreams.external.address).toBe(external.address);
    expect(body.confidenceScoringEnabled).toBe(false);
    expect(body.publisher.enabled).toBe(false);
    await running.close();
    await expect(fetch(`http://127.0.0.1:${running.ports.httpPort}/health`)).rejects.toThrow();
  });

  it('starts with the bus publisher even when the bus is not up yet', async () => {
    const cli = io({ BUS_URL: 'nats://127.0.0.1:1' });
    const running = await startAggregatorService(['-grpc-port', '0', '-http-port', '0', '-log-level', 'silent'], cli);
    cleanups.push(() => running.close());
    expect(cli.err()).toContain('route events      market.swap_route.optimal on nats://127.0.0.1:1');
    const stats = (await (await fetch(`http://127.0.0.1:${running.ports.httpPort}/stats`)).json()) as { publisher: { enabled: boolean } };
    expect(stats.publisher.enabled).toBe(true);
  });

  it('fails at start naming an invalid setting', async () => {
    const err = await aggregatorCommand.run(['-local-timeout', 'soon'], io()).catch((e: unknown) => e);
    expect(isTpError(err, ErrorCode.ConfigInvalid)).toBe(true);
    expect((err as Error).message).toContain('localTimeout from flag --local-timeout = "soon"');
    const unknown = await aggregatorCommand.run(['-no-such-flag'], io()).catch((e: unknown) => e);
    expect(isTpError(unknown, ErrorCode.Usage)).toBe(true);
  });

  it('documents every spec 01 flag and variable in its help', () => {
    for (const name of ['--http-port', '--grpc-port', '--local-quote-addr', '--external-quote-addr', '--bus-url', '--local-timeout', '--external-timeout', '--enable-confidence-scoring', 'BUS_URL', 'LOCAL_QUOTE_SERVICE_ADDR', 'EXTERNAL_QUOTE_SERVICE_ADDR', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
      expect(aggregatorCommand.help).toContain(name);
    }
    expect(SOL).not.toBe(USDC);
  });
});
