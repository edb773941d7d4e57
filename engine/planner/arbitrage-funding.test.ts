import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../chain/index.js';
import { flashLoanFee, type ReadAccounts } from '../lending/index.js';
import { testChain, strangerKeypair } from '../sim/testing/chain-fixtures.js';
import { openMigratedDatabase, type SqlClient } from '../state/index.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { KV_BACKENDS } from '../state/kv/testing.js';
import { WalletRepository, WalletTier } from '../wallets/index.js';
import { ConfiguredFunding } from './arbitrage-funding.js';

/** Funding of arbitrage inputs: flash loans where a reserve is configured, free worker balances elsewhere. */

describe.each(KV_BACKENDS)('arbitrage funding, key space on $name', ({ create }) => {
  let database: TestDatabase;
  let db: SqlClient;
  let kv: Awaited<ReturnType<typeof create>>;

  beforeAll(async () => {
    database = await createServerDatabase();
    db = (await openMigratedDatabase({ url: database.url! })).db;
    kv = await create();
  }, 60_000);
  afterAll(async () => {
    await kv?.drop();
    await db?.close();
    await database?.drop();
  });

  it('lends up to the reserve at its fee, and otherwise sizes to the largest free worker balance', async () => {
    const chain = testChain();
    const read: ReadAccounts = (addresses) => Promise.resolve(addresses.map((a) => chain.getAccount(a)));
    const usdcReserve = chain.genesis.lending.reserves.find((r) => r.liquidityMint === USDC_MINT)!;
    const repo = new WalletRepository(db);
    const [a, b, c] = [1, 2, 3].map((i) => strangerKeypair(100 + i).address);
    const wa = await repo.insert({ tier: WalletTier.Worker, address: a!, encryptedPrivateKey: 'sealed' });
    const wb = await repo.insert({ tier: WalletTier.Worker, address: b!, encryptedPrivateKey: 'sealed' });
    await repo.insert({ tier: WalletTier.Treasure, address: c!, encryptedPrivateKey: 'sealed' });
    const balance = (address: string, actual: bigint) => ({ address, token: WSOL_MINT, value: { expected: null, actual: actual.toString(), lastSync: 1 } });
    await kv.keys.setWalletBalances([balance(a!, 7_000_000n), balance(b!, 9_000_000n), balance(c!, 1_000_000_000n)]);

    const funding = new ConfiguredFunding({ reserves: { addresses: [usdcReserve.reserve], read }, wallets: { db, keys: kv.keys }, mints: [WSOL_MINT, USDC_MINT] });
    expect(funding.of(WSOL_MINT)).toBeUndefined(); // nothing read yet
    await funding.refresh();

    const usdc = funding.of(USDC_MINT)!;
    expect(usdc).toMatchObject({ flashLoan: true, maxInput: chain.getTokenBalance(usdcReserve.supplyVault)!.amount, reserve: usdcReserve.reserve });
    expect(usdc.fee(1_000_000_000n)).toBe(flashLoanFee(1_000_000_000n, usdcReserve.feeSf));
    expect(usdc.fee(1_000_000_000n)).toBe(500_000n);

    // wrapped SOL has no configured reserve: the largest worker balance (the treasure's is not a worker's), no fee
    const sol = funding.of(WSOL_MINT)!;
    expect(sol).toMatchObject({ flashLoan: false, maxInput: 9_000_000n });
    expect(sol.fee(5n)).toBe(0n);

    // a worker taken by an executor is not free capital
    const lock = await kv.keys.acquireExecutorLock(wb.id, 'tx-1');
    await funding.refresh();
    expect(funding.of(WSOL_MINT)).toMatchObject({ maxInput: 7_000_000n });
    await lock!.release();
    await repo.setEnabled(wa.address, false);
    await kv.keys.setWalletBalances([balance(b!, 0n)]);
    await funding.refresh();
    expect(funding.of(WSOL_MINT)).toBeUndefined(); // no enabled worker holds any
    await db.query('DELETE FROM wallets');
  });
});
