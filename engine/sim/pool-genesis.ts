import { base58 } from '../chain/index.js';
import {
  AmmStatus,
  CLMM_AMM_CONFIG_ACCOUNT_SIZE,
  CLMM_POOL_ACCOUNT_SIZE,
  CLMM_TICK_ARRAY_ACCOUNT_SIZE,
  CLMM_TICK_ARRAY_SIZE,
  CollectFeeMode,
  DEFAULT_PROGRAM_IDS,
  DLMM_BIN_ARRAY_SIZE,
  DLMM_LB_PAIR_SIZE,
  Dex,
  FunctionType,
  MAX_BIN_ID,
  MAX_TICK,
  MIN_BIN_ID,
  MIN_TICK,
  PairType,
  WHIRLPOOL_ACCOUNT_SIZE,
  WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE,
  WHIRLPOOL_TICK_ARRAY_SIZE,
  amountDeltaA,
  amountDeltaB,
  binArrayIndexOf,
  clmmAmmConfigAddress,
  clmmTickArrayAddress,
  dlmmBinArrayAddress,
  binPrice,
  ammV4CanonicalAuthority,
  encodeAmmInfo,
  encodeBinArray,
  encodeClmmAmmConfig,
  encodeClmmPool,
  encodeClmmTickArray,
  encodeLbPair,
  encodeWhirlpool,
  encodeWhirlpoolTickArray,
  raydiumSqrtPriceAtTick,
  raydiumTickAtSqrtPrice,
  setTickArrayBit,
  whirlpoolSqrtPriceAtTick,
  whirlpoolTickAtSqrtPrice,
  whirlpoolTickArrayAddress,
  withBinArrayBit,
  type Bin,
  type ClmmPoolFields,
  type DlmmLbPair,
  type WhirlpoolFields,
  encodeExtendedTokenAccount,
  expectSize,
} from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { GENESIS_UNIX_TIME } from './chain-time.js';
import { RENT_EPOCH_EXEMPT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, WHIRLPOOLS_CONFIG, WSOL_MINT, rentExemptMinimum } from './known-accounts.js';
import type { SimToken } from './market-view.js';
import { findProgramAddress } from '../chain/index.js';
import { seededBytes32, type SimRandom } from './prng.js';
import { encodeTokenAccount, TOKEN_ACCOUNT_SIZE } from './spl-token.js';
import { DEX_LABELS } from '../swap-api/index.js';

/**
 * Pools at genesis, one builder per kind, every account written with the engine's encoders under
 * its program id: pool state, vault token accounts holding exactly what the liquidity is worth,
 * and for the concentrated kinds the tick arrays (a wide base position plus narrower ones around
 * the price, over several arrays each side) or bin arrays (liquidity over a range of bins, bitmap
 * bits set), and for Raydium CLMM the AmmConfig of the fee tier.
 *
 * Addresses clients derive are real PDAs (tick arrays, bin arrays, AmmConfig, CLMM vaults, DLMM
 * reserves, the DLMM oracle); pool and other vault addresses are seeded.
 */

export interface PoolPlan {
  dex: Dex;
  index: number;
  seed: number;
  base: SimToken;
  quote: SimToken;
  tvlUsd: number;
  /** Relative offset of the pool's starting price from the reference price. */
  priceSkew: number;
  /** The SOL/USDC pool of its kind (lowest fee tier). */
  mainPair: boolean;
}

/** An account a swap instruction passes besides the pool: tick or bin array, by its key. */
export interface PoolArrayAccount {
  /** Start tick index (tick arrays) or array index (bin arrays). */
  key: number;
  address: string;
}

/** What the chain knows of a pool beyond its account bytes. */
export interface SimPoolInfo {
  address: string;
  dex: Dex;
  /** The DEX label an aggregator shows. */
  label: string;
  programId: string;
  /** Token A / B in the protocol's order (mint 0 / a / x, mint 1 / b / y). */
  tokenA: SimToken;
  tokenB: SimToken;
  vaultA: string;
  vaultB: string;
  /** Raydium CLMM: the AmmConfig of the pool's fee tier. */
  ammConfig?: string;
  /** Tick arrays or bin arrays, ascending by key. Empty for the AMM. */
  arrays: PoolArrayAccount[];
  /** CL pools: ticks per array and tick spacing, to find the arrays a swap crosses. */
  tickSpacing?: number;
  ticksPerArray?: number;
  tvlUsd: number;
}

/** The public swap API's label of each DEX kind (engine/swap-api, shared with the quote service). */
export { DEX_LABELS };

/** Raydium AMM v4's authority, the owner of its vaults. */
const RAYDIUM_AMM_AUTHORITY = '5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1';

interface ClTier {
  tickSpacing: number;
  /** Millionths. */
  feeRate: number;
  /** Raydium AmmConfig index. */
  index?: number;
}
const WHIRLPOOL_MAIN_TIER: ClTier = { tickSpacing: 4, feeRate: 400 };
const WHIRLPOOL_TIERS: readonly ClTier[] = [
  { tickSpacing: 8, feeRate: 500 },
  { tickSpacing: 16, feeRate: 1600 },
  { tickSpacing: 64, feeRate: 3000 },
];
const CLMM_MAIN_TIER: ClTier = { tickSpacing: 10, feeRate: 500, index: 1 };
const CLMM_TIERS: readonly ClTier[] = [CLMM_MAIN_TIER, { tickSpacing: 60, feeRate: 2500, index: 2 }];
/** Raydium's protocol and fund shares of the trade fee (millionths of the fee). */
const CLMM_PROTOCOL_FEE_RATE = 120_000;
const CLMM_FUND_FEE_RATE = 40_000;
/** Whirlpool protocol fee rate: 13% of the fee, in basis points. */
const WHIRLPOOL_PROTOCOL_FEE_RATE = 1300;

/** How far liquidity reaches on each side of the starting price (CL ticks; DLMM bins). */
const CL_COVERAGE = 0.35;
const DLMM_COVERAGE = 0.25;
const MIN_ARRAYS_EACH_SIDE = 2;
const MAX_ARRAYS_EACH_SIDE = 10;
/** Share of a CL pool's value in its wide base position; the rest is in narrower positions. */
const CL_BASE_SHARE = 0.3;
const CL_NARROW_POSITIONS = 8;
/** Meteora DLMM fee parameters of the simulated pairs (base fee = 10_000 · bin_step · 10 / 1e9). */
const DLMM_MAIN_BIN_STEP = 10;
const DLMM_BIN_STEPS = [20, 25] as const;

export function buildPool(plan: PoolPlan, rng: SimRandom, accounts: Map<string, AccountRecord>): SimPoolInfo {
  switch (plan.dex) {
    case Dex.Amm:
      return buildAmm(plan, accounts);
    case Dex.Whirlpool:
      return buildConcentrated(plan, rng, accounts, WHIRLPOOL);
    case Dex.Clmm:
      return buildConcentrated(plan, rng, accounts, CLMM);
    case Dex.Dlmm:
      return buildDlmm(plan, rng, accounts);
  }
}

// ---- shared

function seededAddress(plan: PoolPlan, what: string): string {
  return base58.encode(seededBytes32(plan.seed, `${plan.dex}:${plan.index}:${what}`));
}

export function programAccount(owner: string, data: Uint8Array): AccountRecord {
  return { lamports: rentExemptMinimum(data.length), owner, data, executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
}

/**
 * A token account record of `token`'s program; wrapped SOL accounts carry the rent reserve and
 * their amount as lamports. Token-2022 accounts are extended: TransferFeeAmount (every account of
 * a mint with a transfer fee must withhold), and ImmutableOwner for associated token accounts.
 */
export function tokenAccountRecord(token: SimToken, owner: string, amount: bigint, associated = false): AccountRecord {
  const mint = token.mint;
  if (token.programId === TOKEN_2022_PROGRAM_ID) {
    const data = encodeExtendedTokenAccount({ mint, owner, amount, withheldAmount: 0n, immutableOwner: associated });
    return { lamports: rentExemptMinimum(data.length), owner: TOKEN_2022_PROGRAM_ID, data, executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
  }
  const reserve = rentExemptMinimum(TOKEN_ACCOUNT_SIZE);
  const native = mint === WSOL_MINT;
  return {
    lamports: native ? reserve + amount : reserve,
    owner: TOKEN_PROGRAM_ID,
    data: encodeTokenAccount({ mint, owner, amount, ...(native ? { nativeReserve: reserve } : {}) }),
    executable: false,
    rentEpoch: RENT_EPOCH_EXEMPT,
  };
}

/** Raw price of A in B (B atoms per A atom) from the reference prices, skewed. */
function rawPrice(a: SimToken, b: SimToken, skew: number): number {
  return (a.referencePriceUsd / b.referencePriceUsd) * 10 ** (b.decimals - a.decimals) * (1 + skew);
}

/** Atoms of `token` worth `usd`. */
function atomsOf(token: SimToken, usd: number): bigint {
  return BigInt(Math.floor((usd / token.referencePriceUsd) * 10 ** token.decimals));
}

function bytesCompare(a: string, b: string): number {
  const x = base58.decodePubkey(a);
  const y = base58.decodePubkey(b);
  for (let i = 0; i < 32; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

// ---- dexa_amm

/**
 * A Raydium AMM v4 pool as the program lays it out: an AmmInfo (dex/amm/amm-info.ts) with the
 * fields `initialize` writes (fees 5/10000 min separate, 25/10000 trade and swap, 12/100 pnl;
 * order_num 7, depth 3, sys_decimal_value 10^max decimals, ...), the canonical authority nonce
 * (its PDA owns the vaults), seeded market keys, and a small need_take_pnl on each side: the vaults
 * hold the reserves plus it, so every reader must subtract it as the program does.
 */
function buildAmm(plan: PoolPlan, accounts: Map<string, AccountRecord>): SimPoolInfo {
  const a = plan.base;
  const b = plan.quote;
  const programId = DEFAULT_PROGRAM_IDS[Dex.Amm];
  const address = seededAddress(plan, 'pool');
  const vaultA = seededAddress(plan, 'vault-a');
  const vaultB = seededAddress(plan, 'vault-b');
  const reserveA = atomsOf(a, plan.tvlUsd / 2);
  const reserveB = BigInt(Math.floor(Number(reserveA) * rawPrice(a, b, plan.priceSkew)));
  const pnlA = reserveA / 20_000n;
  const pnlB = reserveB / 20_000n;
  const sysDecimalValue = 10n ** BigInt(Math.max(a.decimals, b.decimals));
  const data = encodeAmmInfo({
    status: AmmStatus.SwapOnly,
    nonce: BigInt(ammV4CanonicalAuthority(programId).nonce),
    orderNum: 7n,
    depth: 3n,
    coinDecimals: BigInt(a.decimals),
    pcDecimals: BigInt(b.decimals),
    state: 1n,
    resetFlag: 1n,
    volMaxCutRatio: 500n,
    amountWave: (sysDecimalValue * 5n) / 1000n,
    minPriceMultiplier: 1n,
    maxPriceMultiplier: 1_000_000_000n,
    sysDecimalValue,
    minSeparateNumerator: 5n,
    minSeparateDenominator: 10_000n,
    tradeFeeNumerator: 25n,
    tradeFeeDenominator: 10_000n,
    pnlNumerator: 12n,
    pnlDenominator: 100n,
    swapFeeNumerator: 25n,
    swapFeeDenominator: 10_000n,
    needTakePnlCoin: pnlA,
    needTakePnlPc: pnlB,
    poolOpenTime: GENESIS_UNIX_TIME - 3600n,
    coinVault: vaultA,
    pcVault: vaultB,
    coinMint: a.mint,
    pcMint: b.mint,
    lpMint: seededAddress(plan, 'lp-mint'),
    openOrders: seededAddress(plan, 'open-orders'),
    market: seededAddress(plan, 'market'),
    marketProgram: seededAddress(plan, 'market-program'),
    targetOrders: seededAddress(plan, 'target-orders'),
    ammOwner: seededAddress(plan, 'amm-owner'),
    lpAmount: BigInt(Math.floor(Math.sqrt(Number(reserveA) * Number(reserveB)))),
  });
  accounts.set(address, programAccount(programId, data));
  accounts.set(vaultA, tokenAccountRecord(a, RAYDIUM_AMM_AUTHORITY, reserveA + pnlA));
  accounts.set(vaultB, tokenAccountRecord(b, RAYDIUM_AMM_AUTHORITY, reserveB + pnlB));
  return {
    address,
    dex: Dex.Amm,
    label: DEX_LABELS[Dex.Amm],
    programId,
    tokenA: a,
    tokenB: b,
    vaultA,
    vaultB,
    arrays: [],
    tvlUsd: plan.tvlUsd,
  };
}

// ---- concentrated liquidity (Whirlpool, Raydium CLMM)

interface ClKind {
  dex: typeof Dex.Whirlpool | typeof Dex.Clmm;
  ticksPerArray: number;
  sqrtPriceAtTick: (tick: number) => bigint;
  tickAtSqrtPrice: (sqrtPrice: bigint) => number;
}
const WHIRLPOOL: ClKind = {
  dex: Dex.Whirlpool,
  ticksPerArray: WHIRLPOOL_TICK_ARRAY_SIZE,
  sqrtPriceAtTick: whirlpoolSqrtPriceAtTick,
  tickAtSqrtPrice: whirlpoolTickAtSqrtPrice,
};
const CLMM: ClKind = {
  dex: Dex.Clmm,
  ticksPerArray: CLMM_TICK_ARRAY_SIZE,
  sqrtPriceAtTick: raydiumSqrtPriceAtTick,
  tickAtSqrtPrice: raydiumTickAtSqrtPrice,
};

interface Position {
  lower: number;
  upper: number;
  liquidity: bigint;
}

interface TickState {
  net: bigint;
  gross: bigint;
}

const LN_TICK = Math.log(1.0001);

function floorTo(x: number, step: number): number {
  return Math.floor(x / step) * step;
}

/** Liquidity worth `valueB` atoms of token B in [lower, upper] at sqrt price `s` (real units). */
function liquidityForValue(valueB: number, lower: number, upper: number, s: number): number {
  const sa = Math.exp((lower * LN_TICK) / 2);
  const sb = Math.exp((upper * LN_TICK) / 2);
  let amountA = 0;
  let amountB = 0;
  if (s <= sa) amountA = 1 / sa - 1 / sb;
  else if (s >= sb) amountB = sb - sa;
  else {
    amountA = 1 / s - 1 / sb;
    amountB = s - sa;
  }
  return valueB / (amountB + amountA * s * s);
}

function buildConcentrated(plan: PoolPlan, rng: SimRandom, accounts: Map<string, AccountRecord>, kind: ClKind): SimPoolInfo {
  const programId = DEFAULT_PROGRAM_IDS[kind.dex];
  // Both protocols order the mints bytewise: mint a / 0 is the smaller key.
  const [a, b] = bytesCompare(plan.base.mint, plan.quote.mint) < 0 ? [plan.base, plan.quote] : [plan.quote, plan.base];
  const tier =
    kind.dex === Dex.Whirlpool
      ? plan.mainPair
        ? WHIRLPOOL_MAIN_TIER
        : rng.pick(WHIRLPOOL_TIERS)
      : plan.mainPair
        ? CLMM_MAIN_TIER
        : rng.pick(CLMM_TIERS);
  const ts = tier.tickSpacing;
  const price = rawPrice(a, b, plan.priceSkew);
  const s = Math.sqrt(price);
  const sqrtPrice = BigInt(Math.floor(s * 2 ** 64));
  const tick = kind.tickAtSqrtPrice(sqrtPrice);
  const span = ts * kind.ticksPerArray;
  const center = Math.floor(tick / span);
  const eachSide = Math.min(MAX_ARRAYS_EACH_SIDE, Math.max(MIN_ARRAYS_EACH_SIDE, Math.ceil(Math.log(1 + CL_COVERAGE) / LN_TICK / span)));
  const firstArray = Math.max(center - eachSide, Math.ceil(MIN_TICK / span));
  const lastArray = Math.min(center + eachSide, Math.floor(MAX_TICK / span) - 1);
  const lowTick = firstArray * span;
  const highTick = (lastArray + 1) * span - ts;

  // Positions: a wide base, then narrower ranges around the price with random weights.
  const valueB = (plan.tvlUsd / b.referencePriceUsd) * 10 ** b.decimals;
  const positions: Position[] = [];
  const addPosition = (lower: number, upper: number, share: number): void => {
    const liquidity = BigInt(Math.floor(liquidityForValue(valueB * share, lower, upper, s)));
    if (liquidity > 0n) positions.push({ lower, upper, liquidity });
  };
  addPosition(lowTick, highTick, CL_BASE_SHARE);
  const weights = Array.from({ length: CL_NARROW_POSITIONS }, () => rng.uniform(0.2, 1));
  const weightSum = weights.reduce((x, y) => x + y, 0);
  for (const w of weights) {
    const halfTicks = Math.log(1 + rng.logUniform(0.003, 0.2)) / LN_TICK;
    const middle = tick + rng.normal() * halfTicks * 0.3;
    const lower = Math.max(lowTick, floorTo(middle - halfTicks, ts));
    const upper = Math.min(highTick, Math.max(lower + ts, floorTo(middle + halfTicks, ts) + ts));
    addPosition(lower, upper, ((1 - CL_BASE_SHARE) * w) / weightSum);
  }

  const ticks = new Map<number, TickState>();
  const touch = (index: number, net: bigint, gross: bigint): void => {
    const t = ticks.get(index) ?? { net: 0n, gross: 0n };
    t.net += net;
    t.gross += gross;
    ticks.set(index, t);
  };
  let liquidity = 0n;
  let amountA = 0n;
  let amountB = 0n;
  for (const p of positions) {
    touch(p.lower, p.liquidity, p.liquidity);
    touch(p.upper, -p.liquidity, p.liquidity);
    const sqrtLower = kind.sqrtPriceAtTick(p.lower);
    const sqrtUpper = kind.sqrtPriceAtTick(p.upper);
    if (tick < p.lower) {
      amountA += amountDeltaA(sqrtLower, sqrtUpper, p.liquidity, true);
    } else if (tick >= p.upper) {
      amountB += amountDeltaB(sqrtLower, sqrtUpper, p.liquidity, true);
    } else {
      liquidity += p.liquidity;
      amountA += amountDeltaA(sqrtPrice, sqrtUpper, p.liquidity, true);
      amountB += amountDeltaB(sqrtLower, sqrtPrice, p.liquidity, true);
    }
  }

  const address = seededAddress(plan, 'pool');
  const addressBytes = base58.decodePubkey(address);
  const arrays: PoolArrayAccount[] = [];
  const bitmap: bigint[] = new Array<bigint>(16).fill(0n);
  for (let index = firstArray; index <= lastArray; index++) {
    const start = index * span;
    const slots = Array.from({ length: kind.ticksPerArray }, (_, slot) => {
      const t = ticks.get(start + slot * ts);
      return t === undefined || t.gross === 0n
        ? { initialized: false, liquidityNet: 0n, liquidityGross: 0n }
        : { initialized: true, liquidityNet: t.net, liquidityGross: t.gross };
    });
    const initialized = slots.some((t) => t.initialized);
    let arrayAddress: string;
    let data: Uint8Array;
    if (kind.dex === Dex.Whirlpool) {
      // Whirlpool swaps walk consecutive arrays: every array of the window exists.
      arrayAddress = whirlpoolTickArrayAddress(programId, address, start);
      data = encodeWhirlpoolTickArray({ pool: address, startTickIndex: start, ticks: slots });
      expectSize(data, WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE, Dex.Whirlpool, 'TickArray', arrayAddress);
    } else {
      // Raydium creates arrays with initialized ticks only and marks them in the pool's bitmap.
      if (!initialized) continue;
      arrayAddress = clmmTickArrayAddress(programId, address, start);
      data = encodeClmmTickArray({ pool: address, startTickIndex: start, tickSpacing: ts, ticks: slots });
      expectSize(data, CLMM_TICK_ARRAY_ACCOUNT_SIZE, Dex.Clmm, 'TickArrayState', arrayAddress);
      setTickArrayBit(bitmap, start, ts, true);
    }
    accounts.set(arrayAddress, programAccount(programId, data));
    arrays.push({ key: start, address: arrayAddress });
  }

  let vaultA: string;
  let vaultB: string;
  let info: Pick<SimPoolInfo, 'ammConfig'>;
  if (kind.dex === Dex.Whirlpool) {
    vaultA = seededAddress(plan, 'vault-a');
    vaultB = seededAddress(plan, 'vault-b');
    const staticFields: Partial<WhirlpoolFields> = {
      whirlpoolsConfig: WHIRLPOOLS_CONFIG,
      bump: 255,
      feeTierIndex: ts,
      protocolFeeRate: WHIRLPOOL_PROTOCOL_FEE_RATE,
      rewardLastUpdatedTimestamp: GENESIS_UNIX_TIME,
    };
    const data = encodeWhirlpool({
      ...staticFields,
      tokenA: a.mint,
      tokenB: b.mint,
      vaultA,
      vaultB,
      sqrtPrice,
      tick,
      tickSpacing: ts,
      liquidity,
      feeRate: tier.feeRate,
    });
    expectSize(data, WHIRLPOOL_ACCOUNT_SIZE, Dex.Whirlpool, 'Whirlpool', address);
    accounts.set(address, programAccount(programId, data));
    info = {};
  } else {
    vaultA = findProgramAddress(['pool_vault', addressBytes, base58.decodePubkey(a.mint)], programId).address;
    vaultB = findProgramAddress(['pool_vault', addressBytes, base58.decodePubkey(b.mint)], programId).address;
    const ammConfig = clmmAmmConfig(tier, accounts, plan.seed);
    const staticFields: Partial<ClmmPoolFields> = {
      bump: 255,
      owner: base58.encode(seededBytes32(plan.seed, 'clmm-pool-owner')),
      observationKey: seededAddress(plan, 'observation'),
      decimalsA: a.decimals,
      decimalsB: b.decimals,
      status: 0,
      feeOn: 0,
      tickArrayBitmap: bitmap,
      openTime: GENESIS_UNIX_TIME,
    };
    const data = encodeClmmPool({
      ...staticFields,
      tokenA: a.mint,
      tokenB: b.mint,
      vaultA,
      vaultB,
      ammConfig,
      sqrtPrice,
      tick,
      tickSpacing: ts,
      liquidity,
    });
    expectSize(data, CLMM_POOL_ACCOUNT_SIZE, Dex.Clmm, 'PoolState', address);
    accounts.set(address, programAccount(programId, data));
    info = { ammConfig };
  }
  accounts.set(vaultA, tokenAccountRecord(a, address, amountA));
  accounts.set(vaultB, tokenAccountRecord(b, address, amountB));
  return {
    address,
    dex: kind.dex,
    label: DEX_LABELS[kind.dex],
    programId,
    tokenA: a,
    tokenB: b,
    vaultA,
    vaultB,
    arrays,
    tickSpacing: ts,
    ticksPerArray: kind.ticksPerArray,
    tvlUsd: plan.tvlUsd,
    ...info,
  };
}

/** The AmmConfig of a Raydium fee tier (PDA ["amm_config", index u16 BE]), created once. */
function clmmAmmConfig(tier: ClTier, accounts: Map<string, AccountRecord>, seed: number): string {
  const programId = DEFAULT_PROGRAM_IDS[Dex.Clmm];
  const index = tier.index ?? 0;
  const { address, bump } = clmmAmmConfigAddress(programId, index);
  if (!accounts.has(address)) {
    const owner = base58.encode(seededBytes32(seed, 'clmm-config-owner'));
    const data = encodeClmmAmmConfig({
      bump,
      index,
      owner,
      protocolFeeRate: CLMM_PROTOCOL_FEE_RATE,
      tradeFeeRate: tier.feeRate,
      tickSpacing: tier.tickSpacing,
      fundFeeRate: CLMM_FUND_FEE_RATE,
      fundOwner: owner,
    });
    expectSize(data, CLMM_AMM_CONFIG_ACCOUNT_SIZE, Dex.Clmm, 'AmmConfig', address);
    accounts.set(address, programAccount(programId, data));
  }
  return address;
}

// ---- dexb_dlmm

function buildDlmm(plan: PoolPlan, rng: SimRandom, accounts: Map<string, AccountRecord>): SimPoolInfo {
  const programId = DEFAULT_PROGRAM_IDS[Dex.Dlmm];
  const x = plan.base;
  const y = plan.quote;
  const binStep = plan.mainPair ? DLMM_MAIN_BIN_STEP : rng.pick(DLMM_BIN_STEPS);
  const lnStep = Math.log(1 + binStep / 10_000);
  const activeId = Math.max(MIN_BIN_ID, Math.min(MAX_BIN_ID, Math.round(Math.log(rawPrice(x, y, plan.priceSkew)) / lnStep)));
  const reach = Math.ceil(Math.log(1 + DLMM_COVERAGE) / lnStep);
  // Liquidity shape: a flat floor plus a bell around the active bin ("spot" + "curve" strategies).
  const weightOf = (d: number): number => 0.3 + 2 * Math.exp(-((d / (reach / 4)) ** 2));
  let weightSum = 0;
  for (let d = -reach; d <= reach; d++) weightSum += weightOf(d);

  const address = seededAddress(plan, 'pool');
  const addressBytes = base58.decodePubkey(address);
  const firstArray = binArrayIndexOf(activeId - reach);
  const lastArray = binArrayIndexOf(activeId + reach);
  let bitmap: bigint[] = new Array<bigint>(16).fill(0n);
  const arrays: PoolArrayAccount[] = [];
  let totalX = 0n;
  let totalY = 0n;
  for (let index = firstArray; index <= lastArray; index++) {
    const bins: Bin[] = [];
    for (let i = 0; i < 70; i++) {
      const id = index * 70 + i;
      const d = id - activeId;
      if (d < -reach || d > reach) {
        bins.push({ id, amountX: 0n, amountY: 0n, price: 0n, liquiditySupply: 0n });
        continue;
      }
      const usd = (plan.tvlUsd * weightOf(d)) / weightSum;
      const amountX = d > 0 ? atomsOf(x, usd) : d === 0 ? atomsOf(x, usd / 2) : 0n;
      const amountY = d < 0 ? atomsOf(y, usd) : d === 0 ? atomsOf(y, usd / 2) : 0n;
      const price = binPrice(id, binStep);
      totalX += amountX;
      totalY += amountY;
      // Meteora's bin liquidity: price · x + y, in Q64.64.
      bins.push({ id, amountX, amountY, price, liquiditySupply: price * amountX + (amountY << 64n) });
    }
    const arrayAddress = dlmmBinArrayAddress(programId, address, index);
    const data = encodeBinArray({ pool: address, index: BigInt(index), bins });
    expectSize(data, DLMM_BIN_ARRAY_SIZE, Dex.Dlmm, 'BinArray', arrayAddress);
    accounts.set(arrayAddress, programAccount(programId, data));
    arrays.push({ key: index, address: arrayAddress });
    bitmap = withBinArrayBit(bitmap, index, true);
  }

  const vaultA = findProgramAddress([addressBytes, base58.decodePubkey(x.mint)], programId).address;
  const vaultB = findProgramAddress([addressBytes, base58.decodePubkey(y.mint)], programId).address;
  const lbPair: DlmmLbPair = {
    dex: Dex.Dlmm,
    tokenA: x.mint,
    tokenB: y.mint,
    activeId,
    binStep,
    status: 0,
    reserveX: vaultA,
    reserveY: vaultB,
    parameters: {
      baseFactor: 10_000,
      filterPeriod: 30,
      decayPeriod: 600,
      reductionFactor: 5000,
      variableFeeControl: 7500,
      maxVolatilityAccumulator: 150_000,
      minBinId: MIN_BIN_ID,
      maxBinId: MAX_BIN_ID,
      protocolShare: 500,
      baseFeePowerFactor: 0,
      functionType: FunctionType.LiquidityMining,
      collectFeeMode: CollectFeeMode.InputOnly,
    },
    vParameters: { volatilityAccumulator: 0, volatilityReference: 0, indexReference: activeId, lastUpdateTimestamp: GENESIS_UNIX_TIME },
    binArrayBitmap: bitmap,
    pairType: PairType.Permissionless,
    activationType: 0,
    activationPoint: 0n,
    rewardMints: ['11111111111111111111111111111111', '11111111111111111111111111111111'],
    oracle: findProgramAddress(['oracle', addressBytes], programId).address,
    protocolFeeX: 0n,
    protocolFeeY: 0n,
    lastUpdatedAt: GENESIS_UNIX_TIME,
    tokenXProgramFlag: 0,
    tokenYProgramFlag: 0,
    version: 0,
  };
  const data = encodeLbPair(lbPair);
  expectSize(data, DLMM_LB_PAIR_SIZE, Dex.Dlmm, 'LbPair', address);
  accounts.set(address, programAccount(programId, data));
  accounts.set(vaultA, tokenAccountRecord(x, address, totalX));
  accounts.set(vaultB, tokenAccountRecord(y, address, totalY));
  return {
    address,
    dex: Dex.Dlmm,
    label: DEX_LABELS[Dex.Dlmm],
    programId,
    tokenA: x,
    tokenB: y,
    vaultA,
    vaultB,
    arrays,
    tvlUsd: plan.tvlUsd,
  };
}
