import { readFileSync } from 'node:fs';

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

import { packagePath } from '../package-files.js';

/**
 * The platform configuration's JSON Schema (schemas/platform-config.schema.json), compiled with
 * every error collected. Formats: `uri` (parsed by WHATWG URL, with a scheme) and `uuid`.
 */

export interface PlatformConfig {
  rpcEndpoints: string[];
  rpcTimeout: number;
  natsUrl: string;
  natsToken?: string;
  natsUser?: string;
  natsPassword?: string;
  natsCredsFile?: string;
  natsTls?: boolean;
  natsTlsCaFile?: string;
  natsTlsCertFile?: string;
  natsTlsKeyFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  upstreamTlsCaFile?: string;
  upstreamTls?: boolean;
  localQuoteAddr?: string;
  externalQuoteAddr?: string;
  redisUrl: string;
  redisPassword?: string;
  databaseUrl: string;
  treasureWallet: string;
  workerWallets: string[];
  minProfitThreshold: number;
  maxConcurrentTrades: number;
  blockEngineUrl: string;
  blockEngineUuid: string;
  tipBase: number;
  externalQuoteUrl?: string;
  externalQuoteApiKey?: string;
  shredstreamUrl?: string;
}

export interface Violation {
  /** JSON pointer of the offending value (`/workerWallets/2`), `/` for the document. */
  path: string;
  message: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isUri(value: string): boolean {
  try {
    const u = new URL(value);
    return /^[a-z][a-z0-9+.-]*:$/.test(u.protocol) && (u.host !== '' || u.protocol === 'file:');
  } catch {
    return false;
  }
}

export function schemaPath(): string {
  return packagePath('schemas', 'platform-config.schema.json');
}

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addFormat('uri', { type: 'string', validate: isUri });
  ajv.addFormat('uuid', { type: 'string', validate: (s: string) => UUID_RE.test(s) });
  compiled = ajv.compile(JSON.parse(readFileSync(schemaPath(), 'utf8')) as object);
  return compiled;
}

function describe(e: ErrorObject): Violation {
  const base = e.instancePath === '' ? '' : e.instancePath;
  switch (e.keyword) {
    case 'required':
      return { path: `${base}/${(e.params as { missingProperty: string }).missingProperty}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${base}/${(e.params as { additionalProperty: string }).additionalProperty}`, message: 'is not a known setting' };
    case 'format':
      return { path: base || '/', message: `must be a valid ${(e.params as { format: string }).format}` };
    default:
      return { path: base || '/', message: e.message ?? e.keyword };
  }
}

/** Every schema violation of `config`, sorted by path. */
export function schemaViolations(config: unknown): Violation[] {
  const validate = validator();
  if (validate(config)) return [];
  return (validate.errors ?? []).map(describe).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
