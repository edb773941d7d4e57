/**
 * Raydium CLMM `AmmConfig` (docs/wire-formats.md §4.2): Borsh, 117 bytes, discriminator daf42168cbcb2b6f.
 * It holds the trade fee of every pool that points at it:
 *
 *   8 bump u8; 9 index u16; 11 owner; 43 protocol_fee_rate u32; 47 trade_fee_rate u32
 *   (millionths); 51 tick_spacing u16; 53 fund_fee_rate u32; 57 padding u32; 61 fund_owner;
 *   93 [u64; 3].
 *
 * Offsets checked against the Raydium SDK v2 `ClmmConfigLayout` (span 117) by the tests.
 */
import {
  expectDiscriminator,
  expectSize,
  hexBytes,
  invalidAccount,
  readPubkey,
  readU16,
  readU32,
  readU8,
  writePubkey,
  writeU16,
  writeU32,
  writeU8,
} from '../account-bytes.js';
import { Dex, type ConcentratedPool } from '../types.js';

export const CLMM_AMM_CONFIG_ACCOUNT_SIZE = 117;
export const CLMM_AMM_CONFIG_DISCRIMINATOR = hexBytes('daf42168cbcb2b6f');

const NAME = 'Raydium CLMM AmmConfig';
const FEE_RATE_LIMIT = 1_000_000;

export interface ClmmAmmConfig {
  address?: string;
  bump: number;
  index: number;
  owner: string;
  /** Share of the trade fee to the protocol, millionths of the fee. */
  protocolFeeRate: number;
  /** Trade fee, millionths of the input (or output) amount. */
  tradeFeeRate: number;
  tickSpacing: number;
  fundFeeRate: number;
  fundOwner: string;
}

export function decodeClmmAmmConfig(data: Uint8Array, address?: string): ClmmAmmConfig {
  expectSize(data, CLMM_AMM_CONFIG_ACCOUNT_SIZE, Dex.Clmm, NAME, address);
  expectDiscriminator(data, CLMM_AMM_CONFIG_DISCRIMINATOR, Dex.Clmm, NAME, address);
  const tradeFeeRate = readU32(data, 47);
  if (tradeFeeRate >= FEE_RATE_LIMIT) {
    throw invalidAccount(Dex.Clmm, NAME, `trade fee rate ${tradeFeeRate} is not below 1e6`, address);
  }
  const config: ClmmAmmConfig = {
    bump: readU8(data, 8),
    index: readU16(data, 9),
    owner: readPubkey(data, 11),
    protocolFeeRate: readU32(data, 43),
    tradeFeeRate,
    tickSpacing: readU16(data, 51),
    fundFeeRate: readU32(data, 53),
    fundOwner: readPubkey(data, 61),
  };
  if (address !== undefined) config.address = address;
  return config;
}

export function encodeClmmAmmConfig(config: Omit<ClmmAmmConfig, 'address'>, out?: Uint8Array): Uint8Array {
  const data = out ?? new Uint8Array(CLMM_AMM_CONFIG_ACCOUNT_SIZE);
  expectSize(data, CLMM_AMM_CONFIG_ACCOUNT_SIZE, Dex.Clmm, NAME);
  if (out !== undefined) data.fill(0);
  data.set(CLMM_AMM_CONFIG_DISCRIMINATOR, 0);
  writeU8(data, 8, config.bump);
  writeU16(data, 9, config.index);
  writePubkey(data, 11, config.owner);
  writeU32(data, 43, config.protocolFeeRate);
  writeU32(data, 47, config.tradeFeeRate);
  writeU16(data, 51, config.tickSpacing);
  writeU32(data, 53, config.fundFeeRate);
  writePubkey(data, 61, config.fundOwner);
  return data;
}

/**
 * The pool with its fee rate taken from its AmmConfig. Throws TpError(AccountInvalid) when both
 * addresses are known and the config is not the pool's.
 */
export function withAmmConfig(pool: ConcentratedPool, config: ClmmAmmConfig): ConcentratedPool {
  if (pool.ammConfig !== undefined && config.address !== undefined && pool.ammConfig !== config.address) {
    throw invalidAccount(
      Dex.Clmm,
      NAME,
      `config ${config.address} is not the pool's AmmConfig ${pool.ammConfig}`,
      pool.address,
    );
  }
  return { ...pool, feeRate: config.tradeFeeRate };
}
