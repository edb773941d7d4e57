/**
 * Raydium AMM v4 on an `AmmInfo` taken from mainnet (engine/dex/test-fixtures/README.md names the
 * repository, path and commit): the SOL-USDC pool decodes as Raydium SDK v2's
 * `liquidityStateV4Layout` reads the same bytes, and quotes equal to the SDK's `computeAmountOut`
 * (the program's exact in) on the reserves the SDK's `getRpcPoolInfos` derives from the same
 * AmmInfo (vault balance less `need_take_pnl`), to the unit. That dump holds the AmmInfo only, not
 * its vaults: the vault token accounts there are written by @solana/spl-token's AccountLayout with
 * the AmmInfo's own vault mints and stated balances.
 *
 * A second snapshot of the same pool (`with-vaults/`) holds the AmmInfo and both real vault token
 * accounts of one moment: it quotes, from those bytes alone, the source's pinned worked examples
 * and the SDK's computeAmountOut on the reserves the SDK derives from the same accounts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import LiquidityModule from '@raydium-io/raydium-sdk-v2/lib/raydium/liquidity/liquidity.js';
import { liquidityStateV4Layout, toBN } from '@raydium-io/raydium-sdk-v2';
import { AccountLayout } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import { withAmmVaultAccounts } from '../pool-accounts.js';
import { RAYDIUM_AMM_V4_PROGRAM_ID } from '../program-ids.js';
import { quoteSwap } from '../quote.js';
import { SwapMode, type AmmPool } from '../types.js';
import { ammV4CanonicalAuthority, ammV4Keys, decodeAmmInfo } from './amm-info.js';

const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const BYTES = new Uint8Array(readFileSync(join(import.meta.dirname, '../test-fixtures/raydium-amm-v4', POOL, 'amm_info.bin')));

interface LiquidityClass {
  prototype: { computeAmountOut(this: unknown, params: unknown): { amountOut: { toString(): string }; fee: { toString(): string } } };
}
const liquidityExport = LiquidityModule as unknown as LiquidityClass | { default: LiquidityClass };
const sdkComputeAmountOut = ('prototype' in liquidityExport ? liquidityExport : liquidityExport.default).prototype.computeAmountOut;

const sdk = liquidityStateV4Layout.decode(Buffer.from(BYTES));
const authority = ammV4CanonicalAuthority(RAYDIUM_AMM_V4_PROGRAM_ID).address;

function vault(mint: string, amount: bigint): { owner: string; data: Uint8Array } {
  const data = Buffer.alloc(AccountLayout.span);
  AccountLayout.encode(
    {
      mint: new PublicKey(mint),
      owner: new PublicKey(authority),
      amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: 1,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return { owner: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', data: new Uint8Array(data) };
}

type SdkAmmInfo = ReturnType<typeof liquidityStateV4Layout.decode>;

/** The SDK's exact in on the reserves its getRpcPoolInfos computes: vault amount less need_take_pnl. */
function sdkOut(vaultA: bigint, vaultB: bigint, aToB: boolean, amountIn: bigint, state: SdkAmmInfo = sdk): bigint {
  const sdk = state;
  const baseMint = sdk.baseMint.toBase58();
  const quoteMint = sdk.quoteMint.toBase58();
  const result = sdkComputeAmountOut.call(
    {},
    {
      poolInfo: {
        version: 4,
        mintA: { address: baseMint, decimals: sdk.baseDecimal.toNumber() },
        mintB: { address: quoteMint, decimals: sdk.quoteDecimal.toNumber() },
        baseReserve: toBN((vaultA - BigInt(sdk.baseNeedTakePnl.toString())).toString()),
        quoteReserve: toBN((vaultB - BigInt(sdk.quoteNeedTakePnl.toString())).toString()),
      },
      amountIn: toBN(amountIn.toString()),
      mintIn: aToB ? baseMint : quoteMint,
      mintOut: aToB ? quoteMint : baseMint,
      slippage: 0,
    },
  );
  return BigInt(result.amountOut.toString());
}

describe(`Raydium AMM v4 mainnet AmmInfo ${POOL}`, () => {
  it("decodes as the Raydium SDK's liquidityStateV4Layout reads the same bytes", () => {
    expect(BYTES.length).toBe(liquidityStateV4Layout.span);
    const ours = decodeAmmInfo(BYTES, POOL);
    expect(ours).toMatchObject({
      tokenA: sdk.baseMint.toBase58(),
      tokenB: sdk.quoteMint.toBase58(),
      status: BigInt(sdk.status.toString()),
      feeNumerator: BigInt(sdk.swapFeeNumerator.toString()),
      feeDenominator: BigInt(sdk.swapFeeDenominator.toString()),
      vaultA: sdk.baseVault.toBase58(),
      vaultB: sdk.quoteVault.toBase58(),
      needTakePnlA: BigInt(sdk.baseNeedTakePnl.toString()),
      needTakePnlB: BigInt(sdk.quoteNeedTakePnl.toString()),
      decimalsA: sdk.baseDecimal.toNumber(),
      decimalsB: sdk.quoteDecimal.toNumber(),
      poolOpenTime: BigInt(sdk.poolOpenTime.toString()),
    });
    // What a trader sees on mainnet: SOL-USDC, SwapOnly (6), 25 / 10,000, decimals 9 and 6.
    expect([ours.tokenA, ours.tokenB, ours.status, ours.feeNumerator, ours.feeDenominator]).toEqual([
      'So11111111111111111111111111111111111111112',
      'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      6n,
      25n,
      10_000n,
    ]);
    // The swap accounts come from the same bytes, with the program's canonical authority.
    const keys = ammV4Keys(RAYDIUM_AMM_V4_PROGRAM_ID, POOL, BYTES);
    expect([keys.authority, keys.coinVault, keys.pcVault, keys.openOrders, keys.market]).toEqual([
      authority,
      sdk.baseVault.toBase58(),
      sdk.quoteVault.toBase58(),
      sdk.openOrders.toBase58(),
      sdk.marketId.toBase58(),
    ]);
  });

  it('alone, has no reserves and refuses to quote', () => {
    const quote = quoteSwap(decodeAmmInfo(BYTES, POOL), { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000n });
    expect(quote).toMatchObject({ ok: false, reason: 'insufficient_liquidity_data' });
  });

  it("quotes as the SDK's computeAmountOut on the same AmmInfo and vaults, to the unit; exact out is the least such input", () => {
    const pnlA = BigInt(sdk.baseNeedTakePnl.toString());
    const pnlB = BigInt(sdk.quoteNeedTakePnl.toString());
    // Balances of a deep pool (SOL near 150 USDC) and of a shallow one, above need_take_pnl.
    const balances: [bigint, bigint][] = [
      [pnlA + 25_000n * 10n ** 9n, pnlB + 3_750_000n * 10n ** 6n],
      [pnlA + 12n * 10n ** 9n, pnlB + 1_900n * 10n ** 6n],
    ];
    let compared = 0;
    for (const [a, b] of balances) {
      const pool = withAmmVaultAccounts(decodeAmmInfo(BYTES, POOL), vault(sdk.baseMint.toBase58(), a), vault(sdk.quoteMint.toBase58(), b));
      if (typeof pool === 'string') throw new Error(pool);
      expect([(pool as AmmPool).reserveA, (pool as AmmPool).reserveB]).toEqual([a - pnlA, b - pnlB]);
      for (const aToB of [true, false]) {
        const reserveIn = aToB ? a - pnlA : b - pnlB;
        for (const share of [1_000_000_000n, 1_000_000n, 10_000n, 100n, 3n]) {
          const amountIn = reserveIn / share;
          const ours = quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount: amountIn });
          const reference = sdkOut(a, b, aToB, amountIn);
          if (reference === 0n) {
            expect(ours).toMatchObject({ ok: false, reason: 'zero_amount' });
            continue;
          }
          expect(ours.ok && ours.amountOut, `in ${amountIn} aToB ${aToB}`).toBe(reference);
          // ExactOut of that output: the program's ceilings give the least input the SDK's (the
          // program's) exact in turns into at least the output.
          const exactOut = quoteSwap(pool, { aToB, mode: SwapMode.ExactOut, amount: reference });
          if (!exactOut.ok) throw new Error(exactOut.message);
          expect(sdkOut(a, b, aToB, exactOut.amountIn) >= reference).toBe(true);
          expect(sdkOut(a, b, aToB, exactOut.amountIn - 1n) < reference).toBe(true);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThanOrEqual(18);
  });

  it("refuses vaults below the AmmInfo's need_take_pnl, as the program fails them", () => {
    const pnlA = BigInt(sdk.baseNeedTakePnl.toString());
    const pool = withAmmVaultAccounts(decodeAmmInfo(BYTES, POOL), vault(sdk.baseMint.toBase58(), pnlA - 1n), vault(sdk.quoteMint.toBase58(), 10n ** 12n));
    const quote = typeof pool === 'string' ? undefined : quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 1_000n });
    expect(quote?.ok ?? false).toBe(false);
  });
});

describe(`Raydium AMM v4 mainnet AmmInfo ${POOL} with its real vaults`, () => {
  const dir = join(import.meta.dirname, '../test-fixtures/raydium-amm-v4', POOL, 'with-vaults');
  const info = new Uint8Array(readFileSync(join(dir, 'amm_info.bin')));
  const coinVault = new Uint8Array(readFileSync(join(dir, 'coin_vault.bin')));
  const pcVault = new Uint8Array(readFileSync(join(dir, 'pc_vault.bin')));
  const state = liquidityStateV4Layout.decode(Buffer.from(info));
  const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
  const decoded = decodeAmmInfo(info, POOL);
  const pool = withAmmVaultAccounts(decoded, { owner: TOKEN_PROGRAM, data: coinVault }, { owner: TOKEN_PROGRAM, data: pcVault });
  if (typeof pool === 'string') throw new Error(pool);
  const spl = [AccountLayout.decode(Buffer.from(coinVault)), AccountLayout.decode(Buffer.from(pcVault))] as const;

  it("are the AmmInfo's vaults: its mints, the program's authority, initialized SPL token accounts", () => {
    expect([info.length, coinVault.length, pcVault.length]).toEqual([752, AccountLayout.span, AccountLayout.span]);
    expect([spl[0].mint.toBase58(), spl[1].mint.toBase58()]).toEqual([state.baseMint.toBase58(), state.quoteMint.toBase58()]);
    expect([spl[0].owner.toBase58(), spl[1].owner.toBase58()]).toEqual([authority, authority]);
    expect([spl[0].state, spl[1].state]).toEqual([1, 1]);
    expect([decoded.vaultA, decoded.vaultB]).toEqual(['DQyrAcCrDXQ7NeoqGgDCZwBvWDcYmFCjSb9JtteuvPpz', 'HLmqeL62xR1QoZ1HKKbXRrdN1p3phKpxRMb2VVopvBBz']);
    // The values the snapshot holds: vault balances and need_take_pnl.
    expect([spl[0].amount, spl[1].amount]).toEqual([66_599_328_743_661n, 5_433_939_748_454n]);
    expect([decoded.needTakePnlA, decoded.needTakePnlB]).toEqual([354_631_774n, 28_907_558n]);
    expect([(pool as AmmPool).reserveA, (pool as AmmPool).reserveB]).toEqual([66_599_328_743_661n - 354_631_774n, 5_433_939_748_454n - 28_907_558n]);
  });

  it("quotes the source's pinned worked examples: 1 SOL to 81.386311 USDC, 1 USDC to 0.012225534 SOL", () => {
    expect(quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000_000n })).toMatchObject({ ok: true, amountOut: 81_386_311n, fee: 2_500_000n });
    expect(quoteSwap(pool, { aToB: false, mode: SwapMode.ExactIn, amount: 1_000_000n })).toMatchObject({ ok: true, amountOut: 12_225_534n, fee: 2_500n });
  });

  it("quotes as the SDK's computeAmountOut on the same accounts, both ways; exact out is the least such input", () => {
    const [a, b] = [spl[0].amount, spl[1].amount];
    let compared = 0;
    for (const aToB of [true, false]) {
      const reserveIn = aToB ? (pool as AmmPool).reserveA : (pool as AmmPool).reserveB;
      for (const share of [10_000_000_000n, 1_000_000n, 10_000n, 100n, 7n, 2n]) {
        const amountIn = reserveIn / share;
        const reference = sdkOut(a, b, aToB, amountIn, state);
        const ours = quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount: amountIn });
        if (reference === 0n) {
          expect(ours.ok).toBe(false);
          continue;
        }
        expect(ours.ok && ours.amountOut, `in ${amountIn} aToB ${aToB}`).toBe(reference);
        const exactOut = quoteSwap(pool, { aToB, mode: SwapMode.ExactOut, amount: reference });
        if (!exactOut.ok) throw new Error(exactOut.message);
        expect(sdkOut(a, b, aToB, exactOut.amountIn, state) >= reference).toBe(true);
        expect(sdkOut(a, b, aToB, exactOut.amountIn - 1n, state) < reference).toBe(true);
        compared++;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(10);
  });
});
