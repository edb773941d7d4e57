/**
 * Builds LbPair and BinArray accounts with the SDK's Anchor coder, independently of our encoders,
 * and turns SDK-decoded accounts into the shapes the SDK's quote functions take.
 */
import type { BinArray, DlmmPool } from '../../types.js';
import type { DlmmBin, DlmmBinArray } from '../bin-array.js';
import { DEFAULT_PUBKEY } from '../constants.js';
import type { DlmmLbPair } from '../lb-pair.js';
import { bn, PublicKey, sdkCoder, type SdkBinArrayAccount, type SdkRecord } from './meteora-sdk.js';

const LB_PAIR_DISCRIMINATOR = [0x21, 0x0b, 0x31, 0x62, 0xb5, 0x65, 0xb1, 0x0d];
const BIN_ARRAY_DISCRIMINATOR = [0x5c, 0x8e, 0x5c, 0xdc, 0x05, 0x94, 0x46, 0xb5];

/** An all-zero account of that kind, decoded by the SDK: a template with every IDL field. */
function zeroAccount(name: 'lbPair' | 'binArray', size: number, discriminator: number[]): SdkRecord {
  const data = Buffer.alloc(size);
  data.set(discriminator, 0);
  return sdkCoder().decode(name, data);
}

/** The SDK (camelCase, BN, PublicKey) form of an LbPair; fields we do not model stay zero. */
export function sdkLbPairObject(pool: DlmmPool | DlmmLbPair): SdkRecord {
  const lb = pool as Partial<DlmmLbPair>;
  const account = zeroAccount('lbPair', 904, LB_PAIR_DISCRIMINATOR);
  const p = pool.parameters;
  account.parameters = {
    ...(account.parameters as SdkRecord),
    baseFactor: p.baseFactor,
    filterPeriod: p.filterPeriod,
    decayPeriod: p.decayPeriod,
    reductionFactor: p.reductionFactor,
    variableFeeControl: p.variableFeeControl,
    maxVolatilityAccumulator: p.maxVolatilityAccumulator,
    minBinId: p.minBinId,
    maxBinId: p.maxBinId,
    protocolShare: p.protocolShare,
    baseFeePowerFactor: p.baseFeePowerFactor,
    functionType: p.functionType,
    collectFeeMode: p.collectFeeMode,
  };
  const v = pool.vParameters;
  account.vParameters = {
    ...(account.vParameters as SdkRecord),
    volatilityAccumulator: v.volatilityAccumulator,
    volatilityReference: v.volatilityReference,
    indexReference: v.indexReference,
    lastUpdateTimestamp: bn(v.lastUpdateTimestamp),
  };
  account.pairType = lb.pairType ?? 0;
  account.activeId = pool.activeId;
  account.binStep = pool.binStep;
  account.status = pool.status;
  account.activationType = lb.activationType ?? 0;
  account.tokenXMint = new PublicKey(pool.tokenA);
  account.tokenYMint = new PublicKey(pool.tokenB);
  account.reserveX = new PublicKey(pool.reserveX);
  account.reserveY = new PublicKey(pool.reserveY);
  account.protocolFee = { amountX: bn(lb.protocolFeeX ?? 0n), amountY: bn(lb.protocolFeeY ?? 0n) };
  const rewards = account.rewardInfos as SdkRecord[];
  account.rewardInfos = rewards.map((reward, i) => ({
    ...reward,
    mint: new PublicKey(lb.rewardMints?.[i] ?? DEFAULT_PUBKEY),
  }));
  account.oracle = new PublicKey(lb.oracle ?? DEFAULT_PUBKEY);
  account.binArrayBitmap = pool.binArrayBitmap.map((word) => bn(word));
  account.lastUpdatedAt = bn(lb.lastUpdatedAt ?? 0n);
  account.activationPoint = bn(lb.activationPoint ?? 0n);
  account.tokenMintXProgramFlag = lb.tokenXProgramFlag ?? 0;
  account.tokenMintYProgramFlag = lb.tokenYProgramFlag ?? 0;
  account.version = lb.version ?? 0;
  return account;
}

/** The SDK form of a BinArray; bin fields we do not model stay zero. */
export function sdkBinArrayObject(array: BinArray | DlmmBinArray): SdkRecord {
  const account = zeroAccount('binArray', 10_136, BIN_ARRAY_DISCRIMINATOR);
  const template = (account.bins as SdkRecord[])[0]!;
  account.index = bn(array.index);
  account.version = (array as Partial<DlmmBinArray>).version ?? 0;
  account.lbPair = new PublicKey(array.pool);
  account.bins = array.bins.map((b) => {
    const bin = b as Partial<DlmmBin> & typeof b;
    return {
      ...template,
      amountX: bn(bin.amountX),
      amountY: bn(bin.amountY),
      price: bn(bin.price),
      liquiditySupply: bn(bin.liquiditySupply),
      openOrderAmount: bn(bin.openOrderAmount ?? 0n),
      processedOrderRemainingAmount: bn(bin.processedOrderRemainingAmount ?? 0n),
      limitOrderAskSide: bin.limitOrderAskSide === true ? 1 : 0,
    };
  });
  return account;
}

/** Encodes with the SDK's Anchor coder (`coder.accounts.encode`). */
export async function sdkEncodeLbPair(pool: DlmmPool | DlmmLbPair): Promise<Uint8Array> {
  return new Uint8Array(await sdkCoder().encode('lbPair', sdkLbPairObject(pool)));
}

/**
 * Encodes with the coder's IDL layout for `BinArray` and the IDL discriminator: the coder's own
 * `encode` cannot, as it writes into a fixed 1000-byte buffer.
 */
export function sdkEncodeBinArray(array: BinArray | DlmmBinArray): Uint8Array {
  const entry = sdkCoder().accountLayouts.get('BinArray') ?? sdkCoder().accountLayouts.get('binArray');
  if (entry === undefined) throw new Error('the SDK coder has no BinArray layout');
  const body = Buffer.alloc(16_384);
  const length = entry.layout.encode(sdkBinArrayObject(array), body);
  const data = new Uint8Array(8 + length);
  data.set(entry.discriminator, 0);
  data.set(body.subarray(0, length), 8);
  return data;
}

export function sdkDecodeLbPair(data: Uint8Array): SdkRecord {
  return sdkCoder().decode('lbPair', Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

export function sdkDecodeBinArray(data: Uint8Array): SdkRecord {
  return sdkCoder().decode('binArray', Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

/** A decoded bin array as `swapQuote` takes it; the key only has to be unique. */
export function sdkBinArrayAccount(decoded: SdkRecord, key: string): SdkBinArrayAccount {
  return { publicKey: new PublicKey(key), account: decoded };
}
