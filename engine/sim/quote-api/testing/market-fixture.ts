/**
 * A small market for the quote API's tests, built from real account bytes: every pool, tick array
 * and bin array is written with engine/dex's encoders and read back through the decoder registry,
 * so the states are exactly what the chain would serve.
 *
 *   SOL/USDC   Raydium (AMM, 10,000 SOL / 1,500,000 USDC) and Whirlpool (0.04 %, concentrated)
 *   X/USDC     Raydium, deep (X at 2 USDC)
 *   X/SOL      Raydium, shallow: X -> SOL is better through USDC for most sizes
 *   Y/USDC     Meteora DLMM (Y at 0.5 USDC, bin step 10)
 *   Z/SOL      Raydium: Z -> Y needs Z -> SOL -> USDC -> Y
 *   P/W, W/Q   Raydium: P -> Q only through W, which is not a restricted intermediate
 *   LONE       a listed token without pools
 */
import * as base58 from '../../../chain/base58.js';
import {
  AmmStatus,
  BINS_PER_ARRAY,
  DEFAULT_PROGRAM_IDS,
  Dex,
  binArrayLowerBinId,
  binPrice,
  createDecoderRegistry,
  encodeAmmInfo,
  withAmmVaultAmounts,
  type AmmPool,
  encodeBinArray,
  encodeLbPair,
  encodeWhirlpool,
  encodeWhirlpoolTickArray,
  whirlpoolSqrtPriceAtTick,
  withBinArrayBit,
  type BinArray,
  type DecodedPool,
  type DlmmPool,
  type SwapContext,
  type TickArray,
} from '../../../dex/index.js';
import type { MarketView, SimPoolView, SimToken } from '../../market-view.js';
import { USDC_MINT, WSOL_MINT } from '../../../swap-api/index.js';

/** A deterministic 32-byte key from a seed. */
export function testKey(seed: number): string {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = (seed * 31 + i * 7 + 1) & 0xff;
  return base58.encode(bytes);
}

export const MINT = {
  SOL: WSOL_MINT,
  USDC: USDC_MINT,
  X: testKey(1),
  Y: testKey(2),
  Z: testKey(3),
  P: testKey(4),
  Q: testKey(5),
  W: testKey(6),
  LONE: testKey(7),
} as const;

export const POOL = {
  solUsdcAmm: testKey(101),
  solUsdcWhirlpool: testKey(102),
  xUsdcAmm: testKey(103),
  xSolAmm: testKey(104),
  yUsdcDlmm: testKey(105),
  zSolAmm: testKey(106),
  pWAmm: testKey(107),
  wQAmm: testKey(108),
} as const;

export const LABEL = {
  [Dex.Amm]: 'Raydium',
  [Dex.Clmm]: 'Raydium CLMM',
  [Dex.Dlmm]: 'Meteora DLMM',
  [Dex.Whirlpool]: 'Whirlpool',
} as const;

const WHIRLPOOL_TICK_SPACING = 64;
const WHIRLPOOL_TICKS_PER_ARRAY = 88;
const DLMM_BIN_STEP = 10;
const NOW_SECONDS = 1_700_000_000n;

/** A MarketView over fixed pools whose slot the test sets. */
export class FixtureMarket implements MarketView {
  currentSlot = 250_000_000n;
  private readonly tokenList: SimToken[];
  private readonly tokenByMint: Map<string, SimToken>;
  private poolList: SimPoolView[] = [];
  private poolByAddress = new Map<string, SimPoolView>();

  constructor(tokens: SimToken[], pools: SimPoolView[]) {
    this.tokenList = tokens;
    this.tokenByMint = new Map(tokens.map((t) => [t.mint, t]));
    this.setPools(pools);
  }

  /** Replaces the pools (a new array, as a chain serving a new slot would). */
  setPools(pools: SimPoolView[]): void {
    this.poolList = [...pools];
    this.poolByAddress = new Map(pools.map((p) => [p.address, p]));
  }

  tokens(): readonly SimToken[] {
    return this.tokenList;
  }
  token(mint: string): SimToken | undefined {
    return this.tokenByMint.get(mint);
  }
  pools(): readonly SimPoolView[] {
    return this.poolList;
  }
  pool(address: string): SimPoolView | undefined {
    return this.poolByAddress.get(address);
  }
  poolsForPair(mintX: string, mintY: string): readonly SimPoolView[] {
    return this.poolList.filter(
      (p) => (p.pool.tokenA === mintX && p.pool.tokenB === mintY) || (p.pool.tokenA === mintY && p.pool.tokenB === mintX),
    );
  }
  slot(): bigint {
    return this.currentSlot;
  }
}

const registry = createDecoderRegistry({
  tickSpacingOf: (pool) => (pool === POOL.solUsdcWhirlpool ? WHIRLPOOL_TICK_SPACING : undefined),
});

function decodePool(dex: Dex, bytes: Uint8Array, address: string): DecodedPool {
  const decoded = registry.decodeAccount(DEFAULT_PROGRAM_IDS[dex], bytes, address);
  if (decoded.kind !== 'pool') throw new Error(`expected a ${dex} pool, decoded a ${decoded.kind}`);
  return decoded.pool;
}

function view(dex: Dex, address: string, pool: DecodedPool, ctx: SwapContext = {}): SimPoolView {
  return { address, dex, label: LABEL[dex], pool, ctx };
}

/** An AMM v4 pool (AmmInfo, vaults holding exactly `reserveA` / `reserveB`, fee 25/10000). */
export function ammPool(address: string, tokenA: string, tokenB: string, reserveA: bigint, reserveB: bigint): SimPoolView {
  const bytes = encodeAmmInfo({
    status: AmmStatus.Initialized, nonce: 254n, coinDecimals: 9n, pcDecimals: 6n, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n,
    coinVault: testKey(900 + Number(reserveA % 97n)), pcVault: testKey(950 + Number(reserveB % 43n)), coinMint: tokenA, pcMint: tokenB,
  });
  return view(Dex.Amm, address, withAmmVaultAmounts(decodePool(Dex.Amm, bytes, address) as AmmPool, reserveA, reserveB));
}

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/**
 * A Whirlpool at `price` (B atoms per A atom) with one position of `liquidity` over three tick
 * arrays (the current one and one each side), all three supplied as context.
 */
export function whirlpoolPool(
  address: string,
  tokenA: string,
  tokenB: string,
  price: number,
  liquidity: bigint,
  feeRate: number,
): SimPoolView {
  const ts = WHIRLPOOL_TICK_SPACING;
  const span = ts * WHIRLPOOL_TICKS_PER_ARRAY;
  const tick = Math.floor(Math.log(price) / Math.log(1.0001));
  const start = floorDiv(tick, span) * span;
  const lower = start - span;
  const upper = start + 2 * span - ts;
  const bytes = encodeWhirlpool({
    tokenA,
    tokenB,
    vaultA: testKey(201),
    vaultB: testKey(202),
    sqrtPrice: whirlpoolSqrtPriceAtTick(tick),
    tick,
    tickSpacing: ts,
    liquidity,
    feeRate,
  });
  const pool = decodePool(Dex.Whirlpool, bytes, address);
  const tickArrays: TickArray[] = [];
  for (const arrayStart of [lower, start, start + span]) {
    const ticks = Array.from({ length: WHIRLPOOL_TICKS_PER_ARRAY }, (_, slot) => {
      const index = arrayStart + slot * ts;
      if (index === lower) return { initialized: true, liquidityNet: liquidity, liquidityGross: liquidity };
      if (index === upper) return { initialized: true, liquidityNet: -liquidity, liquidityGross: liquidity };
      return { initialized: false, liquidityNet: 0n, liquidityGross: 0n };
    });
    const data = encodeWhirlpoolTickArray({ pool: address, startTickIndex: arrayStart, ticks });
    const decoded = registry.decodeAccount(DEFAULT_PROGRAM_IDS[Dex.Whirlpool], data, testKey(300 + tickArrays.length));
    if (decoded.kind !== 'tickArray') throw new Error('expected a tick array');
    tickArrays.push(decoded.tickArray);
  }
  return view(Dex.Whirlpool, address, pool, { tickArrays });
}

/**
 * A DLMM pair (X = tokenA, Y = tokenB) active at the bin nearest `price` (Y atoms per X atom),
 * with `xPerBin` X in every bin above the active one, `yPerBin` Y in every bin below, both in the
 * active bin, over three bin arrays.
 */
export function dlmmPool(
  address: string,
  tokenA: string,
  tokenB: string,
  price: number,
  xPerBin: bigint,
  yPerBin: bigint,
): SimPoolView {
  const binStep = DLMM_BIN_STEP;
  const activeId = Math.round(Math.log(price) / Math.log(1 + binStep / 10_000));
  const activeArray = Math.floor(activeId / BINS_PER_ARRAY);
  let bitmap: bigint[] = new Array<bigint>(16).fill(0n);
  const arrayIndexes = [activeArray - 1, activeArray, activeArray + 1];
  for (const index of arrayIndexes) bitmap = withBinArrayBit(bitmap, index, true);
  const lbPair: DlmmPool = {
    dex: Dex.Dlmm,
    address,
    tokenA,
    tokenB,
    activeId,
    binStep,
    status: 0,
    reserveX: testKey(401),
    reserveY: testKey(402),
    parameters: {
      baseFactor: 10_000,
      filterPeriod: 30,
      decayPeriod: 600,
      reductionFactor: 5_000,
      variableFeeControl: 0,
      maxVolatilityAccumulator: 350_000,
      minBinId: -443_636,
      maxBinId: 443_636,
      protocolShare: 0,
      baseFeePowerFactor: 0,
      functionType: 0,
      collectFeeMode: 0,
    },
    vParameters: { volatilityAccumulator: 0, volatilityReference: 0, indexReference: activeId, lastUpdateTimestamp: NOW_SECONDS },
    binArrayBitmap: bitmap,
  };
  const pool = decodePool(Dex.Dlmm, encodeLbPair(lbPair), address);
  const binArrays: BinArray[] = arrayIndexes.map((index, n) => {
    const lowerId = binArrayLowerBinId(index);
    const bins = Array.from({ length: BINS_PER_ARRAY }, (_, i) => {
      const id = lowerId + i;
      const amountX = id >= activeId ? xPerBin : 0n;
      const amountY = id <= activeId ? yPerBin : 0n;
      return { id, amountX, amountY, price: binPrice(id, binStep), liquiditySupply: amountX + amountY };
    });
    const data = encodeBinArray({ pool: address, index: BigInt(index), bins });
    const decoded = registry.decodeAccount(DEFAULT_PROGRAM_IDS[Dex.Dlmm], data, testKey(500 + n));
    if (decoded.kind !== 'binArray') throw new Error('expected a bin array');
    return decoded.binArray;
  });
  return view(Dex.Dlmm, address, pool, { binArrays, nowSeconds: NOW_SECONDS });
}

function token(mint: string, symbol: string, decimals: number, referencePriceUsd: number): SimToken {
  return { mint, symbol, decimals, referencePriceUsd };
}

/** The market described at the top of this file. */
export function buildFixtureMarket(): FixtureMarket {
  const tokens = [
    token(MINT.SOL, 'SOL', 9, 150),
    token(MINT.USDC, 'USDC', 6, 1),
    token(MINT.X, 'X', 6, 2),
    token(MINT.Y, 'Y', 6, 0.5),
    token(MINT.Z, 'Z', 6, 3),
    token(MINT.P, 'P', 6, 1),
    token(MINT.Q, 'Q', 6, 1),
    token(MINT.W, 'W', 6, 1),
    token(MINT.LONE, 'LONE', 6, 1),
  ];
  const pools = [
    ammPool(POOL.solUsdcAmm, MINT.SOL, MINT.USDC, 10_000n * 10n ** 9n, 1_500_000n * 10n ** 6n),
    whirlpoolPool(POOL.solUsdcWhirlpool, MINT.SOL, MINT.USDC, 0.15, 4_000_000_000_000n, 400),
    ammPool(POOL.xUsdcAmm, MINT.X, MINT.USDC, 1_000_000n * 10n ** 6n, 2_000_000n * 10n ** 6n),
    ammPool(POOL.xSolAmm, MINT.X, MINT.SOL, 1_000n * 10n ** 6n, 13n * 10n ** 9n),
    dlmmPool(POOL.yUsdcDlmm, MINT.Y, MINT.USDC, 0.5, 20_000n * 10n ** 6n, 10_000n * 10n ** 6n),
    ammPool(POOL.zSolAmm, MINT.Z, MINT.SOL, 100_000n * 10n ** 6n, 2_000n * 10n ** 9n),
    ammPool(POOL.pWAmm, MINT.P, MINT.W, 100_000n * 10n ** 6n, 100_000n * 10n ** 6n),
    ammPool(POOL.wQAmm, MINT.W, MINT.Q, 100_000n * 10n ** 6n, 100_000n * 10n ** 6n),
  ];
  return new FixtureMarket(tokens, pools);
}
