/**
 * The quote engine's fallbacks that only the application can build: the external-aggregator
 * fallback (engine/external `ProviderFallbackQuoter`, a layer above engine/quote) from the
 * `externalFallback.*` settings, and the epoch source of transfer-fee reads.
 */
import { ProviderFallbackQuoter } from '../external/index.js';
import { EpochClock } from '../pools/index.js';
import type { ExternalQuoter } from '../quote/index.js';
import type { QuoteServiceConfig } from '../quote-service/index.js';
import { RpcClient } from '../rpc/index.js';

/** The external fallback of `config`, or undefined when `externalFallback.enabled` is false. */
export function externalFallbackOf(config: Pick<QuoteServiceConfig, 'externalFallback.enabled' | 'externalFallback.quoteUrl' | 'externalFallback.timeout'>): ExternalQuoter | undefined {
  if (!config['externalFallback.enabled']) return undefined;
  return new ProviderFallbackQuoter({ quoteUrl: config['externalFallback.quoteUrl'], timeoutMs: config['externalFallback.timeout'] });
}

/**
 * The current epoch over `endpoints` (getEpochInfo, kept 30 s), for loaders that read mints'
 * transfer fees; undefined without endpoints. `close` ends its RPC client.
 */
export function epochSourceOf(endpoints: readonly string[]): { epochs: EpochClock; close(): Promise<void> } | undefined {
  if (endpoints.length === 0) return undefined;
  const client = new RpcClient({ endpoints: [...endpoints] });
  return { epochs: new EpochClock({ getEpochInfo: () => client.getEpochInfo() }), close: () => client.close() };
}
