/**
 * Test access to the Meteora DLMM SDK (@meteora-ag/dlmm, a devDependency), the reference the
 * DLMM module is checked against. Its ESM build does not import here, so the CJS build is loaded
 * with `createRequire`. The SDK's own types are not used: this file declares the little it needs.
 *
 * - `sdkCoder()`: the SDK's Anchor program coder (built from the IDL the SDK ships), which encodes
 *   and decodes `lbPair` and `binArray` accounts with camelCase field names.
 * - `sdkDlmm()`: a `DLMM` instance built from decoded accounts without any RPC call, so that its
 *   `swapQuote` / `swapQuoteExactOut` run offline exactly as they do against a cluster.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The bits of a bn.js BN the tests use. */
export interface Bn {
  toString(base?: number): string;
  isZero(): boolean;
}
type BnCtor = new (value: string | number | bigint, base?: number) => Bn;

/** A web3.js PublicKey, only as the SDK needs it. */
export interface PublicKeyLike {
  toBase58(): string;
  equals(other: PublicKeyLike): boolean;
}
type PublicKeyCtor = new (value: string | Uint8Array) => PublicKeyLike;

export interface SdkAccountsCoder {
  /** Anchor's own encode writes into a 1000-byte buffer: too small for a BinArray (10136 B). */
  encode(name: 'lbPair' | 'binArray', account: unknown): Promise<Buffer>;
  decode<T = SdkRecord>(name: 'lbPair' | 'binArray', data: Buffer): T;
  /** The IDL layouts behind encode and decode, keyed by IDL account name. */
  accountLayouts: Map<string, { discriminator: number[]; layout: { encode(account: unknown, into: Buffer): number } }>;
}

/** A decoded SDK account or nested struct: camelCase fields, BN for wide integers. */
export type SdkRecord = Record<string, unknown>;

export interface SdkSwapQuote {
  consumedInAmount: Bn;
  outAmount: Bn;
  fee: Bn;
  protocolFee: Bn;
}

export interface SdkSwapQuoteExactOut {
  inAmount: Bn;
  outAmount: Bn;
  fee: Bn;
  protocolFee: Bn;
}

export interface SdkBinArrayAccount {
  publicKey: PublicKeyLike;
  account: SdkRecord;
}

export interface SdkDlmm {
  swapQuote(inAmount: Bn, swapForY: boolean, allowedSlippage: Bn, binArrays: SdkBinArrayAccount[], isPartialFill?: boolean): SdkSwapQuote;
  swapQuoteExactOut(outAmount: Bn, swapForY: boolean, allowedSlippage: Bn, binArrays: SdkBinArrayAccount[]): SdkSwapQuoteExactOut;
}

export interface SdkBinQuote {
  amountIn: Bn;
  amountOut: Bn;
  fee: Bn;
  protocolFee: Bn;
}

export interface SdkStaticParameters {
  baseFactor: number;
  filterPeriod: number;
  decayPeriod: number;
  reductionFactor: number;
  variableFeeControl: number;
  maxVolatilityAccumulator: number;
  protocolShare: number;
  baseFeePowerFactor: number;
}

export interface SdkVariableParameters {
  volatilityAccumulator: number;
  volatilityReference: number;
  indexReference: number;
  lastUpdateTimestamp: Bn;
}

/** The SDK's pure functions used as references. */
export interface DlmmSdk {
  IDL: { accounts: { name: string; discriminator: number[] }[] };
  getQPriceFromId(binId: Bn, binStep: Bn): Bn;
  getPriceOfBinByBinId(binId: number, binStep: number): { toString(): string };
  binIdToBinArrayIndex(binId: Bn): Bn;
  getBaseFee(binStep: number, s: SdkStaticParameters): Bn;
  getVariableFee(binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>): Bn;
  getTotalFee(binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>): Bn;
  computeFee(binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>, amount: Bn): Bn;
  computeFeeFromAmount(binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>, amount: Bn): Bn;
  computeProtocolFee(fee: Bn, s: Pick<SdkStaticParameters, 'protocolShare'>): Bn;
  splitFee(tradingFee: Bn, protocolShare: Bn, mmAmountIn: Bn, totalAmountIn: Bn): { fee: Bn; protocolFee: Bn };
  swapExactInQuoteAtBin(bin: SdkRecord, binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>, inAmount: Bn, swapForY: boolean, supportLimitOrder: boolean, feeOnInput: boolean): SdkBinQuote;
  swapExactOutQuoteAtBin(bin: SdkRecord, binStep: number, s: SdkStaticParameters, v: Pick<SdkVariableParameters, 'volatilityAccumulator'>, outAmount: Bn, swapForY: boolean, supportLimitOrder: boolean, feeOnInput: boolean): SdkBinQuote;
  isSupportLimitOrder(lbPair: SdkRecord): boolean;
  getFeeMode(lbPair: SdkRecord, swapForY: boolean): { feeOnInput: boolean; feeOnTokenX: boolean };
  updateReference(activeId: number, v: SdkVariableParameters, s: SdkStaticParameters, currentTimestamp: number): void;
  updateVolatilityAccumulator(v: SdkVariableParameters, s: SdkStaticParameters, activeId: number): void;
  createProgram(connection: unknown): { coder: { accounts: SdkAccountsCoder } };
}

type DlmmCtor = DlmmSdk & {
  new (
    pubkey: PublicKeyLike,
    program: unknown,
    lbPair: SdkRecord,
    binArrayBitmapExtension: null,
    tokenX: unknown,
    tokenY: unknown,
    rewards: unknown[],
    clock: unknown,
    opt: unknown,
  ): SdkDlmm;
};

let cached: { sdk: DlmmCtor; program: { coder: { accounts: SdkAccountsCoder } } } | undefined;

function load(): NonNullable<typeof cached> {
  if (cached === undefined) {
    // The CJS build's module.exports is the DLMM class with every named export copied onto it.
    const sdk = require('@meteora-ag/dlmm') as DlmmCtor;
    const { Connection } = require('@solana/web3.js') as { Connection: new (url: string) => unknown };
    // A Connection makes no request until used; the quote paths never use it.
    const program = sdk.createProgram(new Connection('http://127.0.0.1:1'));
    cached = { sdk, program };
  }
  return cached;
}

export function dlmmSdk(): DlmmSdk {
  return load().sdk;
}

export function sdkCoder(): SdkAccountsCoder {
  return load().program.coder.accounts;
}

export const BN: BnCtor = require('bn.js') as BnCtor;
export const PublicKey: PublicKeyCtor = (require('@solana/web3.js') as { PublicKey: PublicKeyCtor }).PublicKey;

export function bn(value: bigint | number): Bn {
  return new BN(value.toString());
}

export function big(value: Bn): bigint {
  return BigInt(value.toString());
}

/** A mint without Token-2022 extensions: the SDK's transfer-fee helpers then leave amounts alone. */
const PLAIN_MINT = { tlvData: Buffer.alloc(0) };

/** A DLMM instance over an SDK-decoded LbPair, with no bitmap extension and no RPC behind it. */
export function sdkDlmm(lbPairAddress: string, lbPair: SdkRecord): SdkDlmm {
  const { sdk, program } = load();
  return new sdk(
    new PublicKey(lbPairAddress),
    program,
    lbPair,
    null,
    { mint: PLAIN_MINT },
    { mint: PLAIN_MINT },
    [],
    { epoch: new BN(0) },
    undefined,
  );
}
