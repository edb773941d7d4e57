/**
 * Token-2022 mints on account bytes taken from mainnet (engine/dex/test-fixtures/README.md, section
 * "Token-2022 mints", names where each came from): PYUSD and USDG (eight extensions, a zero
 * transfer fee, a permanent delegate, a transfer hook with no program, metadata), BERN (a real
 * transfer fee that changes between its older and newer epoch), Solayer sUSD (interest-bearing,
 * metadata), an NFT of the WNS standard (a live transfer hook program, group member pointer) and
 * PUMP (transfer hook, metadata) with one of its token accounts (immutable owner, transfer hook
 * account).
 *
 * Each decodes as @solana/spl-token reads the same bytes, with the concrete values those bytes hold,
 * and BERN's fee is taken in swap quotes exactly as the program takes it on each transfer
 * (spl-token `calculateEpochFee`, whirlpools-core `tryApplyTransferFee` /
 * `tryReverseApplyTransferFee`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryApplyTransferFee, tryReverseApplyTransferFee } from '@orca-so/whirlpools-core';
import {
  calculateEpochFee,
  getTransferHookAccount,
  unpackAccount,
  getExtensionTypes,
  getInterestBearingMintConfigState,
  getMetadataPointerState,
  getPermanentDelegate,
  getTransferFeeConfig,
  getTransferHook,
  TOKEN_2022_PROGRAM_ID as SPL_TOKEN_2022,
  unpackMint,
} from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import { quoteConstantProduct } from '../amm/constant-product.js';
import { quoteSwap } from '../quote.js';
import { Dex, SwapMode, type AmmPool } from '../types.js';
import { tokenAccountAmount } from '../token-account.js';
import { decodeMint, type DecodedMint } from './mint.js';
import { withheldAmount } from './token-account.js';
import { ExtensionType, TOKEN_2022_PROGRAM_ID } from './token-programs.js';
import type { TransferFeeConfig } from './transfer-fee.js';

const DIR = join(import.meta.dirname, '../test-fixtures/token-2022');

const PYUSD = '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo';
const USDG = '2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH';
const BERN = 'CKfatsPMUf8SkiURsDXs7eK6GWb4Jsd6UDbs7twMCWxo';
const SUSD = 'susdabGDNbhrnCa6ncrYo81u4s9GM8ecK2UwMyZiq4X';
const WNS_NFT = '8eDYWjDKmCR5B3UJm95gaG8zCdT5anWakTZG1PyWpBm9';
const PUMP = 'pumpCmXqMfrsAkQ5r49WcJnRayYRqmXz6ae8H7H9Dfn';
const PUMP_POOL_VAULT = '8TqK4PL3x7zWR2dNinr1LMi8Uf4vTRSFE2Ev1yYW9bhC';
const MINTS = [PYUSD, USDG, BERN, SUSD, WNS_NFT, PUMP];

/** Paxos' authority over PYUSD and USDG (fee, delegate, hook, metadata, close, freeze). */
const PAXOS = '2apBGMsS6ti9RyF5TwQTDswXBWskiJP2LD4cUEDqYJjk';
const WNS_PROGRAM = 'wns1gDLt8fgLcGhWi5MqAqgXpwEP1JftKE9eZnXS1HM';
const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** Extension type numbers the program defines (interface/src/extension/mod.rs `ExtensionType`). */
const Ext = {
  TransferFeeConfig: 1,
  MintCloseAuthority: 3,
  ConfidentialTransferMint: 4,
  ImmutableOwner: 7,
  InterestBearingConfig: 10,
  TransferHookAccount: 15,
  PermanentDelegate: 12,
  TransferHook: 14,
  ConfidentialTransferFeeConfig: 16,
  MetadataPointer: 18,
  TokenMetadata: 19,
  GroupMemberPointer: 22,
} as const;

function bytesOf(address: string): Uint8Array {
  return new Uint8Array(readFileSync(join(DIR, address, 'mint.bin')));
}

function splMint(address: string) {
  const data = Buffer.from(bytesOf(address));
  return unpackMint(new PublicKey(address), { data, owner: SPL_TOKEN_2022, lamports: 1, executable: false }, SPL_TOKEN_2022);
}

function ours(address: string): DecodedMint {
  return decodeMint(TOKEN_2022_PROGRAM_ID, bytesOf(address), address);
}

describe.each(MINTS)('real Token-2022 mint %s', (address) => {
  it('is a Token-2022 mint with extensions: base, zero padding, account type 1, TLV entries', () => {
    const data = bytesOf(address);
    expect(data.length).toBeGreaterThan(166);
    expect(data[45]).toBe(1); // is_initialized
    expect(data.subarray(82, 165).every((b) => b === 0)).toBe(true);
    expect(data[165]).toBe(1); // AccountType::Mint
  });

  it('decodes as @solana/spl-token reads the same bytes', () => {
    const spl = splMint(address);
    const mint = ours(address);
    expect(mint.programId).toBe(TOKEN_2022_PROGRAM_ID);
    expect(mint.address).toBe(address);
    expect(mint.decimals).toBe(spl.decimals);
    expect(mint.supply).toBe(spl.supply);
    expect(mint.mintAuthority).toBe(spl.mintAuthority?.toBase58() ?? null);
    expect(mint.freezeAuthority).toBe(spl.freezeAuthority?.toBase58() ?? null);
    expect(mint.extensionTypes).toEqual(getExtensionTypes(spl.tlvData));
    const fee = getTransferFeeConfig(spl);
    expect(mint.transferFeeConfig === undefined).toBe(fee === null);
    if (fee !== null) {
      expect(mint.transferFeeConfig).toEqual({
        transferFeeConfigAuthority: fee.transferFeeConfigAuthority.equals(PublicKey.default) ? null : fee.transferFeeConfigAuthority.toBase58(),
        withdrawWithheldAuthority: fee.withdrawWithheldAuthority.equals(PublicKey.default) ? null : fee.withdrawWithheldAuthority.toBase58(),
        withheldAmount: fee.withheldAmount,
        olderTransferFee: fee.olderTransferFee,
        newerTransferFee: fee.newerTransferFee,
      });
    }
  });
});

describe('the values the real mints hold', () => {
  it('PYUSD and USDG: eight extensions, a zero fee, Paxos as delegate, a hook authority with no hook program', () => {
    for (const [address, feeEpoch] of [
      [PYUSD, 605n],
      [USDG, 722n],
    ] as const) {
      const mint = ours(address);
      expect(mint.decimals).toBe(6);
      expect(mint.freezeAuthority).toBe(PAXOS);
      expect(mint.extensionTypes).toEqual([
        Ext.MintCloseAuthority,
        Ext.PermanentDelegate,
        Ext.TransferFeeConfig,
        Ext.ConfidentialTransferMint,
        Ext.ConfidentialTransferFeeConfig,
        Ext.TransferHook,
        Ext.MetadataPointer,
        Ext.TokenMetadata,
      ]);
      const zero = { epoch: feeEpoch, maximumFee: 0n, transferFeeBasisPoints: 0 };
      expect(mint.transferFeeConfig).toEqual({
        transferFeeConfigAuthority: PAXOS,
        withdrawWithheldAuthority: PAXOS,
        withheldAmount: 0n,
        olderTransferFee: zero,
        newerTransferFee: zero,
      });
      const spl = splMint(address);
      expect(getPermanentDelegate(spl)?.delegate.toBase58()).toBe(PAXOS);
      expect(getTransferHook(spl)?.programId.toBase58()).toBe(SYSTEM_PROGRAM);
      expect(getMetadataPointerState(spl)?.metadataAddress?.toBase58()).toBe(address);
    }
    expect(ours(PYUSD).supply).toBe(665_165_666_541_413n);
    expect(ours(USDG).supply).toBe(703_101_467_914_178n);
  });

  it('BERN: 4.20 % before epoch 698, 2.69 % from it, no mint or freeze authority', () => {
    const mint = ours(BERN);
    expect(mint).toMatchObject({ decimals: 5, supply: 94_911_678_592_440n, mintAuthority: null, freezeAuthority: null, extensionTypes: [ExtensionType.TransferFeeConfig] });
    expect(mint.transferFeeConfig).toEqual({
      transferFeeConfigAuthority: '7MyTjmRygJoCuDBUtAuSugiYZFULD2SWaoUTmtjtRDzD',
      withdrawWithheldAuthority: '7MyTjmRygJoCuDBUtAuSugiYZFULD2SWaoUTmtjtRDzD',
      withheldAmount: 18_729_147_403n,
      olderTransferFee: { epoch: 624n, maximumFee: 3_906_250_000_000_000_000n, transferFeeBasisPoints: 420 },
      newerTransferFee: { epoch: 698n, maximumFee: 3_906_250_000_000_000_000n, transferFeeBasisPoints: 269 },
    });
  });

  it('sUSD: interest-bearing with metadata, no transfer fee', () => {
    const mint = ours(SUSD);
    expect(mint).toMatchObject({ decimals: 6, extensionTypes: [Ext.MetadataPointer, Ext.InterestBearingConfig, Ext.TokenMetadata] });
    expect(mint.transferFeeConfig).toBeUndefined();
    expect(getInterestBearingMintConfigState(splMint(SUSD))).toMatchObject({ currentRate: 2623, preUpdateAverageRate: 741 });
  });

  it('the WNS NFT: a live transfer hook program, a group member pointer, no transfer fee', () => {
    const mint = ours(WNS_NFT);
    expect(mint).toMatchObject({ decimals: 0, supply: 1n });
    expect(mint.extensionTypes).toEqual([Ext.MetadataPointer, Ext.GroupMemberPointer, Ext.TransferHook, Ext.MintCloseAuthority, Ext.TokenMetadata]);
    expect(mint.transferFeeConfig).toBeUndefined();
    expect(getTransferHook(splMint(WNS_NFT))?.programId.toBase58()).toBe(WNS_PROGRAM);
  });
});

describe('PUMP and a pool vault of it', () => {
  it('the mint: a transfer hook with no program, metadata, no authorities, no transfer fee', () => {
    const mint = ours(PUMP);
    expect(mint).toMatchObject({ decimals: 6, supply: 852_390_112_954_832_790n, mintAuthority: null, freezeAuthority: null });
    expect(mint.extensionTypes).toEqual([Ext.TransferHook, Ext.MetadataPointer, Ext.TokenMetadata]);
    expect(mint.transferFeeConfig).toBeUndefined();
    expect(getTransferHook(splMint(PUMP))?.programId.toBase58()).toBe(SYSTEM_PROGRAM);
  });

  it('the token account: its amount and extensions as @solana/spl-token reads them, nothing withheld', () => {
    const data = new Uint8Array(readFileSync(join(DIR, PUMP, `token_account_${PUMP_POOL_VAULT}.bin`)));
    const spl = unpackAccount(new PublicKey(PUMP_POOL_VAULT), { data: Buffer.from(data), owner: SPL_TOKEN_2022, lamports: 1, executable: false }, SPL_TOKEN_2022);
    expect(spl.mint.toBase58()).toBe(PUMP);
    expect(getExtensionTypes(spl.tlvData)).toEqual([Ext.ImmutableOwner, Ext.TransferHookAccount]);
    expect(getTransferHookAccount(spl)?.transferring).toBe(false);
    expect(tokenAccountAmount(data)).toBe(spl.amount);
    expect(tokenAccountAmount(data)).toBe(4_144_782_727_340_999n);
    expect(withheldAmount(data, PUMP_POOL_VAULT)).toBeUndefined();
  });
});

describe('swap quotes take the real BERN fee as the program does', () => {
  const bern = ours(BERN).transferFeeConfig!;
  const splFee = getTransferFeeConfig(splMint(BERN))!;
  const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  // BERN is token A (its fee on the way in when selling BERN, on the way out when buying it).
  const pool: AmmPool = { dex: Dex.Amm, address: 'BERNpoo1111111111111111111111111111111111111', tokenA: BERN, tokenB: USDC, status: 6n, reserveA: 4_000_000_000_000_000n, reserveB: 900_000_000_000n, feeNumerator: 25n, feeDenominator: 10_000n };
  const orcaFee = (config: TransferFeeConfig, epoch: bigint) => {
    const f = epoch >= config.newerTransferFee.epoch ? config.newerTransferFee : config.olderTransferFee;
    return { feeBps: f.transferFeeBasisPoints, maxFee: f.maximumFee };
  };

  it.each([650n, 698n, 720n])('at epoch %s, both directions, exact in and exact out', (epoch) => {
    const fees = { epoch, tokenA: bern };
    for (const amount of [1n, 99n, 12_345_678n, 1_000_000_000_000n]) {
      // Selling BERN, exact in: the pool receives what the transfer leaves of `amount`.
      const sell = quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount }, undefined, fees);
      const withheldIn = calculateEpochFee(splFee, epoch, amount);
      expect(withheldIn).toBe(amount - tryApplyTransferFee(amount, orcaFee(bern, epoch)));
      const innerSell = quoteConstantProduct(pool, { aToB: true, mode: SwapMode.ExactIn, amount: amount - withheldIn });
      if (innerSell.ok && sell.ok) {
        expect(sell).toMatchObject({ amountIn: amount, amountOut: innerSell.amountOut, transferFees: { input: withheldIn, output: 0n, poolAmountIn: amount - withheldIn } });
      } else {
        expect(sell.ok).toBe(false);
      }

      // Buying BERN, exact in: the trader receives the pool's output less the fee on it.
      const usdcIn = amount * 1_000n;
      const buy = quoteSwap(pool, { aToB: false, mode: SwapMode.ExactIn, amount: usdcIn }, undefined, fees);
      const innerBuy = quoteConstantProduct(pool, { aToB: false, mode: SwapMode.ExactIn, amount: usdcIn });
      if (!innerBuy.ok || !buy.ok) throw new Error('the pool quotes this buy');
      const withheldOut = calculateEpochFee(splFee, epoch, innerBuy.amountOut);
      expect(buy).toMatchObject({ amountIn: usdcIn, amountOut: innerBuy.amountOut - withheldOut, transferFees: { input: 0n, output: withheldOut } });

      // Buying exactly `amount` BERN: the pool must send the least amount that arrives as `amount`.
      const exactBuy = quoteSwap(pool, { aToB: false, mode: SwapMode.ExactOut, amount }, undefined, fees);
      if (!exactBuy.ok) throw new Error(exactBuy.message);
      const poolOut = tryReverseApplyTransferFee(amount, orcaFee(bern, epoch));
      expect(poolOut - calculateEpochFee(splFee, epoch, poolOut)).toBe(amount);
      expect(exactBuy.transferFees).toMatchObject({ output: poolOut - amount, poolAmountOut: poolOut });
      expect(exactBuy.amountOut).toBe(amount);
    }
  });

  it('switches from 420 to 269 basis points at epoch 698, as the program does', () => {
    const amount = 1_000_000_000n;
    const at = (epoch: bigint) => {
      const q = quoteSwap(pool, { aToB: true, mode: SwapMode.ExactIn, amount }, undefined, { epoch, tokenA: bern });
      if (!q.ok) throw new Error(q.message);
      return q.transferFees!.input;
    };
    expect(at(697n)).toBe(42_000_000n);
    expect(at(698n)).toBe(26_900_000n);
    expect(at(697n)).toBe(calculateEpochFee(splFee, 697n, amount));
    expect(at(698n)).toBe(calculateEpochFee(splFee, 698n, amount));
  });
});
