import { address as toAddress, createSolanaRpc } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildTransaction, type InstructionInput } from '../../chain/index.js';
import { associatedTokenAddress } from '../associated-token.js';
import type { SimChain } from '../chain.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, USDC_MINT, WSOL_MINT, rentExemptMinimum } from '../known-accounts.js';
import { strangerKeypair, testChain, trader } from '../testing/chain-fixtures.js';
import { JsonRpcHttpServer } from './json-rpc-http.js';
import { call } from './testing/test-servers.js';

/** getTokenAccountsByOwner and the Associated Token Account program, on the simulated chain. */

let chain: SimChain;
let server: JsonRpcHttpServer;
let url: string;

beforeAll(async () => {
  chain = testChain();
  server = new JsonRpcHttpServer({ backend: chain, port: 0 });
  url = (await server.start()).url;
  chain.advanceSlot(40);
});

afterAll(async () => {
  await server.close();
});

function createAta(payer = trader(chain), owner: string, mint: string, tag: number[] = [1], ata = associatedTokenAddress(owner, mint)): Uint8Array {
  const ix: InstructionInput = {
    programId: ASSOCIATED_TOKEN_PROGRAM_ID,
    accounts: [
      { pubkey: payer.keypair.address, isSigner: true, isWritable: true },
      { pubkey: ata, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SYSTEM_PROGRAM_ID, isSigner: false, isWritable: false },
      { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
    ],
    data: new Uint8Array(tag),
  };
  return buildTransaction({ payer: payer.keypair, instructions: [ix], recentBlockhash: chain.latestBlockhash().blockhash, signers: [payer.keypair] });
}

describe('getTokenAccountsByOwner', () => {
  it('lists an owner’s token accounts by mint or program, with exact amounts, as @solana/kit reads them', async () => {
    const owner = trader(chain).keypair.address;
    const byMint = await call(url, 'getTokenAccountsByOwner', [owner, { mint: USDC_MINT }, { encoding: 'base64' }]);
    expect(byMint.result.value).toHaveLength(1);
    const item = byMint.result.value[0];
    expect(Object.keys(item)).toEqual(['account', 'pubkey']);
    expect(item.pubkey).toBe(associatedTokenAddress(owner, USDC_MINT));
    const data = Buffer.from(item.account.data[0], 'base64');
    expect(data.readBigUInt64LE(64)).toBe(chain.getTokenBalance(item.pubkey)!.amount);

    const byProgram = await call(url, 'getTokenAccountsByOwner', [owner, { programId: TOKEN_PROGRAM_ID }, { encoding: 'base64' }]);
    expect(byProgram.result.value.length).toBe(chain.tokens().filter((t) => t.programId === undefined).length);
    const token2022 = chain.tokens().filter((t) => t.programId === TOKEN_2022_PROGRAM_ID);
    expect(token2022.length).toBeGreaterThan(0);
    const by2022 = await call(url, 'getTokenAccountsByOwner', [owner, { programId: TOKEN_2022_PROGRAM_ID }, { encoding: 'base64' }]);
    expect(by2022.result.value.map((v: { account: { owner: string } }) => v.account.owner)).toEqual(token2022.map(() => TOKEN_2022_PROGRAM_ID));
    const byMint2022 = await call(url, 'getTokenAccountsByOwner', [owner, { mint: token2022[0]!.mint }, { encoding: 'jsonParsed' }]);
    expect(byMint2022.result.value[0].account.data.parsed.info.mint).toBe(token2022[0]!.mint);
    expect(byMint2022.result.value[0].account.data.program).toBe('spl-token-2022');

    const rpc = createSolanaRpc(url);
    const parsed = await rpc
      .getTokenAccountsByOwner(toAddress(owner), { mint: toAddress(USDC_MINT) }, { encoding: 'jsonParsed', commitment: 'processed' })
      .send();
    const info = parsed.value[0]!.account.data.parsed.info;
    expect(info).toMatchObject({ isNative: false, mint: USDC_MINT, owner, state: 'initialized' });
    expect(info.tokenAmount.amount).toBe(chain.getTokenBalance(item.pubkey)!.amount.toString());
    expect(info.tokenAmount.decimals).toBe(6);

    const wsol = await call(url, 'getTokenAccountsByOwner', [owner, { mint: WSOL_MINT }, { encoding: 'jsonParsed' }]);
    expect(wsol.result.value[0].account.data.parsed.info).toMatchObject({ isNative: true, rentExemptReserve: { amount: '2039280', decimals: 9 } });
    expect((await call(url, 'getTokenAccountsByOwner', [strangerKeypair(9).address, { mint: USDC_MINT }])).result.value).toEqual([]);
  });

  it('answers bad filters with the node’s errors', async () => {
    const owner = trader(chain).keypair.address;
    const cases: [unknown[], string][] = [
      [[owner, { mint: strangerKeypair(3).address }], 'Invalid param: could not find mint'],
      [[owner, { mint: owner }], 'Invalid param: not a Token mint'],
      [[owner, { programId: SYSTEM_PROGRAM_ID }], 'Invalid param: unrecognized Token program id'],
      [[owner, { owner: TOKEN_PROGRAM_ID }], 'Invalid params: unknown variant `owner`, expected `mint` or `programId`.'],
      [[owner], '`params` should have at least 2 argument(s)'],
      [['nope', { mint: USDC_MINT }], 'Invalid param: WrongSize'],
    ];
    for (const [params, message] of cases) {
      const reply = await call(url, 'getTokenAccountsByOwner', params);
      expect(reply.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect(reply.error.message).toContain(message);
    }
  });
});

describe('Associated Token Account program', () => {
  it('creates an account for a new owner, funded with rent by the payer; CreateIdempotent again is a no-op', () => {
    const owner = strangerKeypair(21).address;
    const payerBefore = chain.getAccount(trader(chain).keypair.address)!.lamports;
    chain.sendTransaction(createAta(trader(chain), owner, USDC_MINT));
    chain.advanceSlot();
    const ata = chain.getAccount(associatedTokenAddress(owner, USDC_MINT))!;
    expect(ata.owner).toBe(TOKEN_PROGRAM_ID);
    expect(ata.lamports).toBe(rentExemptMinimum(165));
    expect(chain.getTokenBalance(associatedTokenAddress(owner, USDC_MINT))).toEqual({ amount: 0n, decimals: 6 });
    expect(chain.getAccount(trader(chain).keypair.address)!.lamports).toBe(payerBefore - 5000n - rentExemptMinimum(165));
    expect(chain.simulateTransaction(createAta(trader(chain), owner, USDC_MINT)).err).toBeNull();
  });

  it('fails as the real program does: Create of an existing account, a wrong address, a missing mint', () => {
    const owner = trader(chain).keypair.address;
    expect(chain.simulateTransaction(createAta(trader(chain), owner, USDC_MINT, [0])).err).toEqual({ InstructionError: [0, { Custom: 0 }] });
    expect(chain.simulateTransaction(createAta(trader(chain), strangerKeypair(22).address, USDC_MINT, [1], strangerKeypair(23).address)).err).toEqual({
      InstructionError: [0, 'InvalidSeeds'],
    });
    const noMint = strangerKeypair(24).address;
    // The token program's GetAccountDataSize refuses a mint it does not own.
    expect(chain.simulateTransaction(createAta(trader(chain), strangerKeypair(22).address, noMint)).err).toEqual({ InstructionError: [0, 'IncorrectProgramId'] });
    expect(chain.simulateTransaction(createAta(trader(chain), owner, USDC_MINT, [7])).err).toEqual({ InstructionError: [0, 'InvalidInstructionData'] });
  });
});
