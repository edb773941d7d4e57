import { getBase64EncodedWireTransaction, getTransactionDecoder, signTransaction, createKeyPairFromPrivateKeyBytes } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  USDC_MINT,
  WSOL_MINT,
  associatedTokenAddress,
  buildFittedTransaction,
  createAssociatedTokenIdempotentInstruction,
  keypairSeed,
  systemTransferInstruction,
  tokenTransferInstruction,
  type Keypair,
} from '../chain/index.js';
import { createDecoderRegistry, Dex, DEX_KINDS } from '../dex/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, ChainClient, OperatorLookupTables, RpcClient } from '../rpc/index.js';
import { openPriceGap, type SimEndpoints, type Simulator, type Trader } from '../sim/index.js';
import { strangerKeypair } from '../sim/testing/chain-fixtures.js';
import { isQuoteApiError, type QuoteApiError, QuoteErrorCode, parseSwapRequest, type QuoteResponse, type SwapRequest } from '../swap-api/index.js';
import { SwapBuilder } from './swap-builder.js';

let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: RpcClient;
let chain: ChainClient;
let builder: SwapBuilder;

beforeAll(async () => {
  sim = manualSimulator(61);
  endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  chain = new ChainClient({ url: endpoints.rpc, commitment: 'processed' });
  const fetcher = new AccountFetcher(rpc);
  const loader = new RpcPoolLoader({ fetcher, registry: createDecoderRegistry(), readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
  // The operator's tables: the simulator keeps one per pool with its swap accounts, and a shared one.
  const lookupTables = new OperatorLookupTables({ reader: fetcher, addresses: sim.chain.genesis.lookupTables.tables.map((t) => t.address) });
  builder = new SwapBuilder({ loader, registry: createDecoderRegistry(), accounts: fetcher, chain, lookupTables });
}, 60_000);

afterAll(async () => {
  await chain?.close();
  await rpc?.close();
  await sim?.close();
});

/** A quote of the simulator's own quote API (the public swap API's shape), as a client gets one. */
async function quoteOf(query: Record<string, string>): Promise<QuoteResponse> {
  const res = await fetch(`${endpoints.http}/swap/v1/quote?${new URLSearchParams(query).toString()}`);
  expect(res.status).toBe(200);
  return (await res.json()) as QuoteResponse;
}

function request(user: string, quote: QuoteResponse, extra: Record<string, unknown> = {}): SwapRequest {
  return parseSwapRequest(JSON.parse(JSON.stringify({ userPublicKey: user, quoteResponse: quote, ...extra })));
}

/** Signs the unsigned transaction with @solana/kit, as a wallet does, and lands it on the simulator. */
async function signAndLand(base64: string, signer: Keypair): Promise<{ err: unknown }> {
  const kitKeys = await createKeyPairFromPrivateKeyBytes(keypairSeed(signer));
  const tx = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
  const signed = await signTransaction([kitKeys], tx);
  const wire = Buffer.from(getBase64EncodedWireTransaction(signed), 'base64');
  const simulated = await chain.simulateTransaction(wire);
  if (simulated.err !== null) return { err: simulated.err };
  const signature = await chain.sendTransaction(wire);
  for (let i = 0; i < 5; i++) {
    sim.chain.advanceSlot();
    const [status] = await chain.getSignatureStatuses([signature]);
    if (status !== null && status !== undefined) return { err: status.err };
  }
  return { err: 'not landed' };
}

function tokenBalance(owner: string, mint: string): bigint {
  return sim.chain.getTokenBalance(associatedTokenAddress(owner, mint))?.amount ?? 0n;
}

function trader(i: number): Trader {
  return sim.chain.genesis.actors.traders[i]!;
}

let seeds = 100;
/**
 * A wallet of its own (the simulator's traders also trade in its flow, so their balances move on
 * their own): SOL for fees and swaps, and `usdc` USDC when asked, from trader 0, landed.
 */
async function freshUser(usdc = 0n): Promise<Keypair> {
  const user = strangerKeypair(seeds++);
  const funder = trader(0);
  const instructions = [systemTransferInstruction(funder.keypair.address, user.address, 5_000_000_000n)];
  if (usdc > 0n) {
    instructions.push(
      createAssociatedTokenIdempotentInstruction({ payer: funder.keypair.address, owner: user.address, mint: USDC_MINT }),
      tokenTransferInstruction(associatedTokenAddress(funder.keypair.address, USDC_MINT), associatedTokenAddress(user.address, USDC_MINT), funder.keypair.address, usdc),
    );
  }
  const tx = buildFittedTransaction({ payer: funder.keypair, recentBlockhash: sim.chain.latestBlockhash().blockhash, instructions });
  sim.chain.sendTransaction(tx.bytes);
  sim.chain.advanceSlot();
  return user;
}

describe('swaps built from a swap API quote, re-validated on the current state', () => {
  it.each(DEX_KINDS.map((dex) => ({ dex })))('SOL → USDC through a $dex pool: wraps SOL, lands, pays at least the quote\'s minimum', async ({ dex }) => {
    const pool = sim.chain.pools().find((p) => p.dex === dex && p.transferFees === undefined && new Set([p.pool.tokenA, p.pool.tokenB]).has(WSOL_MINT) && new Set([p.pool.tokenA, p.pool.tokenB]).has(USDC_MINT));
    if (pool === undefined) return; // the seed has no SOL/USDC pool of this kind
    const user = await freshUser();
    const label = { [Dex.Amm]: 'Raydium', [Dex.Clmm]: 'Raydium CLMM', [Dex.Whirlpool]: 'Whirlpool', [Dex.Dlmm]: 'Meteora DLMM' }[dex];
    const quote = await quoteOf({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '100000000', slippageBps: '50', onlyDirectRoutes: 'true', dexes: label });
    expect(quote.routePlan[0]!.swapInfo.ammKey).toBe(pool.address);
    const built = await builder.transaction(request(user.address, quote));
    expect((await signAndLand(built.swapTransaction, user)).err).toBeNull();
    // The user had no USDC account: it was created, and holds at least the quote's minimum.
    expect(tokenBalance(user.address, USDC_MINT) >= BigInt(quote.otherAmountThreshold)).toBe(true);
    // The wSOL account is closed afterwards, and the user paid the 0.1 SOL and fees, nothing more.
    expect(sim.chain.getAccount(associatedTokenAddress(user.address, WSOL_MINT))).toBeNull();
    const spent = 5_000_000_000n - sim.chain.getAccount(user.address)!.lamports;
    expect(spent >= 100_000_000n && spent < 100_000_000n + 3_000_000n).toBe(true);
  });

  it('a two-hop route, and a user without the output account: it is created', async () => {
    const user = await freshUser(50_000_000n);
    const tokens = sim.chain.genesis.market.tokens.map((t) => t.mint).filter((m) => m !== WSOL_MINT && m !== USDC_MINT);
    let quote: QuoteResponse | undefined;
    for (const out of tokens) {
      const q = await quoteOf({ inputMint: USDC_MINT, outputMint: out, amount: '5000000', slippageBps: '100' });
      if (q.routePlan.length === 2) {
        quote = q;
        break;
      }
    }
    if (quote === undefined) throw new Error('the simulator quoted no two-hop route');
    const ata = associatedTokenAddress(user.address, quote.outputMint);
    const instructions = await builder.instructions(request(user.address, quote));
    expect(instructions.swapInstructions).toHaveLength(2);
    expect(instructions.setupInstructions.at(-1)).toEqual(instructions.swapInstructions[0]);
    // Two hops do not fit a packet without the operator's tables: the answer names the tables used.
    expect(instructions.addressLookupTableAddresses.length).toBeGreaterThan(0);
    const built = await builder.transaction(request(user.address, quote));
    expect((await signAndLand(built.swapTransaction, user)).err).toBeNull();
    expect(sim.chain.getAccount(ata)).not.toBeNull();
    // Hop 2 sells hop 1's minimum: the transaction guarantees its own (compounded) bound, and the
    // intermediate token hop 1 gave above its minimum stays with the user.
    expect(BigInt(built.otherAmountThreshold) <= BigInt(quote.otherAmountThreshold)).toBe(true);
    expect(tokenBalance(user.address, quote.outputMint) >= BigInt(built.otherAmountThreshold)).toBe(true);
    const intermediate = quote.routePlan[0]!.swapInfo.outputMint;
    expect(tokenBalance(user.address, intermediate)).toBeGreaterThan(0n);
  });

  it('ExactOut USDC → SOL: buys the amount, unwraps it', async () => {
    const user = await freshUser(50_000_000n);
    const quote = await quoteOf({ inputMint: USDC_MINT, outputMint: WSOL_MINT, amount: '20000000', swapMode: 'ExactOut', slippageBps: '100' });
    const built = await builder.transaction(request(user.address, quote, { computeUnitPriceMicroLamports: 0 }));
    expect((await signAndLand(built.swapTransaction, user)).err).toBeNull();
    // The bought 0.02 SOL arrived as SOL (the wSOL account created for it, then closed): less
    // the fee and the rent of the account, which its close returned.
    const gained = sim.chain.getAccount(user.address)!.lamports - 5_000_000_000n;
    expect(gained).toBe(20_000_000n - 5_000n);
    expect(sim.chain.getAccount(associatedTokenAddress(user.address, WSOL_MINT))).toBeNull();
    // It paid at most the quote's maximum input.
    expect(50_000_000n - tokenBalance(user.address, USDC_MINT) <= BigInt(quote.otherAmountThreshold)).toBe(true);
  });

  it('refuses a quote older than the limit, naming its age', async () => {
    const quote = await quoteOf({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000', slippageBps: '50' });
    for (let i = 0; i < 3; i++) sim.chain.advanceSlot();
    const strict = new SwapBuilder({ ...(builder as unknown as { options: ConstructorParameters<typeof SwapBuilder>[0] }).options, maxQuoteAgeSlots: 1 });
    const err = await strict.transaction(request(trader(0).keypair.address, quote)).then(() => undefined, (e: unknown) => e);
    expect(isQuoteApiError(err)).toBe(true);
    expect((err as QuoteApiError).context.errorCode).toBe(QuoteErrorCode.QuoteExpired);
    expect((err as QuoteApiError).message).toMatch(/the quote is \d+ slots old \(about [\d.]+ s/);
  });

  it('refuses a quote the market has moved past, naming what the route gives now', async () => {
    const quote = await quoteOf({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000', slippageBps: '10', onlyDirectRoutes: 'true' });
    openPriceGap(sim.chain, { pool: quote.routePlan[0]!.swapInfo.ammKey, gapBps: 300, direction: 'down' });
    sim.chain.advanceSlot();
    const err = await builder.transaction(request(trader(3).keypair.address, quote)).then(() => undefined, (e: unknown) => e);
    expect((err as QuoteApiError).context.errorCode).toBe(QuoteErrorCode.SlippageToleranceExceeded);
    expect((err as QuoteApiError).message).toContain(`below the quote's minimum ${quote.otherAmountThreshold}`);
  });

  it('refuses a route whose pool does not trade the hop the quote says', async () => {
    const quote = await quoteOf({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000', slippageBps: '50', onlyDirectRoutes: 'true' });
    const other = sim.chain.pools().find((p) => !(new Set([p.pool.tokenA, p.pool.tokenB]).has(WSOL_MINT) && new Set([p.pool.tokenA, p.pool.tokenB]).has(USDC_MINT)))!;
    quote.routePlan[0]!.swapInfo.ammKey = other.address;
    const err = await builder.transaction(request(trader(0).keypair.address, quote)).then(() => undefined, (e: unknown) => e);
    expect((err as QuoteApiError).context.errorCode).toBe(QuoteErrorCode.InvalidRequest);
    expect((err as QuoteApiError).message).toContain(`pool ${other.address} trades`);
  });
});
