/**
 * The RPC fallback's pool loader from the configuration: engine/pools' RpcPoolLoader over a
 * batched account fetcher and a JSON-RPC client on `rpc.endpoints` (round-robin), whose per-call
 * timeout is the fallback deadline (a read nobody waits for any more does not linger).
 */
import { createDecoderRegistry } from '../dex/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import type { QuoteServiceConfig } from './quote-config.js';

/**
 * A loader on `endpoints`; `timeoutMs` bounds each getMultipleAccounts call. It reads each pool's
 * two mints with its accounts (`readMints`) and the current epoch (EpochClock, getEpochInfo kept
 * 30 s), so a pool of a Token-2022 mint with a transfer fee is quoted, and stored in the cache, with
 * its `transferFees`.
 */
export function createFallbackLoader(endpoints: readonly string[], timeoutMs: number): RpcPoolLoader {
  const client = new RpcClient({ endpoints, timeoutMs });
  const epochs = new EpochClock({ getEpochInfo: () => client.getEpochInfo() });
  return new RpcPoolLoader({ fetcher: new AccountFetcher(client), registry: createDecoderRegistry(), readMints: true, epochs });
}

/** The configured loader, or undefined when `rpc.endpoints` is empty (no RPC fallback). */
export function fallbackLoaderFromConfig(config: QuoteServiceConfig): RpcPoolLoader | undefined {
  const endpoints = config['rpc.endpoints'];
  return endpoints.length === 0 ? undefined : createFallbackLoader(endpoints, config['rpc.fallbackDeadline']);
}
