import { keypairFromSeed, type Keypair } from '../chain/index.js';
import { Dex, DEX_KINDS, encodeMint as encodeExtendedMint, type TransferFeeConfig } from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, USDC_MINT, WSOL_MINT, rentExemptMinimum, RENT_EPOCH_EXEMPT } from './known-accounts.js';
import type { SimToken } from './market-view.js';
import { buildPool, type PoolPlan, type SimPoolInfo } from './pool-genesis.js';
import { SimRandom, seededBytes32 } from './prng.js';
import { encodeMint, MINT_SIZE } from './spl-token.js';

/**
 * The simulated market at genesis: the tokens (wrapped SOL and USDC under their mainnet mints, and
 * `tokens` more with seeded keys, symbols, decimals and reference prices), their Mint accounts,
 * and `poolsPerKind` pools of each of the four kinds with all their accounts (pool-genesis.ts).
 *
 * Pairs: SOL/USDC in every kind; the other tokens paired with SOL, with USDC and with each other
 * in rounds, spread over the kinds, so every token has a pool and 2-hop routes (token → SOL →
 * USDC, token → token → SOL) exist. Everything follows from the seed.
 *
 * After all of these (so that every other token, account and pool stays what the seed made it
 * before): TOLL, a Token-2022 mint with the TransferFeeConfig extension (tollTransferFees), and
 * two pools that trade it, a dexa_amm TOLL/USDC and a dexc_whirlpool TOLL/SOL, whose vaults and
 * the traders' TOLL accounts are Token-2022 accounts that withhold the fee.
 */

export interface MarketSettings {
  seed: number;
  tokens: number;
  poolsPerKind: number;
}

export interface MarketGenesis {
  tokens: SimToken[];
  pools: SimPoolInfo[];
  /** Every account the market owns: mints, pools, tick/bin arrays, AmmConfigs, vaults. */
  accounts: Map<string, AccountRecord>;
}

/** Wrapped SOL and USDC: the two tokens every simulated market has. */
export const SOL_TOKEN: SimToken = Object.freeze({ mint: WSOL_MINT, symbol: 'SOL', decimals: 9, referencePriceUsd: 150 });
export const USDC_TOKEN: SimToken = Object.freeze({ mint: USDC_MINT, symbol: 'USDC', decimals: 6, referencePriceUsd: 1 });

const SYMBOLS = [
  'TIDE', 'KELP', 'REEF', 'CORAL', 'SHOAL', 'PEARL', 'BRINE', 'DRIFT', 'SURF', 'WAVE', 'FOAM', 'GULL',
  'CRAB', 'SQUID', 'MARLIN', 'SKATE', 'NAUTI', 'ANCHOR', 'LAGOON', 'ATOLL', 'KRILL', 'URCHIN', 'ORCAS', 'DUNE',
];
const DECIMALS = [5, 6, 6, 8, 9, 9];
/** Reference prices of the other tokens, USD per whole token, spread log-uniformly. */
const MIN_TOKEN_PRICE_USD = 0.0005;
const MAX_TOKEN_PRICE_USD = 250;
/** Supply written into every Mint account (raw atoms): fixed, large, and never checked. */
const MINT_SUPPLY_WHOLE_TOKENS = 10_000_000_000n;

/** The Token-2022 token of every market: its symbol, decimals and reference price. */
export const TOLL_SYMBOL = 'TOLL';
const TOLL_DECIMALS = 6;
const TOLL_PRICE_USD = 0.85;
/** The epoch from which TOLL's newer transfer fee applies. */
export const TOLL_NEWER_FEE_EPOCH = 2n;
/**
 * TOLL's transfer fees: 1 % capped at 5,000 TOLL, then from epoch 2 on 1.5 % capped at 7,500 TOLL
 * (as after a SetTransferFee by its fee authority).
 */
export function tollTransferFees(seed: number): TransferFeeConfig {
  const whole = 10n ** BigInt(TOLL_DECIMALS);
  return {
    transferFeeConfigAuthority: keypairFromSeed(seededBytes32(seed, 'toll:fee-authority')).address,
    withdrawWithheldAuthority: keypairFromSeed(seededBytes32(seed, 'toll:withdraw-authority')).address,
    withheldAmount: 0n,
    olderTransferFee: { epoch: 0n, maximumFee: 5_000n * whole, transferFeeBasisPoints: 100 },
    newerTransferFee: { epoch: TOLL_NEWER_FEE_EPOCH, maximumFee: 7_500n * whole, transferFeeBasisPoints: 150 },
  };
}
/** Pool index of the TOLL pools in their kind (seeded addresses apart from the regular pools'). */
const TOLL_POOL_INDEX = 1000;

/** The Token-2022 token of a market seeded `seed`. */
export function tollToken(seed: number): SimToken {
  return {
    mint: keypairFromSeed(seededBytes32(seed, 'mint:token-2022:TOLL')).address,
    symbol: TOLL_SYMBOL,
    decimals: TOLL_DECIMALS,
    referencePriceUsd: TOLL_PRICE_USD,
    programId: TOKEN_2022_PROGRAM_ID,
  };
}

export function createTokens(seed: number, count: number): SimToken[] {
  const rng = SimRandom.derive(seed, 'market:tokens');
  const symbols = rng.shuffled(SYMBOLS);
  const tokens: SimToken[] = [SOL_TOKEN, USDC_TOKEN];
  for (let i = 0; i < count; i++) {
    const base = symbols[i % symbols.length]!;
    const symbol = i < symbols.length ? base : `${base}${Math.floor(i / symbols.length) + 1}`;
    const mint = keypairFromSeed(seededBytes32(seed, `mint:${i}`)).address;
    tokens.push({
      mint,
      symbol,
      decimals: rng.pick(DECIMALS),
      referencePriceUsd: roundPrice(rng.logUniform(MIN_TOKEN_PRICE_USD, MAX_TOKEN_PRICE_USD)),
    });
  }
  return tokens;
}

/** Four significant digits: reference prices read like prices. */
function roundPrice(price: number): number {
  return Number(price.toPrecision(4));
}

/**
 * The pairs of the pools, in order: SOL/USDC first for each kind, then the other tokens in rounds
 * (token/SOL, token/USDC, token/next token), dealt to the kinds in turn.
 */
export function planPairs(tokens: readonly SimToken[], poolsPerKind: number): Map<Dex, [SimToken, SimToken][]> {
  const others = tokens.slice(2);
  const sequence: [SimToken, SimToken][] = [];
  const needed = DEX_KINDS.length * (poolsPerKind - 1);
  for (let round = 0; sequence.length < needed; round++) {
    if (others.length === 0) {
      sequence.push([SOL_TOKEN, USDC_TOKEN]);
      continue;
    }
    for (let i = 0; i < others.length && sequence.length < needed; i++) {
      const token = others[i]!;
      const kind = round % 3;
      if (kind === 0) sequence.push([token, SOL_TOKEN]);
      else if (kind === 1) sequence.push([token, USDC_TOKEN]);
      else sequence.push(others.length > 1 ? [token, others[(i + 1) % others.length]!] : [token, SOL_TOKEN]);
    }
  }
  const plan = new Map<Dex, [SimToken, SimToken][]>();
  for (const dex of DEX_KINDS) plan.set(dex, [[SOL_TOKEN, USDC_TOKEN]]);
  sequence.forEach((pair, i) => plan.get(DEX_KINDS[i % DEX_KINDS.length]!)!.push(pair));
  return plan;
}

/** Builds the whole market at genesis. */
export function createMarket(settings: MarketSettings): MarketGenesis {
  const tokens = createTokens(settings.seed, settings.tokens);
  const toll = tollToken(settings.seed);
  tokens.push(toll);
  const accounts = new Map<string, AccountRecord>();
  for (const token of tokens) accounts.set(token.mint, mintAccount(settings.seed, token));

  const rng = SimRandom.derive(settings.seed, 'market:pools');
  const pools: SimPoolInfo[] = [];
  const plan = planPairs(tokens, settings.poolsPerKind);
  for (const dex of DEX_KINDS) {
    const pairs = plan.get(dex)!;
    for (let i = 0; i < pairs.length; i++) {
      const [base, quote] = pairs[i]!;
      const solUsdc = base.mint === WSOL_MINT && quote.mint === USDC_MINT;
      const poolPlan: PoolPlan = {
        dex,
        index: i,
        seed: settings.seed,
        base,
        quote,
        // SOL/USDC pools are the deepest, as on mainnet.
        tvlUsd: solUsdc ? rng.logUniform(2_000_000, 6_000_000) : rng.logUniform(300_000, 2_500_000),
        // Each pool starts slightly off the reference price, so arbitrage gaps exist from slot 0.
        priceSkew: rng.uniform(-0.004, 0.004),
        mainPair: solUsdc,
      };
      pools.push(buildPool(poolPlan, rng, accounts));
    }
  }
  // The TOLL pools, from their own stream: the draws above are what they were without them.
  const tollRng = SimRandom.derive(settings.seed, 'market:token-2022-pools');
  for (const [dex, quote] of [
    [Dex.Amm, USDC_TOKEN],
    [Dex.Whirlpool, SOL_TOKEN],
  ] as const) {
    const plan: PoolPlan = {
      dex,
      index: TOLL_POOL_INDEX,
      seed: settings.seed,
      base: toll,
      quote,
      tvlUsd: tollRng.logUniform(600_000, 1_500_000),
      priceSkew: tollRng.uniform(-0.004, 0.004),
      mainPair: false,
    };
    pools.push(buildPool(plan, tollRng, accounts));
  }
  return { tokens, pools, accounts };
}

/**
 * The mint authority the simulator holds for `mint` (every mint but wrapped SOL, which has none;
 * USDC's too, in place of mainnet's): its token faucet signs MintTo with it (faucet.ts).
 */
export function mintAuthorityKeypair(seed: number, mint: string): Keypair {
  return keypairFromSeed(seededBytes32(seed, `mint-authority:${mint}`));
}

function mintAccount(seed: number, token: SimToken): AccountRecord {
  const authority = token.mint === WSOL_MINT ? null : mintAuthorityKeypair(seed, token.mint).address;
  if (token.programId === TOKEN_2022_PROGRAM_ID) {
    const data = encodeExtendedMint({
      programId: TOKEN_2022_PROGRAM_ID,
      mintAuthority: authority,
      supply: MINT_SUPPLY_WHOLE_TOKENS * 10n ** BigInt(token.decimals),
      decimals: token.decimals,
      freezeAuthority: null,
      transferFeeConfig: tollTransferFees(seed),
    });
    return { lamports: rentExemptMinimum(data.length), owner: TOKEN_2022_PROGRAM_ID, data, executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
  }
  return {
    lamports: rentExemptMinimum(MINT_SIZE),
    owner: TOKEN_PROGRAM_ID,
    data: encodeMint({
      mintAuthority: authority,
      supply: MINT_SUPPLY_WHOLE_TOKENS * 10n ** BigInt(token.decimals),
      decimals: token.decimals,
      freezeAuthority: null,
    }),
    executable: false,
    rentEpoch: RENT_EPOCH_EXEMPT,
  };
}
