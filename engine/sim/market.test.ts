import { describe, expect, it } from 'vitest';

import {
  DEFAULT_PROGRAM_IDS,
  DEX_KINDS,
  Dex,
  binArrayHasLiquidity,
  createDecoderRegistry,
  type BinArray,
  type ConcentratedPool,
  type DlmmPool,
  type TickArray,
} from '../dex/index.js';
import { decodeMint, withAmmVaultAccounts, withheldAmount } from '../dex/index.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { TOLL_SYMBOL, createMarket, planPairs, createTokens, tollTransferFees } from './market.js';
import { feeFraction, referenceRawPrice, spotPrice } from './pool-prices.js';
import { mintDecimals, tokenAccountMint, tokenAccountOwner, tokenAmount } from './spl-token.js';

const market = createMarket({ seed: 1, tokens: 6, poolsPerKind: 4 });
const registry = createDecoderRegistry({
  tickSpacingOf: (pool) => (market.pools.find((p) => p.address === pool)?.tickSpacing),
});

/** The account decoded; an AMM v4 pool with its vault balances (its reserves are the vaults less need_take_pnl). */
function decode(address: string) {
  const account = market.accounts.get(address)!;
  const decoded = registry.decodeAccount(account.owner, account.data, address);
  if (decoded.kind !== 'pool' || decoded.pool.dex !== Dex.Amm) return decoded;
  const pool = withAmmVaultAccounts(decoded.pool, market.accounts.get(decoded.pool.vaultA!), market.accounts.get(decoded.pool.vaultB!));
  if (typeof pool === 'string') throw new Error(pool);
  return { ...decoded, pool };
}

describe('the simulated market', () => {
  it('has SOL and USDC under their mainnet mints and seeded other tokens with their Mint accounts', () => {
    expect(market.tokens.slice(0, 2).map((t) => [t.mint, t.symbol, t.decimals])).toEqual([
      [WSOL_MINT, 'SOL', 9],
      [USDC_MINT, 'USDC', 6],
    ]);
    // SOL, USDC, the 6 seeded tokens, then the Token-2022 mint TOLL.
    expect(market.tokens).toHaveLength(9);
    expect(new Set(market.tokens.map((t) => t.symbol)).size).toBe(9);
    for (const token of market.tokens.slice(0, 8)) {
      const mint = market.accounts.get(token.mint)!;
      expect(mint.owner).toBe(TOKEN_PROGRAM_ID);
      expect(mint.data).toHaveLength(82);
      expect(mintDecimals(mint.data)).toBe(token.decimals);
      expect(token.referencePriceUsd).toBeGreaterThan(0);
    }
    expect(createTokens(1, 6)).toEqual(market.tokens.slice(0, 8));
    expect(createTokens(2, 6).slice(2)).not.toEqual(market.tokens.slice(2, 8));
  });

  it('has TOLL, a Token-2022 mint with a transfer fee whose newer rate starts at a later epoch', () => {
    const toll = market.tokens[8]!;
    expect(toll).toMatchObject({ symbol: TOLL_SYMBOL, decimals: 6, programId: TOKEN_2022_PROGRAM_ID });
    const account = market.accounts.get(toll.mint)!;
    expect(account.owner).toBe(TOKEN_2022_PROGRAM_ID);
    expect(account.data).toHaveLength(278); // getMintLen([TransferFeeConfig])
    const mint = decodeMint(account.owner, account.data, toll.mint);
    expect(mint.decimals).toBe(6);
    expect(mint.transferFeeConfig).toEqual(tollTransferFees(1));
    expect(mint.transferFeeConfig!.olderTransferFee).toMatchObject({ epoch: 0n, transferFeeBasisPoints: 100, maximumFee: 5_000_000_000n });
    expect(mint.transferFeeConfig!.newerTransferFee).toMatchObject({ epoch: 2n, transferFeeBasisPoints: 150, maximumFee: 7_500_000_000n });
    // Two pools trade it, after every regular pool: a dexa_amm against USDC, a dexc_whirlpool against SOL.
    const pools = market.pools.slice(16);
    expect(pools.map((p) => p.dex)).toEqual([Dex.Amm, Dex.Whirlpool]);
    expect(pools.map((p) => [p.tokenA.mint, p.tokenB.mint].sort())).toEqual([[toll.mint, USDC_MINT].sort(), [toll.mint, WSOL_MINT].sort()]);
  });

  it('has poolsPerKind pools of each kind, SOL/USDC in every kind, every token in a pool and 2-hop routes to USDC', () => {
    expect(market.pools).toHaveLength(18);
    for (const dex of DEX_KINDS) {
      const pools = market.pools.slice(0, 16).filter((p) => p.dex === dex);
      expect(pools).toHaveLength(4);
      expect(pools.some((p) => new Set([p.tokenA.mint, p.tokenB.mint]).has(WSOL_MINT) && new Set([p.tokenA.mint, p.tokenB.mint]).has(USDC_MINT))).toBe(true);
    }
    const neighbours = new Map<string, Set<string>>();
    for (const p of market.pools) {
      for (const [x, y] of [[p.tokenA.mint, p.tokenB.mint], [p.tokenB.mint, p.tokenA.mint]] as const) {
        if (!neighbours.has(x)) neighbours.set(x, new Set());
        neighbours.get(x)!.add(y);
      }
    }
    for (const token of market.tokens) {
      const direct = neighbours.get(token.mint)!;
      expect(direct.size).toBeGreaterThan(0);
      if (token.mint === USDC_MINT) continue;
      const twoHops = direct.has(USDC_MINT) || [...direct].some((m) => neighbours.get(m)!.has(USDC_MINT));
      expect(twoHops).toBe(true);
    }
    // With more pools than pairs, pairs repeat across kinds and arbitrage between them is possible.
    expect(planPairs(market.tokens, 4).get(Dex.Amm)).toHaveLength(4);
  });

  it('writes pool accounts the engine decodes, under the DEX program ids, priced near the reference', () => {
    for (const info of market.pools) {
      const account = market.accounts.get(info.address)!;
      expect(account.owner).toBe(DEFAULT_PROGRAM_IDS[info.dex]);
      const decoded = decode(info.address);
      expect(decoded.kind).toBe('pool');
      if (decoded.kind !== 'pool') continue;
      const pool = decoded.pool;
      expect([pool.tokenA, pool.tokenB]).toEqual([info.tokenA.mint, info.tokenB.mint]);
      const reference = referenceRawPrice(info.tokenA.referencePriceUsd, info.tokenA.decimals, info.tokenB.referencePriceUsd, info.tokenB.decimals);
      const drift = Math.abs(Math.log(spotPrice(pool) / reference));
      // Pools start up to 0.4% off the reference (DLMM: plus half a bin).
      expect(drift).toBeLessThan(0.004 + (pool.dex === Dex.Dlmm ? pool.binStep / 20_000 : 1e-4));
      const fee = feeFraction(pool.dex === Dex.Clmm ? { ...pool, feeRate: 500 } : pool);
      expect(fee).toBeGreaterThan(0);
      expect(fee).toBeLessThanOrEqual(0.003);
    }
  });

  it('uses the fees of the real protocols', () => {
    const amm = decode(market.pools.find((p) => p.dex === Dex.Amm)!.address);
    expect(amm.kind === 'pool' && amm.pool.dex === Dex.Amm && [amm.pool.feeNumerator, amm.pool.feeDenominator]).toEqual([25n, 10000n]);
    for (const info of market.pools.filter((p) => p.dex === Dex.Whirlpool)) {
      const pool = (decode(info.address) as { pool: ConcentratedPool }).pool;
      expect([400, 500, 1600, 3000]).toContain(pool.feeRate);
      expect(pool.adaptiveFee).toBeUndefined();
    }
    for (const info of market.pools.filter((p) => p.dex === Dex.Clmm)) {
      const config = decode(info.ammConfig!);
      expect(config.kind).toBe('ammConfig');
      if (config.kind === 'ammConfig') expect([500, 2500]).toContain(config.ammConfig.tradeFeeRate);
      expect((decode(info.address) as { pool: ConcentratedPool }).pool.ammConfig).toBe(info.ammConfig);
    }
    for (const info of market.pools.filter((p) => p.dex === Dex.Dlmm)) {
      const pool = (decode(info.address) as { pool: DlmmPool }).pool;
      expect(pool.binStep).toBeGreaterThanOrEqual(10);
      expect(pool.binStep).toBeLessThanOrEqual(25);
    }
  });

  it('spreads CL liquidity over initialized ticks in several arrays around the price, consistent with the pool', () => {
    for (const info of market.pools.filter((p) => p.dex === Dex.Whirlpool || p.dex === Dex.Clmm)) {
      const pool = (decode(info.address) as { pool: ConcentratedPool }).pool;
      const arrays = info.arrays.map((a) => {
        const d = decode(a.address);
        expect(d.kind).toBe('tickArray');
        return (d as { tickArray: TickArray }).tickArray;
      });
      const span = info.tickSpacing! * info.ticksPerArray!;
      const below = arrays.filter((a) => a.startTickIndex + span <= pool.tick).length;
      const above = arrays.filter((a) => a.startTickIndex > pool.tick).length;
      expect(below).toBeGreaterThanOrEqual(info.dex === Dex.Whirlpool ? 2 : 1);
      expect(above).toBeGreaterThanOrEqual(info.dex === Dex.Whirlpool ? 2 : 1);
      let net = 0n;
      let active = 0n;
      let initialized = 0;
      for (const array of arrays) {
        expect(array.pool).toBe(info.address);
        for (const tick of array.ticks) {
          if (!tick.initialized) continue;
          initialized++;
          net += tick.liquidityNet;
          if (tick.index <= pool.tick) active += tick.liquidityNet;
        }
      }
      expect(initialized).toBeGreaterThan(8);
      expect(net).toBe(0n);
      expect(active).toBe(pool.liquidity);
      expect(pool.liquidity).toBeGreaterThan(0n);
      if (info.dex === Dex.Clmm) {
        for (const array of arrays) {
          const bit = array.startTickIndex / span + 512;
          expect((pool.tickArrayBitmap![bit >> 6]! >> BigInt(bit & 63)) & 1n).toBe(1n);
        }
      }
    }
  });

  it('spreads DLMM liquidity over bins around the active bin, with the bitmap bits set', () => {
    for (const info of market.pools.filter((p) => p.dex === Dex.Dlmm)) {
      const pool = (decode(info.address) as { pool: DlmmPool }).pool;
      let filled = 0;
      for (const a of info.arrays) {
        const array = (decode(a.address) as { binArray: BinArray }).binArray;
        expect(binArrayHasLiquidity(pool.binArrayBitmap, Number(array.index))).toBe(true);
        for (const bin of array.bins) {
          if (bin.amountX === 0n && bin.amountY === 0n) continue;
          filled++;
          if (bin.id < pool.activeId) expect(bin.amountX).toBe(0n);
          if (bin.id > pool.activeId) expect(bin.amountY).toBe(0n);
        }
      }
      expect(filled).toBeGreaterThan(100);
      expect(info.arrays.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('holds each pool\'s reserves in vault token accounts worth hundreds of thousands to millions of USD', () => {
    for (const info of market.pools) {
      let usd = 0;
      for (const [vault, token] of [[info.vaultA, info.tokenA], [info.vaultB, info.tokenB]] as const) {
        const account = market.accounts.get(vault)!;
        // Token-2022 vaults of TOLL withhold its fee: the base, account type, TransferFeeAmount.
        expect(account.data).toHaveLength(token.programId === undefined ? 165 : 178);
        expect(account.owner).toBe(token.programId ?? TOKEN_PROGRAM_ID);
        if (token.programId !== undefined) expect(withheldAmount(account.data)).toBe(0n);
        expect(tokenAccountMint(account.data)).toBe(token.mint);
        if (info.dex !== Dex.Amm) expect(tokenAccountOwner(account.data)).toBe(info.address);
        usd += (Number(tokenAmount(account.data)) / 10 ** token.decimals) * token.referencePriceUsd;
      }
      expect(usd).toBeGreaterThan(150_000);
      expect(usd).toBeLessThan(10_000_000);
      const pool = decode(info.address);
      if (pool.kind === 'pool' && pool.pool.dex === Dex.Amm) {
        // AmmInfo names these vaults; they hold the reserves plus a need_take_pnl the program subtracts.
        expect([pool.pool.vaultA, pool.pool.vaultB]).toEqual([info.vaultA, info.vaultB]);
        expect(pool.pool.needTakePnlA).toBeGreaterThan(0n);
        expect(pool.pool.needTakePnlB).toBeGreaterThan(0n);
        expect(tokenAmount(market.accounts.get(info.vaultA)!.data)).toBe(pool.pool.reserveA + pool.pool.needTakePnlA!);
        expect(tokenAmount(market.accounts.get(info.vaultB)!.data)).toBe(pool.pool.reserveB + pool.pool.needTakePnlB!);
      }
    }
  });

  it('is the same for the same seed and different for another', () => {
    const again = createMarket({ seed: 1, tokens: 6, poolsPerKind: 4 });
    expect([...again.accounts.keys()]).toEqual([...market.accounts.keys()]);
    for (const [address, account] of market.accounts) expect(Buffer.from(again.accounts.get(address)!.data).equals(Buffer.from(account.data))).toBe(true);
    const other = createMarket({ seed: 2, tokens: 6, poolsPerKind: 4 });
    expect(other.pools[0]!.address).not.toBe(market.pools[0]!.address);
  });
});
