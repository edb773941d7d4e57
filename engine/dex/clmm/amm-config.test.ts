import { ClmmConfigLayout } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import { SwapFailure, SwapMode } from '../types.js';
import { CLMM_AMM_CONFIG_ACCOUNT_SIZE, decodeClmmAmmConfig, encodeClmmAmmConfig, withAmmConfig } from './amm-config.js';
import { decodeClmmPool, encodeClmmPool } from './clmm-pool.js';
import { quoteClmm } from './clmm-swap.js';

const OWNER = 'GThUX1Atko4tqhN2NaiTazWSeFWMuiUvfFnyJyUghFMJ';
const FUND_OWNER = 'FundHfY8oo8J9KYGyfXFFuQCHe7Z1VBNmsj84eMcdYs4';
const CONFIG = {
  bump: 252,
  index: 4,
  owner: OWNER,
  protocolFeeRate: 120_000,
  tradeFeeRate: 2_500,
  tickSpacing: 60,
  fundFeeRate: 40_000,
  fundOwner: FUND_OWNER,
};

describe('Raydium CLMM AmmConfig', () => {
  it('writes what the Raydium SDK ClmmConfigLayout reads, and reads what it writes', () => {
    const bytes = encodeClmmAmmConfig(CONFIG);
    expect(bytes.length).toBe(ClmmConfigLayout.span);
    expect(bytes.length).toBe(CLMM_AMM_CONFIG_ACCOUNT_SIZE);
    const sdk = ClmmConfigLayout.decode(Buffer.from(bytes));
    expect({
      bump: sdk.bump,
      index: sdk.index,
      owner: sdk.owner.toBase58(),
      protocolFeeRate: sdk.protocolFeeRate,
      tradeFeeRate: sdk.tradeFeeRate,
      tickSpacing: sdk.tickSpacing,
      fundFeeRate: sdk.fundFeeRate,
      fundOwner: sdk.fundOwner.toBase58(),
    }).toEqual(CONFIG);
    sdk.tradeFeeRate = 10_000;
    const buffer = Buffer.alloc(ClmmConfigLayout.span);
    ClmmConfigLayout.encode(sdk, buffer);
    buffer.set(bytes.subarray(0, 8), 0);
    expect(decodeClmmAmmConfig(new Uint8Array(buffer), 'cfg')).toEqual({ ...CONFIG, tradeFeeRate: 10_000, address: 'cfg' });
  });

  it('gives a pool its fee rate, and only its own config', () => {
    const pool = decodeClmmPool(
      encodeClmmPool({
        tokenA: OWNER,
        tokenB: FUND_OWNER,
        vaultA: OWNER,
        vaultB: FUND_OWNER,
        ammConfig: FUND_OWNER,
        sqrtPrice: 1n << 64n,
        tick: 0,
        tickSpacing: 60,
        liquidity: 10n ** 12n,
      }),
    );
    expect(quoteClmm(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 1000n })).toMatchObject({
      ok: false,
      reason: SwapFailure.MissingFeeRate,
    });
    const config = decodeClmmAmmConfig(encodeClmmAmmConfig(CONFIG), FUND_OWNER);
    expect(withAmmConfig(pool, config).feeRate).toBe(2_500);
    expect(thrownCode(() => withAmmConfig(pool, { ...config, address: OWNER }))).toBe(ErrorCode.AccountInvalid);
  });

  it('rejects wrong sizes, discriminators and fee rates of 100% or more', () => {
    const bytes = encodeClmmAmmConfig(CONFIG);
    expect(thrownCode(() => decodeClmmAmmConfig(bytes.subarray(0, 116)))).toBe(ErrorCode.AccountSize);
    const wrong = bytes.slice();
    wrong[0] = 0;
    expect(thrownCode(() => decodeClmmAmmConfig(wrong))).toBe(ErrorCode.AccountDiscriminator);
    expect(thrownCode(() => decodeClmmAmmConfig(encodeClmmAmmConfig({ ...CONFIG, tradeFeeRate: 1_000_000 })))).toBe(
      ErrorCode.AccountInvalid,
    );
  });
});
