import { DEX_KINDS, type Dex } from '../../dex/index.js';
import type { Logger } from '../../obs/index.js';
import type { SimChain } from '../chain.js';
import { PriceGapError, openPriceGap, type PriceGapRequest } from '../price-gap.js';
import { ErrorCode, isTpError } from '../../errors.js';
import { HttpError, HttpErrorCode, readJson, sendJson } from './http-io.js';
import type { RouteRegistry } from './router.js';

/**
 * Market admin: moves the simulated market on demand (price-gap.ts), and creates and closes pools
 * (as a protocol's initialize and a pool's closing would, for pool discovery).
 *
 *   POST /admin/market/price-gap  ← {"pool": base58, "reference"?: base58, "gapBps": 1..5000, "direction"?: "up"|"down"}
 *                                 → {signature, pool, aToB, inputMint, amountIn, expectedOut, spotBefore,
 *                                    referenceSpot, targetSpot, expectedSpotAfter, sentAtSlot}
 *   POST /admin/market/pools      ← {"dex": "dexa_amm"|"dexa_clmm"|"dexb_dlmm"|"dexc_whirlpool", "tokenA": base58,
 *                                    "tokenB": base58, "tvlUsd"?: number}
 *                                 → {address, dex, tokenA, tokenB, vaultA, vaultB, slot}
 *   DELETE /admin/market/pools/:address → {closed: address, slot}; 404 when it is no pool
 *
 * The swap is sent at once and lands in the next slot (a manual-mode chain: after the next
 * advanceSlot). Amounts and slots are decimal strings; spot prices are token B atoms per token A
 * atom. Errors: 400 for a bad body, a target the pool is already past, or a gap the market mover's
 * balance cannot open; 404 for an address that is not a pool.
 */
export const MarketAdminPath = { PriceGap: '/admin/market/price-gap', Pools: '/admin/market/pools' } as const;

const BODY_LIMIT = 16 * 1024;
const FIELDS = new Set(['pool', 'reference', 'gapBps', 'direction']);
const POOL_FIELDS = new Set(['dex', 'tokenA', 'tokenB', 'tvlUsd']);

export function mountMarketAdmin(server: RouteRegistry, options: { chain: SimChain; logger: Logger }): void {
  const { chain, logger } = options;
  server.route('POST', MarketAdminPath.PriceGap, async (req, res) => {
    const body = await readJson(req, BODY_LIMIT);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, HttpErrorCode.InvalidParameter, 'body must be an object with pool and gapBps');
    const fields = body as Record<string, unknown>;
    for (const key of Object.keys(fields)) if (!FIELDS.has(key)) throw new HttpError(400, HttpErrorCode.InvalidParameter, `unknown field ${key}; expected pool, reference, gapBps, direction`);
    if (typeof fields['pool'] !== 'string') throw new HttpError(400, HttpErrorCode.InvalidParameter, 'pool must be a base58 string');
    if (fields['reference'] !== undefined && typeof fields['reference'] !== 'string') throw new HttpError(400, HttpErrorCode.InvalidParameter, 'reference must be a base58 string');
    if (typeof fields['gapBps'] !== 'number') throw new HttpError(400, HttpErrorCode.InvalidParameter, 'gapBps must be a number from 1 to 5000');
    const request: PriceGapRequest = { pool: fields['pool'], gapBps: fields['gapBps'] };
    if (fields['reference'] !== undefined) request.reference = fields['reference'] as string;
    if (fields['direction'] !== undefined) request.direction = fields['direction'] as PriceGapRequest['direction'] & string;
    let done;
    try {
      done = openPriceGap(chain, request);
    } catch (err) {
      if (!(err instanceof PriceGapError)) throw err;
      throw new HttpError(err.kind === 'unknown_pool' ? 404 : 400, err.kind === 'unknown_pool' ? HttpErrorCode.NotFound : HttpErrorCode.InvalidParameter, err.message);
    }
    logger.info({ pool: done.pool, gapBps: request.gapBps, amountIn: done.amountIn.toString(), signature: done.signature }, 'price gap opened');
    sendJson(res, 200, { ...done, amountIn: done.amountIn.toString(), expectedOut: done.expectedOut.toString(), sentAtSlot: done.sentAtSlot.toString() });
  });

  server.route('POST', MarketAdminPath.Pools, async (req, res) => {
    const body = await readJson(req, BODY_LIMIT);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, HttpErrorCode.InvalidParameter, 'body must be an object with dex, tokenA and tokenB');
    const f = body as Record<string, unknown>;
    for (const key of Object.keys(f)) if (!POOL_FIELDS.has(key)) throw new HttpError(400, HttpErrorCode.InvalidParameter, `unknown field ${key}; expected dex, tokenA, tokenB, tvlUsd`);
    if (typeof f['dex'] !== 'string' || !(DEX_KINDS as readonly string[]).includes(f['dex'])) throw new HttpError(400, HttpErrorCode.InvalidParameter, `dex must be one of ${DEX_KINDS.join(', ')}`);
    if (typeof f['tokenA'] !== 'string' || typeof f['tokenB'] !== 'string') throw new HttpError(400, HttpErrorCode.InvalidParameter, 'tokenA and tokenB must be base58 mints of the chain');
    if (f['tvlUsd'] !== undefined && (typeof f['tvlUsd'] !== 'number' || !(f['tvlUsd'] >= 1_000 && f['tvlUsd'] <= 1e9))) throw new HttpError(400, HttpErrorCode.InvalidParameter, 'tvlUsd must be a number from 1000 to 1e9');
    let info;
    try {
      info = chain.createPool({ dex: f['dex'] as Dex, tokenA: f['tokenA'], tokenB: f['tokenB'], ...(f['tvlUsd'] === undefined ? {} : { tvlUsd: f['tvlUsd'] as number }) });
    } catch (err) {
      if (isTpError(err, ErrorCode.UnknownMint) || isTpError(err, ErrorCode.ArgumentInvalid)) throw new HttpError(400, HttpErrorCode.InvalidParameter, err.message);
      throw err;
    }
    logger.info({ pool: info.address, dex: info.dex }, 'pool created');
    sendJson(res, 200, { address: info.address, dex: info.dex, tokenA: info.tokenA.mint, tokenB: info.tokenB.mint, vaultA: info.vaultA, vaultB: info.vaultB, slot: chain.slot().toString() });
  });
  server.route('DELETE', `${MarketAdminPath.Pools}/:address`, (_req, res, ctx) => {
    const address = ctx.params['address'] ?? '';
    if (!chain.closePool(address)) throw new HttpError(404, HttpErrorCode.NotFound, `${address} is not a pool of the chain`);
    logger.info({ pool: address }, 'pool closed');
    sendJson(res, 200, { closed: address, slot: chain.slot().toString() });
  });
}
