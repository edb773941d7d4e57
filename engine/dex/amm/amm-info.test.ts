import { liquidityStateV4Layout } from '@raydium-io/raydium-sdk-v2';
import { AccountLayout } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { ErrorCode } from '../../errors.js';
import { Prng } from '../../prng.js';
import { withAmmVaultAccounts } from '../pool-accounts.js';
import { RAYDIUM_AMM_V4_PROGRAM_ID } from '../program-ids.js';
import { quoteSwap } from '../quote.js';
import { AmmLayout, DecoderRegistry } from '../registry.js';
import { thrownCode } from '../testing/errors.js';
import { Dex, SwapFailure, SwapMode, type AmmPool } from '../types.js';
import { AmmInfoOffset, decodeAmmInfo, encodeAmmInfo, withAmmReserves, withAmmVaultAmounts, type AmmInfoFields } from './amm-info.js';
import { AMM_ACCOUNT_SIZE, encodeSimplifiedAmmPool } from './amm-pool.js';

const rng = new Prng(0xa3_4f0);
const key = (): string => base58.encode(rng.bytes(32));
const u64 = (): bigint => new DataView(rng.bytes(8).buffer).getBigUint64(0, true);

/** Every field of AmmInfo random. */
function randomFields(): AmmInfoFields {
  const fields: Record<string, bigint | string> = {};
  for (const name of Object.keys(AmmInfoOffset)) fields[name] = u64();
  for (const name of ['coinVault', 'pcVault', 'coinMint', 'pcMint', 'lpMint', 'openOrders', 'market', 'marketProgram', 'targetOrders', 'ammOwner']) fields[name] = key();
  fields.coinDecimals = BigInt(rng.range(0, 12));
  fields.pcDecimals = BigInt(rng.range(0, 12));
  return fields as unknown as AmmInfoFields;
}

/** An SPL Token account (the SDK's own AccountLayout encodes it) of `mint` holding `amount`. */
function vaultAccount(mint: string, amount: bigint): { owner: string; data: Uint8Array } {
  const data = Buffer.alloc(AccountLayout.span);
  AccountLayout.encode(
    {
      mint: new PublicKey(mint),
      owner: new PublicKey(key()),
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

describe('Raydium AMM v4 AmmInfo', () => {
  it('decodes every field the swap reads where Raydium SDK v2 liquidityStateV4Layout reads it, on 500 random accounts', () => {
    expect(liquidityStateV4Layout.span).toBe(AMM_ACCOUNT_SIZE);
    for (let i = 0; i < 500; i++) {
      const fields = randomFields();
      const bytes = encodeAmmInfo(fields);
      const sdk = liquidityStateV4Layout.decode(Buffer.from(bytes));
      const pool = decodeAmmInfo(bytes, 'pool');
      expect(pool).toEqual({
        dex: Dex.Amm,
        address: 'pool',
        tokenA: sdk.baseMint.toBase58(),
        tokenB: sdk.quoteMint.toBase58(),
        status: BigInt(sdk.status.toString()),
        reserveA: 0n,
        reserveB: 0n,
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
      // The rest of the layout, field by field, through the SDK's names.
      expect([sdk.nonce, sdk.lpMint.toBase58(), sdk.openOrders.toBase58(), sdk.marketId.toBase58(), sdk.marketProgramId.toBase58(), sdk.targetOrders.toBase58(), sdk.owner.toBase58(), sdk.lpReserve].map(String)).toEqual(
        [fields.nonce, fields.lpMint, fields.openOrders, fields.market, fields.marketProgram, fields.targetOrders, fields.ammOwner, fields.lpAmount].map(String),
      );
      expect([sdk.tradeFeeNumerator, sdk.pnlDenominator, sdk.minSize, sdk.volMaxCutRatio, sdk.systemDecimalValue, sdk.padding[1]].map(String)).toEqual(
        [fields.tradeFeeNumerator, fields.pnlDenominator, fields.minSize, fields.volMaxCutRatio, fields.sysDecimalValue, fields.recentEpoch].map(String),
      );
      // And the SDK's encoding of what it decoded is the same bytes.
      const again = Buffer.alloc(AMM_ACCOUNT_SIZE); // (program padding1 at 624..688 is the SDK's withdrawQueue / lpVault: zero)
      liquidityStateV4Layout.encode(sdk, again);
      expect(again.equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('rejects accounts that are not exactly 752 bytes', () => {
    expect(thrownCode(() => decodeAmmInfo(new Uint8Array(751)))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeAmmInfo(new Uint8Array(753)))).toBe(ErrorCode.AccountSize);
  });

  it('takes its reserves from the vaults less need_take_pnl, as the program and the SDK\'s getRpcPoolInfos do', () => {
    const fields = { ...randomFields(), status: 6n, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n, needTakePnlCoin: 1_000n, needTakePnlPc: 7n };
    const pool = decodeAmmInfo(encodeAmmInfo(fields));
    // Decoded alone: no reserves, and no quote.
    expect(quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 100n })).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidityData });
    const vaults = [vaultAccount(fields.coinMint, 5_000_000n), vaultAccount(fields.pcMint, 9_000_000n)] as const;
    const withVaults = withAmmVaultAccounts(pool, vaults[0], vaults[1]) as AmmPool;
    expect([withVaults.reserveA, withVaults.reserveB, withVaults.vaultAmounts]).toEqual([4_999_000n, 8_999_993n, [5_000_000n, 9_000_000n]]);
    expect(withAmmReserves(pool, 4_999_000n, 8_999_993n)).toEqual(withVaults);
    expect(quoteSwap(withVaults, { aToB: true, mode: SwapMode.ExactIn, amount: 100_000n })).toMatchObject({ ok: true });
    // A vault of another mint, a missing or uninitialized vault: no reserves.
    expect(withAmmVaultAccounts(pool, vaults[1], vaults[0])).toMatch(/holds/);
    expect(withAmmVaultAccounts(pool, null, vaults[1])).toMatch(/does not exist/);
    expect(withAmmVaultAccounts(pool, { owner: '', data: new Uint8Array(165) }, vaults[1])).toMatch(/not an initialized token account/);
    // A vault below its need_take_pnl: the program fails CheckedSubOverflow; the quote refuses.
    expect(quoteSwap(withAmmVaultAmounts(pool, 999n, 9_000_000n), { aToB: false, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
  });

  it('uses the account\'s own swap fee, refuses one the program cannot apply, and a WaitingTrade pool before it opens', () => {
    const base = { ...randomFields(), status: 6n, needTakePnlCoin: 0n, needTakePnlPc: 0n, poolOpenTime: 1_000n };
    const quote = (f: Partial<AmmInfoFields>, nowSeconds?: bigint) =>
      quoteSwap(withAmmVaultAmounts(decodeAmmInfo(encodeAmmInfo({ ...base, ...f })), 10n ** 9n, 10n ** 9n), { aToB: true, mode: SwapMode.ExactIn, amount: 10_000n }, nowSeconds === undefined ? {} : { nowSeconds });
    // fee = ceil(10_000 * 30 / 10_000) = 30, not the 25 of the common default.
    expect(quote({ swapFeeNumerator: 30n, swapFeeDenominator: 10_000n })).toMatchObject({ ok: true, fee: 30n });
    expect(quote({ swapFeeNumerator: 1n, swapFeeDenominator: 0n })).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
    expect(quote({ swapFeeNumerator: 5n, swapFeeDenominator: 5n })).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
    const waiting = { status: 7n, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n };
    expect(quote(waiting, 999n)).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
    expect(quote(waiting, 1_000n)).toMatchObject({ ok: true });
    expect(quote({ ...waiting, status: 2n })).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
  });
});

describe('the dexa_amm layout setting', () => {
  const simplified = encodeSimplifiedAmmPool({ status: 6n, reserveA: 1_000n, reserveB: 2_000n, tokenA: key(), tokenB: key() });
  const fixtureProgram = key();

  it('reads AmmInfo by default, for the real program id', () => {
    const registry = new DecoderRegistry();
    expect(registry.ammLayout).toBe(AmmLayout.RaydiumAmmV4);
    const decoded = registry.decodeAccount(RAYDIUM_AMM_V4_PROGRAM_ID, simplified);
    // Spec 02's reserves at 64/72 are AmmInfo's min_size / vol_max_cut_ratio: never reserves.
    expect(decoded.kind === 'pool' && decoded.pool.dex === Dex.Amm && [decoded.pool.reserveA, decoded.pool.reserveB, decoded.pool.vaultAmounts]).toEqual([0n, 0n, undefined]);
  });

  it('reads spec 02\'s simplified layout only when set to, and only for another program id', () => {
    const registry = new DecoderRegistry({ programIds: { [Dex.Amm]: fixtureProgram }, ammLayout: AmmLayout.Spec02Simplified });
    const decoded = registry.decodeAccount(fixtureProgram, simplified);
    expect(decoded.kind === 'pool' && decoded.pool.dex === Dex.Amm && [decoded.pool.reserveA, decoded.pool.reserveB, decoded.pool.vaultA]).toEqual([1_000n, 2_000n, undefined]);
    expect(thrownCode(() => new DecoderRegistry({ ammLayout: AmmLayout.Spec02Simplified }))).toBe(ErrorCode.ConfigInvalid);
    expect(thrownCode(() => new DecoderRegistry({ programIds: { [Dex.Amm]: RAYDIUM_AMM_V4_PROGRAM_ID }, ammLayout: AmmLayout.Spec02Simplified }))).toBe(ErrorCode.ConfigInvalid);
    expect(thrownCode(() => new DecoderRegistry({ ammLayout: 'other' as AmmLayout }))).toBe(ErrorCode.ConfigInvalid);
  });
});
