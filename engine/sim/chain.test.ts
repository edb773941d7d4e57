import { describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { buildTransaction, type InstructionInput } from '../chain/transaction-builder.js';
import { Dex } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import { isRpcError, type RpcError, RpcErrorCode, type EntryBatch } from './chain-backend.js';
import type { SimChain } from './chain.js';
import { computeUnitPrice, memoInstruction, systemTransfer } from './flow.js';
import { deriveBundleId } from './http/bundle-id.js';
import { JITO_TIP_ACCOUNTS, TOKEN_PROGRAM_ID, WSOL_MINT } from './known-accounts.js';
import { SwapProgramError } from './swap-program.js';
import { poolMovedSinceGenesis, quoteOnChain, solUsdcPool, strangerKeypair, swapTransaction, testChain, trader } from './testing/chain-fixtures.js';

function entriesOf(chain: SimChain, slots: number): EntryBatch[] {
  const batches: EntryBatch[] = [];
  const off = chain.onEntries((b) => batches.push(b));
  chain.advanceSlot(slots);
  off();
  return batches;
}

function transfer(chain: SimChain, from = trader(chain), to = trader(chain, 1).keypair.address, lamports = 1_000_000n, extra: InstructionInput[] = []): Uint8Array {
  return buildTransaction({
    payer: from.keypair,
    instructions: [...extra, systemTransfer(from.keypair.address, to, lamports)],
    recentBlockhash: chain.latestBlockhash().blockhash,
  });
}

function rpcErrorOf(fn: () => unknown): RpcError {
  try {
    fn();
  } catch (err) {
    if (isRpcError(err)) return err;
    throw err;
  }
  throw new Error('expected an RpcError');
}

describe('SimChain determinism', () => {
  it('produces the same entry bytes and account states for the same seed, others for another seed', () => {
    const settings = { txRate: 600, tokens: 3, poolsPerKind: 2 };
    const a = testChain({ seed: 9, ...settings });
    const b = testChain({ seed: 9, ...settings });
    const c = testChain({ seed: 10, ...settings });
    const ea = entriesOf(a, 6);
    const eb = entriesOf(b, 6);
    const ec = entriesOf(c, 6);
    expect(ea.length).toBeGreaterThan(6);
    expect(eb.map((x) => [x.slot, Buffer.from(x.entries).toString('hex')])).toEqual(ea.map((x) => [x.slot, Buffer.from(x.entries).toString('hex')]));
    expect(Buffer.concat(ec.map((x) => x.entries)).equals(Buffer.concat(ea.map((x) => x.entries)))).toBe(false);
    for (const address of a.genesis.accounts.keys()) {
      const x = a.getAccount(address);
      const y = b.getAccount(address);
      expect(y?.lamports).toBe(x?.lamports);
      expect(Buffer.from(y!.data).equals(Buffer.from(x!.data))).toBe(true);
    }
    expect(a.latestBlockhash()).toEqual(b.latestBlockhash());
    expect(c.latestBlockhash().blockhash).not.toBe(a.latestBlockhash().blockhash);
    // The flow actually changed pools.
    expect(poolMovedSinceGenesis(a, a.genesis.market.pools[0]!)).toBe(true);
  });
});

describe('SimChain.createPool', () => {
  it('refuses a token the chain does not have (UnknownMint) and one token twice (ArgumentInvalid)', () => {
    const chain = testChain();
    const missing = base58.encode(new Uint8Array(32).fill(9));
    expect(() => chain.createPool({ dex: Dex.Whirlpool, tokenA: WSOL_MINT, tokenB: missing })).toThrow(expect.objectContaining({ code: ErrorCode.UnknownMint, context: { mint: missing } }));
    expect(() => chain.createPool({ dex: Dex.Whirlpool, tokenA: WSOL_MINT, tokenB: WSOL_MINT })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'tokenB', value: WSOL_MINT } }));
  });
});

describe('SimChain slots and commitments', () => {
  it('makes a new blockhash each slot, valid for 150 blocks, with confirmed and finalized trailing', () => {
    const chain = testChain();
    const first = chain.latestBlockhash();
    expect(first.lastValidBlockHeight).toBe(150n);
    chain.advanceSlot(40);
    expect(chain.slot()).toBe(40n);
    expect(chain.slot('confirmed')).toBe(39n);
    expect(chain.slot('finalized')).toBe(8n);
    expect(chain.latestBlockhash().blockhash).not.toBe(first.blockhash);
    expect(chain.latestBlockhash('finalized').lastValidBlockHeight).toBe(158n);
    expect(chain.isBlockhashValid(first.blockhash)).toBe(true);
    chain.advanceSlot(111);
    expect(chain.isBlockhashValid(first.blockhash)).toBe(false);
  });

  it('reads accounts as of each commitment', () => {
    const chain = testChain();
    chain.advanceSlot(2);
    const to = trader(chain, 1).keypair.address;
    const before = chain.getAccount(to)!.lamports;
    chain.sendTransaction(transfer(chain, trader(chain), to, 5_000_000n));
    chain.advanceSlot();
    expect(chain.getAccount(to)!.lamports).toBe(before + 5_000_000n);
    expect(chain.getAccount(to, 'confirmed')!.lamports).toBe(before);
    expect(chain.getAccount(to, 'finalized')!.lamports).toBe(before);
    chain.advanceSlot();
    expect(chain.getAccount(to, 'confirmed')!.lamports).toBe(before + 5_000_000n);
    chain.advanceSlot(31);
    expect(chain.getAccount(to, 'finalized')!.lamports).toBe(before + 5_000_000n);
  });

  it('tells listeners about entries, slots and changed accounts', () => {
    const chain = testChain({ txRate: 100 });
    const slots: bigint[][] = [];
    const accounts: bigint[] = [];
    const entries: bigint[] = [];
    chain.onSlot((slot, parent, root) => slots.push([slot, parent, root]));
    const to = trader(chain, 2).keypair.address;
    const off = chain.onAccount(to, (account, slot) => accounts.push(account!.lamports, slot));
    chain.onEntries((b) => entries.push(b.slot));
    chain.sendTransaction(transfer(chain, trader(chain), to, 7n * 1_000_000n));
    chain.advanceSlot(2);
    expect(slots).toEqual([
      [1n, 0n, 0n],
      [2n, 1n, 0n],
    ]);
    expect(accounts.slice(1, 2)).toEqual([1n]);
    expect(new Set(entries)).toEqual(new Set([1n, 2n]));
    off();
  });
});

describe('SimChain sendTransaction', () => {
  it('takes a signed transfer, lands it in the next slot, and reports processed, confirmed, finalized', () => {
    const chain = testChain();
    const signature = chain.sendTransaction(transfer(chain));
    expect(chain.signatureStatus(signature)).toBeNull();
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toEqual({ slot: 1n, confirmations: 0, err: null, confirmationStatus: 'processed' });
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toEqual({ slot: 1n, confirmations: 1, err: null, confirmationStatus: 'confirmed' });
    chain.advanceSlot(31);
    expect(chain.signatureStatus(signature)).toEqual({ slot: 1n, confirmations: null, err: null, confirmationStatus: 'finalized' });
  });

  it('refuses bytes that are not a transaction as the node does', () => {
    const chain = testChain();
    const tx = transfer(chain);
    const error = rpcErrorOf(() => chain.sendTransaction(tx.subarray(0, 100)));
    expect(error.context.rpcCode).toBe(RpcErrorCode.InvalidParams);
    expect(error.message).toBe('failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: unexpected end of file');
    const bad = tx.slice();
    bad[65] = 2; // two required signatures, one signature
    expect(rpcErrorOf(() => chain.sendTransaction(bad)).message).toBe('invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  });

  it('refuses a bad signature with -32003', () => {
    const chain = testChain();
    const tx = transfer(chain);
    tx[10] = tx[10]! ^ 0xff;
    const error = rpcErrorOf(() => chain.sendTransaction(tx));
    expect([error.context.rpcCode, error.message]).toEqual([RpcErrorCode.TransactionSignatureVerificationFailure, 'Transaction signature verification failure']);
    // Without preflight the node forwards it and the leader drops it: it never lands.
    const signature = chain.sendTransaction(tx, { skipPreflight: true });
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toBeNull();
    expect(chain.stats().droppedTransactions).toBe(1);
  });

  it('refuses a stale blockhash as a preflight failure with BlockhashNotFound', () => {
    const chain = testChain();
    const stale = transfer(chain);
    chain.advanceSlot(151);
    const error = rpcErrorOf(() => chain.sendTransaction(stale));
    expect(error).toMatchObject({ message: 'Transaction simulation failed: Blockhash not found', context: { rpcCode: RpcErrorCode.SendTransactionPreflightFailure, data: { err: 'BlockhashNotFound' } } });
    const signature = chain.sendTransaction(stale, { skipPreflight: true });
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toBeNull();
  });

  it('refuses a payer that cannot pay the fee', () => {
    const chain = testChain();
    const stranger = strangerKeypair(4);
    const tx = buildTransaction({ payer: stranger, instructions: [memoInstruction(stranger.address, 'hi')], recentBlockhash: chain.latestBlockhash().blockhash });
    expect(rpcErrorOf(() => chain.sendTransaction(tx))).toMatchObject({
      message: 'Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.',
      context: { rpcCode: RpcErrorCode.SendTransactionPreflightFailure, data: { err: 'AccountNotFound' } },
    });
    // Fund it with 1 SOL, then ask for a priority fee beyond that.
    chain.sendTransaction(transfer(chain, trader(chain), stranger.address, 1_000_000_000n));
    chain.advanceSlot();
    const dear = buildTransaction({
      payer: stranger,
      instructions: [computeUnitPrice(10_000_000_000n), memoInstruction(stranger.address, 'hi')],
      recentBlockhash: chain.latestBlockhash().blockhash,
    });
    expect(rpcErrorOf(() => chain.sendTransaction(dear))).toMatchObject({
      message: 'Transaction simulation failed: Insufficient funds for fee',
      context: { data: { err: 'InsufficientFundsForFee' } },
    });
  });

  it('refuses a transaction it has already processed', () => {
    const chain = testChain();
    const tx = transfer(chain);
    chain.sendTransaction(tx);
    expect(rpcErrorOf(() => chain.sendTransaction(tx)).context.data).toMatchObject({ err: 'AlreadyProcessed' });
    chain.advanceSlot();
    expect(rpcErrorOf(() => chain.sendTransaction(tx))).toMatchObject({ message: 'Transaction simulation failed: This transaction has already been processed' });
    // Sent again without preflight, it does not land twice.
    const before = chain.stats().transactions;
    chain.sendTransaction(tx, { skipPreflight: true });
    chain.advanceSlot();
    expect(chain.stats().transactions).toBe(before);
  });

  it('moves SPL tokens with Transfer and TransferChecked and reports token balances', () => {
    const chain = testChain();
    const from = trader(chain);
    const to = trader(chain, 1);
    const usdc = chain.tokens()[1]!;
    const source = from.tokenAccounts.get(usdc.mint)!;
    const destination = to.tokenAccounts.get(usdc.mint)!;
    const a = chain.getTokenBalance(source)!;
    const b = chain.getTokenBalance(destination)!;
    expect(a.decimals).toBe(6);
    const transferData = new Uint8Array(9);
    transferData[0] = 3;
    new DataView(transferData.buffer).setBigUint64(1, 1_500_000n, true);
    const checked = new Uint8Array(10);
    checked[0] = 12;
    new DataView(checked.buffer).setBigUint64(1, 500_000n, true);
    checked[9] = 6;
    const tx = buildTransaction({
      payer: from.keypair,
      instructions: [
        {
          programId: TOKEN_PROGRAM_ID,
          accounts: [
            { pubkey: source, isSigner: false, isWritable: true },
            { pubkey: destination, isSigner: false, isWritable: true },
            { pubkey: from.keypair.address, isSigner: true, isWritable: false },
          ],
          data: transferData,
        },
        {
          programId: TOKEN_PROGRAM_ID,
          accounts: [
            { pubkey: source, isSigner: false, isWritable: true },
            { pubkey: usdc.mint, isSigner: false, isWritable: false },
            { pubkey: destination, isSigner: false, isWritable: true },
            { pubkey: from.keypair.address, isSigner: true, isWritable: false },
          ],
          data: checked,
        },
      ],
      recentBlockhash: chain.latestBlockhash().blockhash,
    });
    const signature = chain.sendTransaction(tx);
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)!.err).toBeNull();
    expect(chain.getTokenBalance(source)!.amount).toBe(a.amount - 2_000_000n);
    expect(chain.getTokenBalance(destination)!.amount).toBe(b.amount + 2_000_000n);
    expect(chain.getTokenBalance(from.keypair.address)).toBeNull();
  });

  it('simulates on a copy of the state, with logs', () => {
    const chain = testChain();
    const to = trader(chain, 1).keypair.address;
    const before = chain.getAccount(to)!.lamports;
    const result = chain.simulateTransaction(transfer(chain, trader(chain), to, 9n));
    expect(result.err).toBeNull();
    expect(result.logs).toEqual([
      'Program 11111111111111111111111111111111 invoke [1]',
      'Program 11111111111111111111111111111111 consumed 150 of 200000 compute units',
      'Program 11111111111111111111111111111111 success',
    ]);
    expect(result.unitsConsumed).toBe(150);
    chain.advanceSlot();
    expect(chain.getAccount(to)!.lamports).toBe(before);
  });
});

describe('SimChain bundles', () => {
  it('lands a bundle whole in the next slot under its Jito bundle id', () => {
    const chain = testChain();
    const tip = JITO_TIP_ACCOUNTS[3]!;
    const tipBefore = chain.getAccount(tip)!.lamports;
    const txs = [transfer(chain, trader(chain), trader(chain, 1).keypair.address), transfer(chain, trader(chain, 1), tip, 10_000n)];
    const id = chain.sendBundle(txs);
    expect(id).toBe(deriveBundleId(txs));
    expect(chain.bundleStatus(id)).toBeNull();
    chain.advanceSlot();
    expect(chain.bundleStatus(id)).toMatchObject({ bundleId: id, slot: 1n, err: null, confirmationStatus: 'processed' });
    expect(chain.bundleStatus(id)!.transactions).toEqual(txs.map((tx) => base58.encode(tx.subarray(1, 65))));
    expect(chain.getAccount(tip)!.lamports).toBe(tipBefore + 10_000n);
    chain.advanceSlot();
    expect(chain.bundleStatus(id)!.confirmationStatus).toBe('confirmed');
    expect(chain.tipAccounts()).toEqual([...JITO_TIP_ACCOUNTS]);
  });

  it('runs a bundle sent twice once, queued or landed, under one id', () => {
    const chain = testChain();
    const tip = JITO_TIP_ACCOUNTS[1]!;
    const tipBefore = chain.getAccount(tip)!.lamports;
    const txs = [transfer(chain, trader(chain), tip, 10_000n)];
    const id = chain.sendBundle(txs);
    expect(chain.sendBundle(txs)).toBe(id);
    chain.advanceSlot();
    expect(chain.sendBundle(txs)).toBe(id);
    chain.advanceSlot();
    expect(chain.bundleStatus(id)).toMatchObject({ err: null });
    expect(chain.getAccount(tip)!.lamports).toBe(tipBefore + 10_000n);
    expect(chain.stats()).toMatchObject({ bundlesLanded: 1, bundlesFailed: 0, transactions: 1 });
  });

  it('lands nothing of a bundle when one of its transactions fails', () => {
    const chain = testChain();
    const tip = JITO_TIP_ACCOUNTS[0]!;
    const tipBefore = chain.getAccount(tip)!.lamports;
    const info = solUsdcPool(chain, Dex.Whirlpool);
    const amount = 10n ** 8n;
    const quote = quoteOnChain(chain, info, true, true, amount);
    if (!quote.ok) throw new Error(quote.message);
    const tipTx = transfer(chain, trader(chain), tip, 50_000n);
    const failing = swapTransaction(chain, trader(chain, 1), info, { aToB: true, exactIn: true, amount, threshold: quote.amountOut + 1n });
    const poolBytes = Buffer.from(chain.getAccount(info.address)!.data);
    const id = chain.sendBundle([tipTx, failing]);
    chain.advanceSlot();
    expect(chain.bundleStatus(id)).toMatchObject({ err: { InstructionError: [0, { Custom: SwapProgramError.SlippageExceeded }] } });
    expect(chain.getAccount(tip)!.lamports).toBe(tipBefore);
    expect(chain.signatureStatus(base58.encode(tipTx.subarray(1, 65)))).toBeNull();
    expect(Buffer.from(chain.getAccount(info.address)!.data).equals(poolBytes)).toBe(true);
    expect(chain.stats()).toMatchObject({ bundlesFailed: 1, bundlesLanded: 0, transactions: 0 });
  });

  it('refuses more than five transactions and a bad signature when the bundle is sent', () => {
    const chain = testChain();
    const tx = transfer(chain);
    expect(rpcErrorOf(() => chain.sendBundle([tx, tx, tx, tx, tx, tx])).context.rpcCode).toBe(RpcErrorCode.InvalidParams);
    const bad = tx.slice();
    bad[5] = bad[5]! ^ 1;
    expect(rpcErrorOf(() => chain.sendBundle([bad])).message).toContain('signature');
  });
});
