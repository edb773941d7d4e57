import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { keypairSeed, type Keypair } from '../chain/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import { USDC_MINT } from '../sim/known-accounts.js';
import { ChainClient } from '../rpc/chain-client.js';
import { migrateUp } from '../state/db/migrations.js';
import { TEST_BACKENDS, type TestDatabase } from '../state/db/testing.js';
import { KeySpace } from '../state/kv/key-space.js';
import { MemoryStore } from '../state/kv/memory-store.js';
import { WalletPassphrase } from './key-encryption.js';
import { Rebalancer } from './rebalancer.js';
import { balances, fund, landed, startChain } from './testing.js';
import { WalletManager } from './wallet-manager.js';
import { NATIVE_SOL, type WalletRecord } from './wallet-repository.js';

const SOL = 1_000_000_000n;
const USDC = 1_000_000n;
const PASSPHRASE = 'correct horse battery staple';

describe.each(TEST_BACKENDS)('wallets and rebalancing on the simulator, state on $name', ({ create }) => {
  let t: TestDatabase;
  let sim: Awaited<ReturnType<typeof startChain>>;
  let client: ChainClient;
  let keys: KeySpace;
  let manager: WalletManager;
  let rebalancer: Rebalancer;
  let treasure: WalletRecord;
  let a: WalletRecord;
  let b: WalletRecord;

  beforeAll(async () => {
    t = await create();
    await migrateUp(t.db);
    sim = await startChain();
    client = new ChainClient({ url: sim.url });
    keys = new KeySpace(new MemoryStore(), 'test:');
    manager = new WalletManager({ db: t.db, keys, chain: client, passphrase: WalletPassphrase.resolve({ passphrase: PASSPHRASE }) });
    rebalancer = new Rebalancer(manager, client, { pollMs: 20, resendMs: 200 });
  });
  afterAll(async () => {
    sim?.chain.stop();
    await sim?.rpc.close();
    await client?.close();
    await t?.drop();
  });

  it('creates wallets with sealed keys and lists addresses only', async () => {
    treasure = (await manager.create('treasure', 1))[0]!;
    const expected = new Map([
      [NATIVE_SOL, 2n * SOL],
      [USDC_MINT, 100n * USDC],
    ]);
    const workers = await manager.create('worker', 2, expected);
    a = workers[0]!;
    b = workers[1]!;
    const listed = await manager.repo.list();
    expect(listed.map((w) => w.tier)).toEqual(['treasure', 'worker', 'worker']);
    expect(JSON.stringify(listed.map((w) => ({ ...w, expectedBalance: [...w.expectedBalance] })), (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toMatch(/v1\$scrypt/);
    const [row] = await t.db.query<{ encrypted_private_key: string }>('SELECT encrypted_private_key FROM wallets WHERE id = $1', [a.id]);
    expect(row!.encrypted_private_key).toMatch(/^v1\$scrypt\$N=32768,r=8,p=1\$[\w-]{22}\$[\w-]{16}\$[\w-]{43}\$[\w-]{22}$/);
    expect((await manager.signer(a)).address).toBe(a.address);
  });

  it('a wrong passphrase is a clear error and moves nothing', async () => {
    const wrong = new WalletManager({ db: t.db, chain: client, passphrase: WalletPassphrase.resolve({ passphrase: 'not the passphrase at all' }) });
    const err = await wrong.signer(a).catch((e: unknown) => e);
    expect(isTpError(err, ErrorCode.WalletPassphrase)).toBe(true);
    expect((err as Error).message).toBe(`wrong wallet passphrase: the key of wallet ${a.address} does not open with it (or the stored key was altered)`);
    await fund(sim.chain, treasure.address, 50n * SOL, 5_000n * USDC);
    const result = await new Rebalancer(wrong, client).run().catch((e: unknown) => e);
    expect(isTpError(result, ErrorCode.WalletPassphrase)).toBe(true);
    expect(await manager.repo.transfers()).toEqual([]);
    expect(balances(sim.chain, a.address)).toEqual({ sol: 0n, usdc: 0n });
  });

  it('rebalances both ways with real transfers: tops up the worker under 50%, takes back the excess over 150%', async () => {
    await fund(sim.chain, b.address, 10n * SOL, 1_000n * USDC);
    const treasureBefore = balances(sim.chain, treasure.address);

    const dry = await rebalancer.run({ dryRun: true });
    expect(dry.executed).toEqual([]);
    expect(dry.plan.transfers.map((x) => [x.reason, x.to.address, x.token, x.amount])).toEqual([
      ['top_up', a.address, USDC_MINT, 100n * USDC],
      ['top_up', a.address, NATIVE_SOL, 2n * SOL],
      ['return_excess', treasure.address, USDC_MINT, 900n * USDC],
      ['return_excess', treasure.address, NATIVE_SOL, 8n * SOL],
    ]);
    expect(balances(sim.chain, a.address)).toEqual({ sol: 0n, usdc: 0n });

    const result = await rebalancer.run();
    expect(result.executed.map((o) => o.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'confirmed']);
    expect(balances(sim.chain, a.address)).toEqual({ sol: 2n * SOL, usdc: 100n * USDC });
    // The treasure paid every fee: the worker keeps exactly its expected balance.
    expect(balances(sim.chain, b.address)).toEqual({ sol: 2n * SOL, usdc: 100n * USDC });
    const after = balances(sim.chain, treasure.address);
    expect(after.usdc).toBe(treasureBefore.usdc - 100n * USDC + 900n * USDC);
    const fees = treasureBefore.sol - 2n * SOL + 8n * SOL - after.sol;
    // 4 transactions: signature fees, and the rent of A's new USDC account (B's existed, the treasure's too).
    expect(fees).toBe(5_000n + 10_000n + 5_000n + 10_000n + 2_039_280n);

    for (const w of [a, b]) {
      const rows = await manager.repo.transactions(w.id);
      expect(rows).toHaveLength(2);
    }
    const aRows = await manager.repo.transactions(a.id);
    expect(aRows.map((r) => [r.token, r.amount]).sort()).toEqual([
      [NATIVE_SOL, 2n * SOL],
      [USDC_MINT, 100n * USDC],
    ].sort());
    const treasureRows = await manager.repo.transactions(treasure.id);
    expect(treasureRows.map((r) => r.amount).reduce((x, y) => x + y, 0n)).toBe(-2n * SOL - 100n * USDC + 8n * SOL + 900n * USDC);

    const synced = await manager.repo.byAddress(a.address);
    expect(synced!.actualBalance.get(NATIVE_SOL)).toBe(2n * SOL);
    expect(await keys.getWalletBalance(a.address, USDC_MINT)).toMatchObject({ expected: '100000000', actual: '100000000' });

    const again = await rebalancer.run();
    expect(again.plan.transfers).toEqual([]);
    expect(again.executed).toEqual([]);
  });

  it('a crash between sending and recording never pays twice', async () => {
    await manager.repo.setExpected(a.address, NATIVE_SOL, 5n * SOL);
    const plan = (await rebalancer.run({ dryRun: true })).plan;
    expect(plan.transfers.map((x) => [x.reason, x.token, x.amount])).toEqual([['top_up', NATIVE_SOL, 3n * SOL]]);
    // The first process signs, journals and sends, then dies before it records anything.
    const record = await rebalancer.prepare(plan.transfers[0]!);
    await rebalancer.send(record);
    await landed(sim.chain, record.signature);
    expect(balances(sim.chain, a.address).sol).toBe(5n * SOL);

    // The next run settles the journaled transfer by its signature, then finds nothing to do.
    const next = await new Rebalancer(manager, client, { pollMs: 20, resendMs: 200 }).run();
    expect(next.settled.map((o) => [o.transfer.signature, o.status])).toEqual([[record.signature, 'confirmed']]);
    expect(next.plan.transfers).toEqual([]);
    expect(balances(sim.chain, a.address).sol).toBe(5n * SOL);
    const rows = (await manager.repo.transactions(a.id)).filter((r) => r.signature === record.signature);
    expect(rows.map((r) => r.amount)).toEqual([3n * SOL]);
  });

  it('a crash between journaling and sending sends the same signed bytes once', async () => {
    await manager.repo.setExpected(a.address, NATIVE_SOL, 12n * SOL);
    const plan = (await rebalancer.run({ dryRun: true })).plan;
    const record = await rebalancer.prepare(plan.transfers[0]!);
    expect(sim.chain.signatureStatus(record.signature)).toBeNull();
    const next = await rebalancer.run();
    expect(next.settled.map((o) => o.status)).toEqual(['confirmed']);
    expect(next.executed).toEqual([]);
    expect(balances(sim.chain, a.address).sol).toBe(12n * SOL);
  });

  it('imports a Solana CLI keypair file, refusing a malformed or mismatched one with nothing stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-keypair-'));
    try {
      const kp: Keypair = (await import('../chain/index.js')).generateKeypair();
      const secret = [...keypairSeed(kp), ...kp.publicKey];
      const good = join(dir, 'id.json');
      writeFileSync(good, JSON.stringify(secret));
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '[1,2,3');
      const mismatched = join(dir, 'mismatched.json');
      writeFileSync(mismatched, JSON.stringify([...secret.slice(0, 32), ...new Uint8Array(32).fill(7)]));
      const short = join(dir, 'short.json');
      writeFileSync(short, JSON.stringify(secret.slice(0, 63)));
      const before = (await manager.repo.list()).length;
      for (const [file, message] of [
        [bad, /is not JSON/],
        [mismatched, /its public half .* is not the key its secret derives/],
        [short, /a Solana secret key is 64 bytes, got 63/],
      ] as const) {
        const err = await manager.importKeypairFile('proxy', file).catch((e: unknown) => e);
        expect(isTpError(err, ErrorCode.WalletKeyFormat), String(err)).toBe(true);
        expect((err as Error).message).toMatch(message);
      }
      expect((await manager.repo.list()).length).toBe(before);
      const imported = await manager.importKeypairFile('proxy', good);
      expect(imported.address).toBe(kp.address);
      expect((await manager.signer(imported)).address).toBe(kp.address);
      await expect(manager.importKeypairFile('proxy', good)).rejects.toMatchObject({ code: ErrorCode.WalletInvalid });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
