/**
 * The quote service and the engine refuse a remote RPC with the external aggregator left at the
 * simulator's loopback default (engine/config/deployment-safety.ts), before opening anything.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';

import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

async function cli(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: new PassThrough(), stderr: err, stdin: Readable.from([]), env };
  const code = await runCli(argv, io);
  return { code, stderr };
}

const REMOTE = 'https://user:s3cret@rpc.example.com/?api-key=k3y';

describe.each(['quote-service', 'engine'])('tidepool %s with a remote RPC', (command) => {
  it('refuses the external fallback at its loopback default, naming EXTERNAL_FALLBACK_URL, never the RPC URL', async () => {
    const { code, stderr } = await cli([command, '--port', '0'], { RPC_ENDPOINTS: REMOTE });
    expect(code).not.toBe(0);
    expect(stderr).toContain('TP_ERR_CONFIG_INVALID');
    expect(stderr).toContain('EXTERNAL_FALLBACK_URL (externalFallback.quoteUrl)');
    expect(stderr).not.toMatch(/s3cret|k3y|rpc\.example/);
  });
});
