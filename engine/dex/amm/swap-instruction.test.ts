import { PublicKey } from '@solana/web3.js';
import {
  makeSwapFixedInInstruction,
  makeSwapFixedOutInstruction,
  swapBaseInV2Instruction,
  swapBaseOutV2Instruction,
  toBN,
} from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { Prng } from '../../prng.js';
import { RAYDIUM_AMM_V4_PROGRAM_ID } from '../program-ids.js';
import { plainOurs, plainWeb3 } from '../testing/instructions.js';
import { SwapMode } from '../types.js';
import { ErrorCode } from '../../errors.js';
import { ammV4Authority, ammV4CanonicalAuthority, ammV4Keys, encodeAmmInfo } from './amm-info.js';
import { AMM_ACCOUNT_SIZE, AmmStatus } from './amm-pool.js';
import { AmmV4Instruction, ammV4SwapInstruction, decodeAmmV4SwapData, type AmmV4MarketKeys } from './swap-instruction.js';

const rng = new Prng(404);
const key = (): string => base58.encode(rng.bytes(32));
const pk = (k: string) => new PublicKey(k);
const bn = (v: bigint) => toBN(v.toString());
const u64 = (): bigint => new DataView(rng.bytes(8).buffer).getBigUint64(0, true);

function randomCase() {
  const authority = ammV4CanonicalAuthority(RAYDIUM_AMM_V4_PROGRAM_ID).address;
  const keys = { programId: RAYDIUM_AMM_V4_PROGRAM_ID, pool: key(), authority, coinVault: key(), pcVault: key() };
  const market: AmmV4MarketKeys = {
    openOrders: key(),
    targetOrders: key(),
    marketProgram: key(),
    market: key(),
    bids: key(),
    asks: key(),
    eventQueue: key(),
    coinVault: key(),
    pcVault: key(),
    vaultSigner: key(),
  };
  return { keys, market, owner: key(), source: key(), destination: key(), amount: u64(), threshold: u64() };
}

/** Raydium SDK v2 pool keys (its `AmmV4Keys` JSON shape, base58 strings). */
function sdkPoolKeys(c: ReturnType<typeof randomCase>) {
  return {
    programId: c.keys.programId,
    id: c.keys.pool,
    authority: c.keys.authority,
    openOrders: c.market.openOrders,
    targetOrders: c.market.targetOrders!,
    vault: { A: c.keys.coinVault, B: c.keys.pcVault },
    marketProgramId: c.market.marketProgram,
    marketId: c.market.market,
    marketBids: c.market.bids,
    marketAsks: c.market.asks,
    marketEventQueue: c.market.eventQueue,
    marketBaseVault: c.market.coinVault,
    marketQuoteVault: c.market.pcVault,
    marketAuthority: c.market.vaultSigner,
  } as unknown as Parameters<typeof makeSwapFixedInInstruction>[0]['poolKeys'];
}

describe('Raydium AMM v4 swap instructions', () => {
  it('equal the Raydium SDK v2 builders byte for byte: V2 (8 accounts) and V1 (18 accounts)', () => {
    for (let i = 0; i < 24; i++) {
      const c = randomCase();
      const user = { owner: c.owner, userSource: c.source, userDestination: c.destination, amount: c.amount, otherAmountThreshold: c.threshold };
      // SwapBaseInV2 / SwapBaseOutV2
      const inV2 = ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactIn, ...user });
      expect(plainOurs(inV2)).toEqual(
        plainWeb3(swapBaseInV2Instruction(pk(c.keys.programId), pk(c.keys.pool), pk(c.keys.authority), pk(c.keys.coinVault), pk(c.keys.pcVault), pk(c.source), pk(c.destination), pk(c.owner), bn(c.amount), bn(c.threshold))),
      );
      const outV2 = ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactOut, ...user });
      // ExactOut: amount is the output, the threshold the maximum input; the SDK takes (maxAmountIn, amountOut).
      expect(plainOurs(outV2)).toEqual(
        plainWeb3(swapBaseOutV2Instruction(pk(c.keys.programId), pk(c.keys.pool), pk(c.keys.authority), pk(c.keys.coinVault), pk(c.keys.pcVault), pk(c.source), pk(c.destination), pk(c.owner), bn(c.threshold), bn(c.amount))),
      );
      // SwapBaseIn / SwapBaseOut with the market (the SDK passes target orders: 18 accounts)
      const userKeys = { tokenAccountIn: pk(c.source), tokenAccountOut: pk(c.destination), owner: pk(c.owner) };
      const inV1 = ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactIn, market: c.market, ...user });
      expect(inV1.accounts).toHaveLength(18);
      expect(plainOurs(inV1)).toEqual(
        plainWeb3(makeSwapFixedInInstruction({ poolKeys: sdkPoolKeys(c), userKeys, amountIn: bn(c.amount), minAmountOut: bn(c.threshold) }, 4)),
      );
      const outV1 = ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactOut, market: c.market, ...user });
      expect(plainOurs(outV1)).toEqual(
        plainWeb3(makeSwapFixedOutInstruction({ poolKeys: sdkPoolKeys(c), userKeys, maxAmountIn: bn(c.threshold), amountOut: bn(c.amount) }, 4)),
      );
      // The program's own builder leaves the target orders out: 17 accounts.
      const { targetOrders: _, ...withoutTarget } = c.market;
      expect(ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactIn, market: withoutTarget, ...user }).accounts).toHaveLength(17);
    }
  });

  it('decode what they encode, as the program unpacks it', () => {
    const c = randomCase();
    const ix = ammV4SwapInstruction({ keys: c.keys, mode: SwapMode.ExactOut, owner: c.owner, userSource: c.source, userDestination: c.destination, amount: 5n, otherAmountThreshold: 9n });
    expect(decodeAmmV4SwapData(ix.data!)).toEqual({ tag: AmmV4Instruction.SwapBaseOutV2, first: 9n, second: 5n });
    // Bytes past the two u64 are ignored by the program's unpack; fewer fail.
    expect(decodeAmmV4SwapData(Uint8Array.of(...ix.data!, 7, 7))).not.toBeNull();
    expect(decodeAmmV4SwapData(ix.data!.subarray(0, 16))).toBeNull();
    expect(decodeAmmV4SwapData(Uint8Array.of(10, ...new Uint8Array(16)))).toBeNull();
  });

  it('derive the mainnet authority, and read the keys from an AmmInfo account', () => {
    const canonical = ammV4CanonicalAuthority(RAYDIUM_AMM_V4_PROGRAM_ID);
    expect(canonical).toEqual({ address: '5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1', nonce: 254 });
    expect(ammV4Authority(RAYDIUM_AMM_V4_PROGRAM_ID, 254)).toBe(canonical.address);
    const [coin, pc, mintA, mintB] = [key(), key(), key(), key()];
    const data = encodeAmmInfo({
      status: AmmStatus.SwapOnly, nonce: 254n, coinDecimals: 9n, pcDecimals: 6n, coinVault: coin, pcVault: pc, coinMint: mintA, pcMint: mintB,
      swapFeeNumerator: 25n, swapFeeDenominator: 10_000n,
    });
    expect(data).toHaveLength(AMM_ACCOUNT_SIZE);
    const keys = ammV4Keys(RAYDIUM_AMM_V4_PROGRAM_ID, 'pool', data);
    expect(keys).toMatchObject({ authority: canonical.address, nonce: 254, coinVault: coin, pcVault: pc, coinMint: mintA, pcMint: mintB, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n });
    expect(() => ammV4Keys(RAYDIUM_AMM_V4_PROGRAM_ID, 'pool', new Uint8Array(10))).toThrow(
      expect.objectContaining({ code: ErrorCode.AccountSize, context: expect.objectContaining({ account: 'AmmInfo', expected: 752, actual: 10, address: 'pool' }) }),
    );
  });
});
