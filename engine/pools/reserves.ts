import type { LoadedPool } from './types.js';

/**
 * Token A / B reserves of a loaded pool: what the loader read (AMM v4: vault balances less
 * need_take_pnl), or the AMM pool's own reserves; 0 / 0 when neither is known (the swap math never reads them: it quotes on the decoded
 * pool and its context).
 */
export function reservesOf(loaded: LoadedPool): readonly [bigint, bigint] {
  if (loaded.reserves !== undefined) return loaded.reserves;
  const pool = loaded.pool;
  if (pool.dex === 'dexa_amm') return [pool.reserveA, pool.reserveB];
  return [0n, 0n];
}
