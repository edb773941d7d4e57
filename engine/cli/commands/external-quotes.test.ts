import { PassThrough, Readable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { isTpError } from '../../errors.js';
import { externalSchema, loadExternalConfig } from '../../external/external-config.js';
import { eventually } from '../../external/testing/fake-provider.js';
import { parseCommandLine } from '../../config/command-line.js';
import type { CliIo } from '../command.js';
import { externalQuotesCommand } from './external-quotes.js';

function load(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const { flags } = parseCommandLine(argv, externalSchema);
  return loadExternalConfig({ flags, env }).values;
}

describe('tidepool external-quotes', () => {
  it('has the defaults of spec 01 and engine/external/README.md', () => {
    expect(load([])).toMatchObject({
      grpcPort: 50053, host: '127.0.0.1', quoteUrl: 'http://127.0.0.1:8890/quote', apiKey: '', rateLimitRps: 10, pollInterval: 1000,
      requestTimeout: 2000, providerName: '', uptimeWindow: 300_000, 'metrics.port': 9093, 'log.level': 'info',
    });
  });

  it('reads Go-style flags over environment variables', () => {
    const v = load(
      ['-grpc-port', '6000', '-quote-url', 'https://lite-api.jup.ag/swap/v1/quote', '-rate-limit-rps=2.5', '-poll-interval', '250ms', '-request-timeout', '3s', '-uptime-window', '1m', '-api-key', 'secret-key', '-provider-name', 'jupiter'],
      { EXTERNAL_QUOTES_GRPC_PORT: '7000', EXTERNAL_QUOTE_URL: 'http://x/quote', EXTERNAL_QUOTES_METRICS_PORT: '9999' },
    );
    expect(v).toMatchObject({ grpcPort: 6000, quoteUrl: 'https://lite-api.jup.ag/swap/v1/quote', rateLimitRps: 2.5, pollInterval: 250, requestTimeout: 3000, uptimeWindow: 60_000, apiKey: 'secret-key', providerName: 'jupiter', 'metrics.port': 9999 });
  });

  it('names every bad setting, and never prints the API key', () => {
    let caught: unknown;
    try {
      load(['-rate-limit-rps', '0', '-quote-url', 'ftp://x', '-poll-interval', 'soon', '-metrics-port', '50053']);
    } catch (err) {
      caught = err;
    }
    expect(isTpError(caught, 'TP_ERR_CONFIG_INVALID')).toBe(true);
    const message = (caught as Error).message;
    for (const key of ['rateLimitRps', 'quoteUrl', 'pollInterval']) expect(message).toContain(key);
    expect(() => load(['-metrics-port', '50053'])).toThrow(/metrics.port: 50053 is also the gRPC port/);
  });

  it('--help names every setting, its flag and its variable', () => {
    for (const def of Object.values(externalSchema)) {
      expect(externalQuotesCommand.help).toContain(`--${def.flag}`);
      if (def.env !== undefined) expect(externalQuotesCommand.help).toContain(def.env);
    }
    expect(externalQuotesCommand.name).toBe('external-quotes');
  });

  it('prints its endpoints, serves /health, and exits 0 after SIGTERM', async () => {
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (c) => (text += String(c)));
    const io: CliIo = { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env: { EXTERNAL_QUOTES_GRPC_PORT: '0', LOG_LEVEL: 'silent' } };
    const running = externalQuotesCommand.run(['-metrics-port', '0', '-api-key', 'do-not-print'], io);
    const metrics = await eventually(() => /(http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(text)?.[1], 'the endpoints');
    expect(text).toMatch(/StreamBatchQuotes\s+127\.0\.0\.1:\d+/);
    expect(text).toContain('simulator at http://127.0.0.1:8890/quote');
    expect(text).not.toContain('do-not-print');
    const health = (await (await fetch(`${metrics}/health`)).json()) as { status: string };
    expect(health.status).toBe('ok');
    process.emit('SIGTERM', 'SIGTERM');
    expect(await running).toBe(0);
  });
});
