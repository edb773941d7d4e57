import { associatedTokenAddress, buildTransaction, createAssociatedTokenIdempotentInstruction, systemTransferInstruction, tokenTransferInstruction } from '../chain/index.js';
import { SimChain } from '../sim/chain.js';
import { USDC_MINT } from '../sim/known-accounts.js';
import { JsonRpcHttpServer } from '../sim/rpc/index.js';

/** Test support of the wallets: a simulated chain over JSON-RPC, funding from a genesis trader, balances. */

/** A running simulated chain with fast slots and no generated flow, served over JSON-RPC on port 0. */
export async function startChain(): Promise<{ chain: SimChain; rpc: JsonRpcHttpServer; url: string }> {
  const chain = new SimChain({ seed: 11, txRate: 0, slotMs: 40, tokens: 2, poolsPerKind: 1 });
  const rpc = new JsonRpcHttpServer({ backend: chain, port: 0 });
  const { url } = await rpc.start();
  chain.start();
  return { chain, rpc, url };
}

/** Waits until a sent signature is confirmed on the chain. */
export async function landed(chain: SimChain, signature: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const s = chain.signatureStatus(signature);
    if (s !== null && s.confirmationStatus !== 'processed') {
      if (s.err !== null) throw new Error(`funding failed: ${JSON.stringify(s.err)}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('funding transaction did not land');
}

/** Sends `lamports` and `usdc` atoms from a genesis trader to `to`. */
export async function fund(chain: SimChain, to: string, lamports: bigint, usdc: bigint): Promise<void> {
  const trader = chain.genesis.actors.traders[0]!;
  const source = trader.tokenAccounts.get(USDC_MINT)!;
  const tx = buildTransaction({
    payer: trader.keypair,
    instructions: [
      systemTransferInstruction(trader.keypair.address, to, lamports),
      createAssociatedTokenIdempotentInstruction({ payer: trader.keypair.address, owner: to, mint: USDC_MINT }),
      tokenTransferInstruction(source, associatedTokenAddress(to, USDC_MINT), trader.keypair.address, usdc),
    ],
    recentBlockhash: chain.latestBlockhash('confirmed').blockhash,
    signers: [trader.keypair],
  });
  await landed(chain, chain.sendTransaction(tx));
}

export function balances(chain: SimChain, address: string): { sol: bigint; usdc: bigint } {
  const ata = chain.getTokenBalance(associatedTokenAddress(address, USDC_MINT), 'confirmed');
  return { sol: chain.getAccount(address, 'confirmed')?.lamports ?? 0n, usdc: ata?.amount ?? 0n };
}
