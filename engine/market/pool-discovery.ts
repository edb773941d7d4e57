/**
 * Market data initialization (`tidepool pools discover --mints A,B,…`): the pools of the four DEX
 * kinds that trade the given mints, found the way a real node is asked — getProgramAccounts on each
 * DEX program with a `dataSize` filter (the pool account's size) and a `memcmp` filter on a mint
 * field — then read (RpcPoolLoader: vault balances for reserves) and ranked by liquidity.
 *
 * Mint fields (offsets in the pool account, from each layout in engine/dex):
 *   dexa_amm 752 bytes: mint A @400, mint B @432 · dexa_clmm 1544: mint 0 @73, mint 1 @105 ·
 *   dexc_whirlpool 653: mint A @101, mint B @181 · dexb_dlmm 904: token X @88, token Y @120.
 * With one mint: every pool with it on either side. With several: pools whose two mints are both in
 * the list. Liquidity (for ranking): the pool's reserve of whichever of its mints comes first in the
 * list, in atoms — comparable between pools that share that mint; pools that could not be read
 * rank last.
 */
import { AMM_ACCOUNT_SIZE, CLMM_POOL_ACCOUNT_SIZE, DEFAULT_PROGRAM_IDS, DLMM_LB_PAIR_SIZE, Dex, WHIRLPOOL_ACCOUNT_SIZE } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { reservesOf, type PoolLoader } from '../pools/index.js';

export const POOL_MINT_FIELDS: Readonly<Record<Dex, { size: number; mintA: number; mintB: number }>> = Object.freeze({
  [Dex.Amm]: { size: AMM_ACCOUNT_SIZE, mintA: 400, mintB: 432 },
  [Dex.Clmm]: { size: CLMM_POOL_ACCOUNT_SIZE, mintA: 73, mintB: 105 },
  [Dex.Whirlpool]: { size: WHIRLPOOL_ACCOUNT_SIZE, mintA: 101, mintB: 181 },
  [Dex.Dlmm]: { size: DLMM_LB_PAIR_SIZE, mintA: 88, mintB: 120 },
});

export interface DiscoveredPool {
  address: string;
  dex: Dex;
  tokenA: string;
  tokenB: string;
  /** The mint the liquidity is counted in, and the pool's reserve of it (atoms, decimal). */
  liquidityMint: string | null;
  liquidity: string | null;
}

export interface DiscoverOptions {
  rpcUrl: string;
  mints: readonly string[];
  loader: PoolLoader;
  programIds?: Readonly<Record<Dex, string>>;
  timeoutMs?: number;
}

async function programAccounts(rpcUrl: string, programId: string, filters: unknown[], timeoutMs: number): Promise<string[]> {
  let res: Response;
  try {
    res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // `confirmed`: a pool created a few slots ago is found, a closed one is gone (the node's
      // default is finalized, some 13 seconds behind).
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [programId, { encoding: 'base64', commitment: 'confirmed', dataSlice: { offset: 0, length: 0 }, filters }] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new TpError(ErrorCode.RpcFallbackFailed, `getProgramAccounts on ${rpcUrl} failed: ${(err as Error).message}`, { cause: err, context: { method: 'getProgramAccounts' } });
  }
  const body = (await res.json().catch(() => null)) as { result?: { pubkey: string }[]; error?: { message: string } } | null;
  if (body === null || body.error !== undefined || !Array.isArray(body.result)) {
    throw new TpError(ErrorCode.RpcFallbackFailed, `getProgramAccounts on ${rpcUrl} answered ${body?.error?.message ?? `HTTP ${res.status} without a result`}`, {
      context: { method: 'getProgramAccounts', httpStatus: res.status },
    });
  }
  return body.result.map((r) => r.pubkey);
}

export async function discoverPools(options: DiscoverOptions): Promise<DiscoveredPool[]> {
  const { mints } = options;
  if (mints.length === 0) throw new TpError(ErrorCode.BadParameter, 'give at least one mint', { context: { parameter: 'mints' } });
  const programIds = options.programIds ?? DEFAULT_PROGRAM_IDS;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const found = new Map<string, Dex>();
  for (const dex of Object.keys(POOL_MINT_FIELDS) as Dex[]) {
    const f = POOL_MINT_FIELDS[dex];
    for (const mint of mints) {
      for (const offset of [f.mintA, f.mintB]) {
        const addresses = await programAccounts(options.rpcUrl, programIds[dex], [{ dataSize: f.size }, { memcmp: { offset, bytes: mint } }], timeoutMs);
        for (const a of addresses) found.set(a, dex);
      }
    }
  }
  const addresses = [...found.keys()];
  const loaded = addresses.length === 0 ? [] : await options.loader.load(addresses);
  const wanted = new Set(mints);
  const out: DiscoveredPool[] = [];
  loaded.forEach((r, i) => {
    const address = addresses[i]!;
    if (!r.ok) {
      out.push({ address, dex: found.get(address)!, tokenA: '', tokenB: '', liquidityMint: null, liquidity: null });
      return;
    }
    const { tokenA, tokenB } = r.value.pool;
    if (mints.length > 1 && !(wanted.has(tokenA) && wanted.has(tokenB))) return;
    const [reserveA, reserveB] = reservesOf(r.value);
    const first = mints.find((m) => m === tokenA || m === tokenB)!;
    out.push({ address, dex: r.value.dex, tokenA, tokenB, liquidityMint: first, liquidity: (first === tokenA ? reserveA : reserveB).toString() });
  });
  return out.filter((p) => p.tokenA !== '' || mints.length === 1).sort((a, b) => {
    if (a.liquidity === null || b.liquidity === null) return a.liquidity === null ? (b.liquidity === null ? 0 : 1) : -1;
    const x = BigInt(a.liquidity);
    const y = BigInt(b.liquidity);
    return x > y ? -1 : x < y ? 1 : a.address < b.address ? -1 : 1;
  });
}
