/**
 * The decoder registry (spec 02 "Pool decoding"): maps an account's owner program to its DEX and,
 * within a program, tells the account types apart by Anchor discriminator (the AMM has none and is
 * known by its size). Program ids are configurable (`pools.dexProgram`), defaults in
 * program-ids.ts.
 *
 * Every failure throws a TpError (UnknownOwner, AccountSize, AccountDiscriminator,
 * AccountInvalid) and is counted by DEX and error code in `stats()`, so the scanner can log and
 * export them; accounts of an unknown owner are counted under `unknown`.
 */
import { ErrorCode, TpError, isTpError } from '../errors.js';
import { DISCRIMINATOR_BYTES, hasDiscriminator } from './account-bytes.js';
import { decodeAmmInfo } from './amm/amm-info.js';
import { decodeSimplifiedAmmPool } from './amm/amm-pool.js';
import { CLMM_AMM_CONFIG_DISCRIMINATOR, decodeClmmAmmConfig, type ClmmAmmConfig } from './clmm/amm-config.js';
import { CLMM_POOL_DISCRIMINATOR, decodeClmmPool } from './clmm/clmm-pool.js';
import { CLMM_TICK_ARRAY_DISCRIMINATOR, decodeClmmTickArray } from './clmm/tick-array.js';
import {
  DLMM_BIN_ARRAY_DISCRIMINATOR,
  DLMM_LB_PAIR_DISCRIMINATOR,
  decodeBinArray,
  decodeLbPair,
} from './dlmm/index.js';
import { RAYDIUM_AMM_V4_PROGRAM_ID, programIdsWith } from './program-ids.js';
import {
  DEX_KINDS,
  Dex,
  type BinArray,
  type ConcentratedPool,
  type DecodedPool,
  type Tick,
  type TickArray,
} from './types.js';
import { decodeWhirlpoolTickArray, isWhirlpoolTickArray } from './whirlpool/tick-array.js';
import { WHIRLPOOL_DISCRIMINATOR, decodeWhirlpool } from './whirlpool/whirlpool-account.js';

export type DecodedAccount =
  | { kind: 'pool'; dex: Dex; pool: DecodedPool }
  | { kind: 'tickArray'; dex: ConcentratedPool['dex']; tickArray: TickArray }
  | { kind: 'ammConfig'; dex: typeof Dex.Clmm; ammConfig: ClmmAmmConfig }
  | { kind: 'binArray'; dex: typeof Dex.Dlmm; binArray: BinArray };

export type DecodedAccountKind = DecodedAccount['kind'];

/** Label for accounts whose owner is none of the configured programs. */
export const UNKNOWN_DEX = 'unknown';
export type DexLabel = Dex | typeof UNKNOWN_DEX;

export interface DecoderStats {
  /** Accounts decoded, by DEX and account kind. */
  decoded: Record<Dex, Record<DecodedAccountKind, number>>;
  /** Failures by DEX (or `unknown` owner) and error code (TP_ERR_...). */
  failures: Record<DexLabel, Partial<Record<ErrorCode, number>>>;
}

/**
 * How dexa_amm pool accounts are read: Raydium AMM v4 `AmmInfo` (the default, the real program's
 * layout: reserves from the vaults), or spec 02's simplified layout (reserves @64/@72, fee
 * 25/10000), kept only for the spec's own fixtures and never allowed for the real program id.
 */
export const AmmLayout = { RaydiumAmmV4: 'raydium-amm-v4', Spec02Simplified: 'spec02-simplified' } as const;
export type AmmLayout = (typeof AmmLayout)[keyof typeof AmmLayout];
export const AMM_LAYOUTS: readonly AmmLayout[] = [AmmLayout.RaydiumAmmV4, AmmLayout.Spec02Simplified];

export interface DecoderRegistryOptions {
  /** Program id per DEX; missing entries keep the mainnet defaults. */
  programIds?: Partial<Record<Dex, string>>;
  /**
   * Layout of dexa_amm accounts. Default `raydium-amm-v4`. `spec02-simplified` with the dexa_amm
   * program id left at (or set to) Raydium AMM v4's real id is refused (TP_ERR_CONFIG_INVALID).
   */
  ammLayout?: AmmLayout;
  /**
   * The tick spacing of a pool, if known: tick arrays do not store it, so without it the
   * `Tick.index` of Whirlpool ticks (and of uninitialized Raydium ticks) is NaN.
   */
  tickSpacingOf?: (pool: string) => number | undefined;
}

export class DecoderRegistry {
  private readonly dexByOwner = new Map<string, Dex>();
  private readonly programIds: Readonly<Record<Dex, string>>;
  /** The dexa_amm layout this registry reads. */
  readonly ammLayout: AmmLayout;
  private readonly tickSpacingOf: ((pool: string) => number | undefined) | undefined;
  private readonly decoded: DecoderStats['decoded'];
  private readonly failures: DecoderStats['failures'];

  constructor(options: DecoderRegistryOptions = {}) {
    this.programIds = Object.freeze(programIdsWith(options.programIds));
    this.ammLayout = options.ammLayout ?? AmmLayout.RaydiumAmmV4;
    if (!AMM_LAYOUTS.includes(this.ammLayout)) {
      throw new TpError(ErrorCode.ConfigInvalid, `unknown AMM layout ${String(this.ammLayout)} (expected ${AMM_LAYOUTS.join(' or ')})`, {
        context: { setting: 'pools.ammLayout' },
      });
    }
    if (this.ammLayout === AmmLayout.Spec02Simplified && this.programIds[Dex.Amm] === RAYDIUM_AMM_V4_PROGRAM_ID) {
      throw new TpError(
        ErrorCode.ConfigInvalid,
        `the spec 02 simplified AMM layout cannot be read for Raydium AMM v4 (${RAYDIUM_AMM_V4_PROGRAM_ID}): its accounts are AmmInfo; set pools.dexProgram.dexa_amm to the fixtures' own program id or pools.ammLayout to ${AmmLayout.RaydiumAmmV4}`,
        { context: { setting: 'pools.ammLayout', programId: RAYDIUM_AMM_V4_PROGRAM_ID } },
      );
    }
    this.tickSpacingOf = options.tickSpacingOf;
    for (const dex of DEX_KINDS) {
      const id = this.programIds[dex];
      const taken = this.dexByOwner.get(id);
      if (taken !== undefined) {
        throw new TpError(ErrorCode.ConfigInvalid, `program id ${id} is configured for both ${taken} and ${dex}`, {
          context: { setting: 'pools.dexProgram', programId: id },
        });
      }
      this.dexByOwner.set(id, dex);
    }
    this.decoded = emptyDecoded();
    this.failures = emptyFailures();
  }

  /** The configured program id of each DEX. */
  get programIdByDex(): Readonly<Record<Dex, string>> {
    return this.programIds;
  }

  /** The DEX whose program owns such accounts, or undefined. */
  dexOf(owner: string): Dex | undefined {
    return this.dexByOwner.get(owner);
  }

  /**
   * Decodes one account by its owner program. Throws (and counts) a TpError on failure.
   * `tickSpacing`, when the caller knows the pool of a tick array, sets the ticks' indexes (it
   * takes precedence over `tickSpacingOf`).
   */
  decodeAccount(owner: string, data: Uint8Array, address?: string, tickSpacing?: number): DecodedAccount {
    const dex = this.dexByOwner.get(owner);
    if (dex === undefined) {
      this.count(UNKNOWN_DEX, ErrorCode.UnknownOwner);
      throw new TpError(ErrorCode.UnknownOwner, `no decoder for accounts owned by ${owner}`, {
        context: { owner, address },
      });
    }
    let result: DecodedAccount;
    try {
      result = this.decodeFor(dex, data, address, tickSpacing);
    } catch (err) {
      const error = isTpError(err)
        ? err
        : new TpError(ErrorCode.AccountInvalid, `${dex} account could not be decoded`, {
            cause: err,
            context: { dex, address },
          });
      this.count(dex, error.code);
      throw error;
    }
    this.decoded[dex][result.kind]++;
    return result;
  }

  /** A snapshot of the counters. */
  stats(): DecoderStats {
    const decoded = emptyDecoded();
    const failures = emptyFailures();
    for (const dex of DEX_KINDS) Object.assign(decoded[dex], this.decoded[dex]);
    for (const label of Object.keys(failures) as DexLabel[]) Object.assign(failures[label], this.failures[label]);
    return { decoded, failures };
  }

  private count(label: DexLabel, code: ErrorCode): void {
    const byCode = this.failures[label];
    byCode[code] = (byCode[code] ?? 0) + 1;
  }

  private decodeFor(dex: Dex, data: Uint8Array, address: string | undefined, tickSpacing: number | undefined): DecodedAccount {
    if (dex === Dex.Amm) {
      const pool = this.ammLayout === AmmLayout.Spec02Simplified ? decodeSimplifiedAmmPool(data, address) : decodeAmmInfo(data, address);
      return { kind: 'pool', dex, pool };
    }
    if (data.length < DISCRIMINATOR_BYTES) {
      throw new TpError(ErrorCode.AccountSize, `${dex} account of ${data.length} bytes has no discriminator`, {
        context: { dex, actual: data.length, address },
      });
    }
    switch (dex) {
      case Dex.Whirlpool:
        if (hasDiscriminator(data, WHIRLPOOL_DISCRIMINATOR)) return { kind: 'pool', dex, pool: decodeWhirlpool(data, address) };
        if (isWhirlpoolTickArray(data)) {
          return { kind: 'tickArray', dex, tickArray: this.withSpacing(decodeWhirlpoolTickArray(data, address, tickSpacing), tickSpacing) };
        }
        break;
      case Dex.Clmm:
        if (hasDiscriminator(data, CLMM_POOL_DISCRIMINATOR)) return { kind: 'pool', dex, pool: decodeClmmPool(data, address) };
        if (hasDiscriminator(data, CLMM_TICK_ARRAY_DISCRIMINATOR)) {
          return { kind: 'tickArray', dex, tickArray: this.withSpacing(decodeClmmTickArray(data, address, tickSpacing), tickSpacing) };
        }
        if (hasDiscriminator(data, CLMM_AMM_CONFIG_DISCRIMINATOR)) {
          return { kind: 'ammConfig', dex, ammConfig: decodeClmmAmmConfig(data, address) };
        }
        break;
      case Dex.Dlmm:
        if (hasDiscriminator(data, DLMM_LB_PAIR_DISCRIMINATOR)) return { kind: 'pool', dex, pool: decodeLbPair(data, address) };
        if (hasDiscriminator(data, DLMM_BIN_ARRAY_DISCRIMINATOR)) {
          return { kind: 'binArray', dex, binArray: decodeBinArray(data, address) };
        }
        break;
    }
    throw new TpError(ErrorCode.AccountDiscriminator, `${dex} account type not recognised by its discriminator`, {
      context: { dex, address },
    });
  }

  /** Fills in tick indexes when the pool's tick spacing is known (and was not given). */
  private withSpacing(array: TickArray, given: number | undefined): TickArray {
    if (given !== undefined) return array;
    const spacing = this.tickSpacingOf?.(array.pool);
    if (spacing === undefined) return array;
    const ticks: Tick[] = array.ticks.map((t, slot) => ({ ...t, index: array.startTickIndex + slot * spacing }));
    return { ...array, ticks };
  }
}

function emptyDecoded(): DecoderStats['decoded'] {
  const decoded = {} as DecoderStats['decoded'];
  for (const dex of DEX_KINDS) decoded[dex] = { pool: 0, tickArray: 0, ammConfig: 0, binArray: 0 };
  return decoded;
}

function emptyFailures(): DecoderStats['failures'] {
  const failures = {} as DecoderStats['failures'];
  for (const dex of DEX_KINDS) failures[dex] = {};
  failures[UNKNOWN_DEX] = {};
  return failures;
}

/** A registry over the given program ids (defaults: mainnet). */
export function createDecoderRegistry(options?: DecoderRegistryOptions): DecoderRegistry {
  return new DecoderRegistry(options);
}
