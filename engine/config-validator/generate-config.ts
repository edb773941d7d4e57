import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

import { base58, generateKeypair, keypairSeed } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { secretKeyBytes } from '../wallets/index.js';

/**
 * `validate-config FILE --generate`: fills in what FILE lacks (all of it for a new file) and
 * writes it back with mode 0600 (it holds wallet secrets). Values already there are kept as they
 * are, valid or not. Fresh wallets are new random keypairs; the endpoints default to this
 * machine's services and the local simulator.
 */

export const GENERATED_DEFAULTS = {
  rpcEndpoints: ['http://127.0.0.1:8899', 'http://127.0.0.1:8899', 'http://127.0.0.1:8899'],
  rpcTimeout: 5000,
  natsUrl: 'nats://127.0.0.1:4222',
  redisUrl: 'redis://127.0.0.1:6379',
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/tidepool',
  minProfitThreshold: 100_000,
  maxConcurrentTrades: 10,
  blockEngineUrl: 'http://127.0.0.1:8890',
  tipBase: 5000,
} as const;

export const GENERATED_WORKERS = 5;

/** A fresh keypair's 64-byte secret in base58, 88 characters (re-drawn in the rare shorter case). */
export function freshWalletSecret(): string {
  for (;;) {
    const kp = generateKeypair();
    const seed = keypairSeed(kp);
    const secret = secretKeyBytes(kp, seed);
    const text = base58.encode(secret);
    seed.fill(0);
    secret.fill(0);
    if (text.length === 88) return text;
  }
}

/** The keys it added, in order. TP_ERR_CONFIG_FILE when FILE exists but is not a JSON object. */
export function generateConfig(path: string): string[] {
  let config: Record<string, unknown> = {};
  if (existsSync(path)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new TpError(ErrorCode.ConfigFile, `${path} is not JSON; fix it or remove it before --generate: ${(err as Error).message}`, { context: { path } });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TpError(ErrorCode.ConfigFile, `${path} must hold a JSON object`, { context: { path } });
    config = parsed as Record<string, unknown>;
  }
  const added: string[] = [];
  const fill = (key: string, make: () => unknown): void => {
    if (config[key] === undefined) {
      config[key] = make();
      added.push(key);
    }
  };
  for (const [key, value] of Object.entries(GENERATED_DEFAULTS)) fill(key, () => structuredClone(value));
  fill('treasureWallet', freshWalletSecret);
  fill('workerWallets', () => Array.from({ length: GENERATED_WORKERS }, freshWalletSecret));
  fill('blockEngineUuid', () => randomUUID());
  // Written beside, then renamed: a crash never leaves half a file of secrets.
  const part = `${path}.${process.pid}.tmp`;
  writeFileSync(part, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(part, 0o600);
  renameSync(part, path);
  return added;
}
