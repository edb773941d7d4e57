import { keypairFromSeed } from '../chain/index.js';
import { type Dex, DEX_KINDS } from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { TOKEN_PROGRAM_ID, USDC_MINT, WSOL_MINT, rentExemptMinimum, RENT_EPOCH_EXEMPT } from './known-accounts.js';
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
/** Mint authority of USDC on mainnet; the other mints get seeded ones. */
const USDC_MINT_AUTHORITY = 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG';
/** Supply written into every Mint account (raw atoms): fixed, large, and never checked. */
const MINT_SUPPLY_WHOLE_TOKENS = 10_000_000_000n;

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
  return { tokens, pools, accounts };
}

function mintAccount(seed: number, token: SimToken): AccountRecord {
  const authority =
    token.mint === WSOL_MINT ? null : token.mint === USDC_MINT ? USDC_MINT_AUTHORITY : keypairFromSeed(seededBytes32(seed, `mint-authority:${token.mint}`)).address;
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
