import { SYSVAR_INSTRUCTIONS_ID, base58 } from '../chain/index.js';
import { KLEND_PROGRAM_ID, LENDING_MARKET_ACCOUNT_SIZE, LENDING_MARKET_DISCRIMINATOR, RESERVE_ACCOUNT_SIZE, RESERVE_DISCRIMINATOR, ReserveOffset, feeSfOfBps, lendingMarketAuthority } from '../lending/index.js';
import type { AccountRecord } from './chain-backend.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import type { SimToken } from './market-view.js';
import { programAccount, tokenAccountRecord } from './pool-genesis.js';
import { seededBytes32 } from './prng.js';

/**
 * A Kamino Lending market at genesis, for flash loans: one lending market and a reserve for each
 * of wrapped SOL and USDC, their supply vaults holding liquidity to lend (owned by the market
 * authority PDA, as klend's are) and empty fee vaults. Reserve accounts are klend's size with its
 * discriminator, market, liquidity accounts, available amount and flash-loan fee at their offsets
 * (engine/lending); the fee is `FLASH_LOAN_FEE_BPS`, spec 03's 0.05 %.
 */

export const FLASH_LOAN_FEE_BPS = 5;
/** What each reserve can lend, in whole tokens. */
const LIQUIDITY: Readonly<Record<string, bigint>> = { [WSOL_MINT]: 200_000n, [USDC_MINT]: 40_000_000n };

export interface SimReserve {
  reserve: string;
  liquidityMint: string;
  supplyVault: string;
  feeVault: string;
  feeSf: bigint;
}

export interface SimLendingMarket {
  programId: string;
  lendingMarket: string;
  reserves: SimReserve[];
}

function address(seed: number, label: string): string {
  return base58.encode(seededBytes32(seed, `lending:${label}`));
}

export function addLendingAccounts(seed: number, tokens: readonly SimToken[], accounts: Map<string, AccountRecord>): SimLendingMarket {
  const lendingMarket = address(seed, 'market');
  const authority = lendingMarketAuthority(KLEND_PROGRAM_ID, lendingMarket);
  const marketData = new Uint8Array(LENDING_MARKET_ACCOUNT_SIZE);
  marketData.set(LENDING_MARKET_DISCRIMINATOR, 0);
  accounts.set(lendingMarket, programAccount(KLEND_PROGRAM_ID, marketData));
  const reserves: SimReserve[] = [];
  for (const token of tokens) {
    const whole = LIQUIDITY[token.mint];
    if (whole === undefined) continue;
    const reserve = address(seed, `reserve:${token.mint}`);
    const supplyVault = address(seed, `supply:${token.mint}`);
    const feeVault = address(seed, `fee:${token.mint}`);
    const data = new Uint8Array(RESERVE_ACCOUNT_SIZE);
    const view = new DataView(data.buffer);
    const liquidity = whole * 10n ** BigInt(token.decimals);
    const feeSf = feeSfOfBps(FLASH_LOAN_FEE_BPS);
    data.set(RESERVE_DISCRIMINATOR, 0);
    data.set(base58.decodePubkey(lendingMarket), ReserveOffset.lendingMarket);
    data.set(base58.decodePubkey(token.mint), ReserveOffset.liquidityMint);
    data.set(base58.decodePubkey(supplyVault), ReserveOffset.supplyVault);
    data.set(base58.decodePubkey(feeVault), ReserveOffset.feeVault);
    view.setBigUint64(ReserveOffset.availableAmount, liquidity, true);
    view.setBigUint64(ReserveOffset.flashLoanFeeSf, feeSf, true);
    accounts.set(reserve, programAccount(KLEND_PROGRAM_ID, data));
    accounts.set(supplyVault, tokenAccountRecord(token, authority, liquidity));
    accounts.set(feeVault, tokenAccountRecord(token, authority, 0n));
    reserves.push({ reserve, liquidityMint: token.mint, supplyVault, feeVault, feeSf });
  }
  return { programId: KLEND_PROGRAM_ID, lendingMarket, reserves };
}

/** The accounts every flash loan of this market names, for the shared lookup table. */
export function lendingLookupAddresses(lending: SimLendingMarket): string[] {
  const out = [lending.programId, lending.lendingMarket, lendingMarketAuthority(lending.programId, lending.lendingMarket), SYSVAR_INSTRUCTIONS_ID];
  for (const r of lending.reserves) out.push(r.reserve, r.supplyVault, r.feeVault);
  return out;
}
