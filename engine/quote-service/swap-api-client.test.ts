import { ResponseError, createJupiterApiClient, type QuoteResponse, type SwapApi } from '@jup-ag/api';
import { createKeyPairFromPrivateKeyBytes, getBase64EncodedWireTransaction, getTransactionDecoder, signTransaction } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  USDC_MINT,
  WSOL_MINT,
  associatedTokenAddress,
  buildFittedTransaction,
  keypairSeed,
  systemTransferInstruction,
  type InstructionInput,
  type Keypair,
} from '../chain/index.js';
import { createLogger } from '../obs/logger.js';
import { poolStateOfLoaded } from '../cache/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { EpochClock, RpcPoolLoader } from '../pools/index.js';
import { loadConfig } from '../config/index.js';
import { createSimulator, simSchema } from '../sim/index.js';
import { AccountFetcher, ChainClient, RpcClient } from '../rpc/index.js';
import { strangerKeypair } from '../sim/testing/chain-fixtures.js';
import { defaultQuoteConfig } from './quote-config.js';
import { createQuoteCache, createQuoteService, type QuoteService } from './quote-service.js';

/**
 * The official Jupiter client (@jup-ag/api) against tidepool's swap API, as a trading team points
 * it at a self-hosted one: quoteGet, swapPost and swapInstructionsPost unchanged, the transaction
 * signed with @solana/kit as a wallet does and landed on the simulator.
 */

// No generated flow: the cache is filled once, as a scanner would, and must stay the chain's state.
const sim = createSimulator(
  loadConfig(simSchema, { env: {}, flags: { seed: '62', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '2', 'tx-rate': '0' } }).values,
  { manual: true, logger: createLogger({ name: 'swap-api-client-sim', level: 'silent' }) },
);
const logger = createLogger({ name: 'swap-api-client-test', level: 'silent' });
let service: QuoteService;
let bare: QuoteService;
let chain: ChainClient;
let api: SwapApi;
let base = '';

/** The official client, its base URL pointed at `url` (6.0.48 replaces basePath with Jupiter's host: a `pre` middleware redirects). */
function clientOf(url: string): SwapApi {
  return createJupiterApiClient({
    basePath: `${url}/swap/v1`,
    middleware: [{ pre: async (ctx) => ({ url: ctx.url.replace(/^https:\/\/[^/]+\/swap\/v1/, `${url}/swap/v1`), init: ctx.init }) }],
  });
}

beforeAll(async () => {
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, rateLimitRps: 100_000, 'rpc.endpoints': [endpoints.rpc], 'swap.lookupTables': sim.chain.genesis.lookupTables.tables.map((t) => t.address) });
  // The cache filled as the scanner fills it: every pool read over RPC and decoded (AMM v4 reserves
  // are its vaults less need_take_pnl).
  const cache = createQuoteCache(config);
  const rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry(), readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }) });
  for (const r of await loader.load(sim.chain.pools().map((p) => p.address))) if (r.ok) cache.upsert(poolStateOfLoaded(r.value));
  await rpc.close();
  service = createQuoteService(config, { cache, logger });
  base = `http://127.0.0.1:${(await service.start()).port}`;
  api = clientOf(base);
  // A quote service without an RPC endpoint: it quotes from its cache but builds no swap.
  const bareConfig = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0 });
  bare = createQuoteService(bareConfig, { cache, logger });
  await bare.start();
  chain = new ChainClient({ url: endpoints.rpc, commitment: 'processed' });
}, 60_000);

afterAll(async () => {
  await chain?.close();
  await bare?.close();
  await service?.close();
  await sim.close();
});

let seeds = 300;
/** A wallet of its own with 5 SOL, landed. */
function freshUser(): Keypair {
  const user = strangerKeypair(seeds++);
  const funder = sim.chain.genesis.actors.traders[0]!;
  const tx = buildFittedTransaction({ payer: funder.keypair, recentBlockhash: sim.chain.latestBlockhash().blockhash, instructions: [systemTransferInstruction(funder.keypair.address, user.address, 5_000_000_000n)] });
  sim.chain.sendTransaction(tx.bytes);
  sim.chain.advanceSlot();
  return user;
}

/** Signs wire bytes with @solana/kit and lands them; the transaction's error, or null. */
async function signAndLand(bytes: Uint8Array, signer: Keypair): Promise<unknown> {
  const keys = await createKeyPairFromPrivateKeyBytes(keypairSeed(signer));
  const signed = await signTransaction([keys], getTransactionDecoder().decode(bytes));
  const wire = Buffer.from(getBase64EncodedWireTransaction(signed), 'base64');
  const simulated = await chain.simulateTransaction(wire);
  if (simulated.err !== null) return simulated.err;
  const signature = await chain.sendTransaction(wire);
  for (let i = 0; i < 5; i++) {
    sim.chain.advanceSlot();
    const [status] = await chain.getSignatureStatuses([signature]);
    if (status !== null && status !== undefined) return status.err;
  }
  return 'not landed';
}

const usdcOf = (owner: string): bigint => sim.chain.getTokenBalance(associatedTokenAddress(owner, USDC_MINT))?.amount ?? 0n;

function instructionOf(ix: { programId: string; accounts: { pubkey: string; isSigner: boolean; isWritable: boolean }[]; data: string }): InstructionInput {
  return { programId: ix.programId, accounts: ix.accounts, data: new Uint8Array(Buffer.from(ix.data, 'base64')) };
}

describe('the official swap API client against tidepool', () => {
  it('quoteGet, then swapPost: a versioned transaction the user signs and lands', async () => {
    const user = freshUser();
    const quote = await api.quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 100_000_000, slippageBps: 50 });
    const swap = await api.swapPost({ swapRequest: { userPublicKey: user.address, quoteResponse: quote, prioritizationFeeLamports: { priorityLevelWithMaxLamports: { priorityLevel: 'high', maxLamports: 100_000 } } } as never });
    const bytes = new Uint8Array(Buffer.from(swap.swapTransaction, 'base64'));
    expect(bytes[1 + 64]! & 0x80).toBe(0x80); // the message's version prefix: v0
    expect(swap.lastValidBlockHeight).toBeGreaterThan(0);
    expect(await signAndLand(bytes, user)).toBeNull();
    expect(usdcOf(user.address) >= BigInt(quote.otherAmountThreshold)).toBe(true);
  });

  it('swapInstructionsPost: instructions a client assembles in the documented order, then lands', async () => {
    const user = freshUser();
    const quote = await api.quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 50_000_000, slippageBps: 100 });
    const ixs = await api.swapInstructionsPost({ swapRequest: { userPublicKey: user.address, quoteResponse: quote } });
    const instructions = [...ixs.computeBudgetInstructions, ...ixs.setupInstructions, ixs.swapInstruction, ...(ixs.cleanupInstruction === undefined ? [] : [ixs.cleanupInstruction]), ...ixs.otherInstructions].map(instructionOf);
    expect(ixs.cleanupInstruction).toBeDefined(); // SOL in: the wSOL account is closed after
    const tx = buildFittedTransaction({ payer: user.address, recentBlockhash: sim.chain.latestBlockhash().blockhash, instructions, version: 0, unsigned: true });
    expect(await signAndLand(tx.bytes, user)).toBeNull();
    expect(usdcOf(user.address) >= BigInt(quote.otherAmountThreshold)).toBe(true);
  });

  it('refuses an expired quote with the API error shape, naming its age', async () => {
    const quote: QuoteResponse = await api.quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 1_000_000 });
    const user = freshUser();
    sim.chain.advanceSlot(160); // past swap.maxQuoteAgeSlots (150)
    const err = await api.swapPost({ swapRequest: { userPublicKey: user.address, quoteResponse: quote } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseError);
    const response = (err as ResponseError).response;
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; errorCode: string };
    expect(body.errorCode).toBe('QUOTE_EXPIRED');
    expect(body.error).toMatch(/slots old/);
  });

  it('answers bad bodies 400 naming the field, and 503 without an RPC endpoint', async () => {
    const post = async (url: string, body: string) => {
      const res = await fetch(`${url}/swap/v1/swap`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, body: (await res.json()) as { error: string; errorCode: string } };
    };
    expect(await post(base, '{')).toMatchObject({ status: 400, body: { errorCode: 'INVALID_REQUEST' } });
    const noKey = await post(base, JSON.stringify({ quoteResponse: {} }));
    expect(noKey).toMatchObject({ status: 400, body: { errorCode: 'INVALID_REQUEST' } });
    expect(noKey.body.error).toContain('userPublicKey');
    const quote = await api.quoteGet({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: 1_000_000 });
    const bareBase = `http://127.0.0.1:${bare.server.port}`;
    const unavailable = await post(bareBase, JSON.stringify({ userPublicKey: freshUser().address, quoteResponse: quote }));
    expect(unavailable.status).toBe(503);
    expect(unavailable.body.error).toContain('RPC_ENDPOINTS');
  });
});
