/**
 * The swap builder of POST /swap/v1/swap and /swap-instructions from the configuration: the pools
 * read over `rpc.endpoints` (with their mints: the token programs), the user's accounts and the
 * node's slot, blockhash and prioritization fees over the first endpoint, and the operator's
 * lookup tables (`swap.lookupTables`). None without an RPC endpoint: the paths then answer 503.
 */
import { createDecoderRegistry } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, ChainClient, OperatorLookupTables, RpcClient } from '../rpc/index.js';
import { SwapBuilder } from '../swap-builder/index.js';
import type { QuoteServiceConfig } from './quote-config.js';

/** Per RPC call of a swap build: a wallet waits for the answer. */
const SWAP_RPC_TIMEOUT_MS = 10_000;

export interface ConfiguredSwapBuilder {
  builder: SwapBuilder;
  close(): Promise<void>;
}

export function swapBuilderFromConfig(config: QuoteServiceConfig, logger: Logger): ConfiguredSwapBuilder | undefined {
  const endpoints = config['rpc.endpoints'];
  if (endpoints.length === 0) return undefined;
  const rpc = new RpcClient({ endpoints, timeoutMs: SWAP_RPC_TIMEOUT_MS });
  const fetcher = new AccountFetcher(rpc);
  const registry = createDecoderRegistry();
  const loader = new RpcPoolLoader({ fetcher, registry, readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
  const chain = new ChainClient({ endpoints, timeoutMs: SWAP_RPC_TIMEOUT_MS });
  const tables = config['swap.lookupTables'];
  const builder = new SwapBuilder({
    loader,
    registry,
    accounts: fetcher,
    chain,
    maxQuoteAgeSlots: config['swap.maxQuoteAgeSlots'],
    ...(tables.length === 0 ? {} : { lookupTables: new OperatorLookupTables({ reader: fetcher, addresses: tables, logger: logger.child({ component: 'swap-lookup-tables' }) }) }),
  });
  return {
    builder,
    async close() {
      await Promise.allSettled([chain.close(), rpc.close()]);
    },
  };
}
