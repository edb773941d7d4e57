import {
  AccountRole,
  address as toAddress,
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Signature,
} from '@solana/kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { account, address, startTestServers, type TestServers } from './testing/test-servers.js';

/**
 * The acceptance test of the servers: @solana/kit, unchanged, against them. Anything kit cannot
 * parse or would treat differently from a real node fails here.
 */

let t: TestServers;

beforeEach(async () => {
  t = await startTestServers();
});

afterEach(async () => {
  await t.close();
});

const SYSTEM_PROGRAM = toAddress('11111111111111111111111111111111');

async function signedTransfer(rpc: ReturnType<typeof createSolanaRpc>) {
  const payer = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true); // System Transfer
  view.setBigUint64(4, 5_000n, true);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: SYSTEM_PROGRAM,
          accounts: [
            { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
            { address: toAddress(address(8)), role: AccountRole.WRITABLE },
          ],
          data,
        },
        m,
      ),
  );
  return signTransactionMessageWithSigners(message);
}

describe('@solana/kit rpc', () => {
  it('reads accounts with base64 data decoded to the exact bytes and u64 values intact', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
    t.backend.setAccount(address(1), account(bytes, { lamports: 2n ** 62n + 3n }));
    t.backend.setAccount(address(2), account(Uint8Array.from([9, 8, 7])));

    const info = await rpc.getAccountInfo(toAddress(address(1)), { encoding: 'base64' }).send();
    expect(info.context.slot).toBe(99n); // kit's default commitment is confirmed
    const value = info.value!;
    expect(new Uint8Array(Buffer.from(value.data[0], 'base64'))).toEqual(bytes);
    expect(value.lamports).toBe(2n ** 62n + 3n);
    // Kit no longer types the deprecated rentEpoch, but parses it, exactly.
    expect((value as unknown as { rentEpoch: bigint }).rentEpoch).toBe(18_446_744_073_709_551_615n);
    expect(value.owner).toBe(address(9));
    expect(value.space).toBe(300n);

    const many = await rpc
      .getMultipleAccounts([toAddress(address(2)), toAddress(address(3)), toAddress(address(1))], { encoding: 'base64' })
      .send();
    expect(many.value[1]).toBeNull();
    expect(new Uint8Array(Buffer.from(many.value[0]!.data[0], 'base64'))).toEqual(Uint8Array.from([9, 8, 7]));
    expect(new Uint8Array(Buffer.from(many.value[2]!.data[0], 'base64'))).toEqual(bytes);

    const zstd = await rpc.getAccountInfo(toAddress(address(2)), { encoding: 'base64+zstd' }).send();
    expect(zstd.value!.data[1]).toBe('base64+zstd');
  });

  it('reads balances, slots and blockhashes', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    t.backend.setAccount(address(1), account(new Uint8Array(0), { lamports: 42n }));
    t.backend.setAccount(address(4), account(new Uint8Array(165)));
    t.backend.setTokenBalance(address(4), { amount: 123_450_000n, decimals: 6 });

    expect((await rpc.getBalance(toAddress(address(1))).send()).value).toBe(42n);
    expect((await rpc.getBalance(toAddress(address(2))).send()).value).toBe(0n);
    expect((await rpc.getTokenAccountBalance(toAddress(address(4))).send()).value).toEqual({
      amount: '123450000',
      decimals: 6,
      uiAmount: 123.45,
      uiAmountString: '123.45',
    });
    expect(await rpc.getSlot({ commitment: 'processed' }).send()).toBe(100n);
    expect(await rpc.getSlot().send()).toBe(99n);
    expect(await rpc.getBlockHeight({ commitment: 'processed' }).send()).toBe(100n);
    const latest = await rpc.getLatestBlockhash().send();
    expect(latest.value.blockhash).toBe(t.backend.latestBlockhash().blockhash);
    expect(latest.value.lastValidBlockHeight).toBe(250n);
    expect((await rpc.isBlockhashValid(latest.value.blockhash).send()).value).toBe(true);
    expect(await rpc.getHealth().send()).toBe('ok');
    expect((await rpc.getVersion().send())['solana-core']).toBe('2.2.20');
    expect(await rpc.getGenesisHash().send()).toBe(t.backend.genesisHash());
  });

  it('sends a signed transaction, which the chain receives byte for byte, and reads its status', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    const signed = await signedTransfer(rpc);
    const wire = getBase64EncodedWireTransaction(signed);

    const signature = await rpc.sendTransaction(wire, { encoding: 'base64' }).send();
    expect(signature).toBe(getSignatureFromTransaction(signed));
    expect(t.backend.sentTransactions).toHaveLength(1);
    expect(Buffer.from(t.backend.sentTransactions[0]!)).toEqual(Buffer.from(wire, 'base64'));

    const statuses = await rpc.getSignatureStatuses([signature, '1'.repeat(64) as Signature]).send();
    expect(statuses.context.slot).toBe(100n);
    expect(statuses.value[0]).toEqual({
      slot: 100n,
      confirmations: 0n,
      err: null,
      status: { Ok: null },
      confirmationStatus: 'processed',
    });
    expect(statuses.value[1]).toBeNull();

    t.backend.advanceSlot(40);
    const finalized = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send();
    expect(finalized.value[0]).toMatchObject({ confirmations: null, confirmationStatus: 'finalized' });
  });

  it('sends the deprecated base58 encoding too', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    const signed = await signedTransfer(rpc);
    const bs58 = (await import('bs58')).default;
    const wire = bs58.encode(Buffer.from(getBase64EncodedWireTransaction(signed), 'base64'));
    const signature = await rpc.sendTransaction(wire as never, { encoding: 'base58' }).send();
    expect(signature).toBe(getSignatureFromTransaction(signed));
  });

  it('simulates a transaction', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    t.backend.simulation = { err: null, logs: ['Program 11111111111111111111111111111111 invoke [1]'], unitsConsumed: 150 };
    t.backend.setAccount(address(8), account(new Uint8Array(2)));
    const wire = getBase64EncodedWireTransaction(await signedTransfer(rpc));
    const sim = await rpc
      .simulateTransaction(wire, {
        encoding: 'base64',
        replaceRecentBlockhash: true,
        accounts: { encoding: 'base64', addresses: [toAddress(address(8))] },
      })
      .send();
    expect(sim.value.err).toBeNull();
    expect(sim.value.logs).toEqual(['Program 11111111111111111111111111111111 invoke [1]']);
    expect(sim.value.unitsConsumed).toBe(150n);
    expect(sim.value.replacementBlockhash?.blockhash).toBe(t.backend.latestBlockhash().blockhash);
    expect(sim.value.accounts?.[0]?.data).toEqual(['AAA=', 'base64']);
    expect(Buffer.from(t.backend.simulatedTransactions[0]!)).toEqual(Buffer.from(wire, 'base64'));
  });

  it('surfaces the node errors as kit errors with their codes', async () => {
    const rpc = createSolanaRpc(t.httpUrl);
    t.faults.setRpcFault('getSlot', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is unhealthy' });
    await expect(rpc.getSlot().send()).rejects.toMatchObject({ context: { __code: -32005 } });
    await expect(rpc.getBalance(toAddress(address(1)), { minContextSlot: 1_000n }).send()).rejects.toMatchObject({
      context: { __code: -32016, contextSlot: 99n },
    });
  });
});

describe('@solana/kit rpc subscriptions', () => {
  it('receives accountNotifications for every change', async () => {
    const subscriptions = createSolanaRpcSubscriptions(t.wsUrl);
    const abort = new AbortController();
    const notifications = await subscriptions
      .accountNotifications(toAddress(address(1)), { encoding: 'base64', commitment: 'confirmed' })
      .subscribe({ abortSignal: abort.signal });
    const iterator = notifications[Symbol.asyncIterator]();

    let next = iterator.next();
    t.backend.setAccount(address(1), account(Uint8Array.from([1, 2, 3])));
    const first = (await next).value!;
    expect(first.context.slot).toBe(100n);
    expect(new Uint8Array(Buffer.from(first.value.data[0], 'base64'))).toEqual(Uint8Array.from([1, 2, 3]));
    expect(first.value.rentEpoch).toBe(18_446_744_073_709_551_615n);

    next = iterator.next();
    t.backend.advanceSlot(2, [[address(1), account(Uint8Array.from([4]), { lamports: 77n })]]);
    const second = (await next).value!;
    expect(second.context.slot).toBe(102n);
    expect(second.value.lamports).toBe(77n);

    abort.abort();
    for (let i = 0; i < 200 && t.backend.listenerCount('account') > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(t.backend.listenerCount('account')).toBe(0);
  });

  it('receives slotNotifications', async () => {
    const subscriptions = createSolanaRpcSubscriptions(t.wsUrl);
    const abort = new AbortController();
    const notifications = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
    const iterator = notifications[Symbol.asyncIterator]();
    const next = iterator.next();
    t.backend.advanceSlot();
    expect((await next).value).toEqual({ parent: 100n, root: 69n, slot: 101n });
    abort.abort();
  });

  it('sees its subscription end when the ws.drop fault cuts the connection', async () => {
    const subscriptions = createSolanaRpcSubscriptions(t.wsUrl);
    const abort = new AbortController();
    const notifications = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
    const iterator = notifications[Symbol.asyncIterator]();
    const next = iterator.next();
    t.faults.trigger('ws.drop');
    await expect(next).rejects.toBeDefined();
    abort.abort();
  });
});
