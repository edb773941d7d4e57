import { createDecoderRegistry, swapPoolFrom, swapPoolPlan, type SwapPool } from '../../dex/index.js';
import type { SimChain } from '../chain.js';
import { blockTimeOf } from '../chain-time.js';

/** Test support: pools as an executor reads them, from a chain in the same process. */

const registry = createDecoderRegistry();

/** The block time of the slot the next submitted transaction lands in. */
export function nextBlockTime(chain: SimChain): bigint {
  return blockTimeOf(chain.slot() + 1n, chain.settings.slotMs);
}

/** `address` as a SwapPool, read from the chain's processed state, quoted at `nowSeconds`. */
export function chainSwapPool(chain: SimChain, address: string, nowSeconds: bigint = nextBlockTime(chain)): SwapPool {
  const read = (a: string) => {
    const r = chain.getAccount(a);
    return r === null ? null : { owner: r.owner, data: r.data };
  };
  const account = read(address)!;
  const plan = swapPoolPlan(registry, address, account);
  return swapPoolFrom(registry, address, account, plan.addresses.map(read), { nowSeconds });
}
