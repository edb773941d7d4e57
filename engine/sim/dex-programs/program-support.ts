import { TOKEN_2022_PROGRAM_ID, base58 } from '../../chain/index.js';
import { ErrorCode, isTpError } from '../../errors.js';
import type { AccountRecord } from '../chain-backend.js';
import type { InvokeContext } from '../invoke-context.js';
import { pubkeyBytes } from '../key-cache.js';
import { TOKEN_PROGRAM_ID } from '../known-accounts.js';
import {
  AccountState,
  TokenError,
  isTokenAccount,
  mintDecimals,
  tokenAccountMint,
  tokenAccountOwner,
  tokenAccountOwnerIs,
  tokenAccountState,
  tokenAmount,
  withTokenAmount,
} from '../spl-token.js';
import { IxError, type InstructionErrorValue } from '../tx-errors.js';

/**
 * What the real-format DEX programs share: Anchor's account checks and error logs, the token
 * program's Transfer as a program invokes it (CPI), and reading token accounts the way the
 * programs unpack them.
 */

/** Anchor framework error codes (anchor-lang `ErrorCode`) the programs' account checks raise. */
export const AnchorError = {
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  ConstraintMut: 2000,
  ConstraintHasOne: 2001,
  ConstraintRaw: 2003,
  ConstraintSeeds: 2006,
  ConstraintAddress: 2012,
  RequireEqViolated: 2501,
  RequireKeysEqViolated: 2502,
  RequireGtViolated: 2503,
  AccountDiscriminatorMismatch: 3002,
  AccountDidNotDeserialize: 3003,
  AccountNotEnoughKeys: 3005,
  AccountOwnedByWrongProgram: 3007,
  InvalidProgramId: 3008,
  AccountNotSigner: 3010,
  AccountNotInitialized: 3012,
} as const;

const ANCHOR_MESSAGES: Record<number, [string, string]> = {
  101: ['InstructionFallbackNotFound', 'Fallback functions are not supported'],
  102: ['InstructionDidNotDeserialize', 'The program could not deserialize the given instruction'],
  2000: ['ConstraintMut', 'A mut constraint was violated'],
  2001: ['ConstraintHasOne', 'A has one constraint was violated'],
  2003: ['ConstraintRaw', 'A raw constraint was violated'],
  2006: ['ConstraintSeeds', 'A seeds constraint was violated'],
  2012: ['ConstraintAddress', 'An address constraint was violated'],
  2501: ['RequireEqViolated', 'A require_eq expression was violated'],
  2502: ['RequireKeysEqViolated', 'A require_keys_eq expression was violated'],
  2503: ['RequireGtViolated', 'A require_gt expression was violated'],
  3002: ['AccountDiscriminatorMismatch', '8 byte discriminator did not match what was expected'],
  3003: ['AccountDidNotDeserialize', 'Failed to deserialize the account'],
  3005: ['AccountNotEnoughKeys', 'Not enough account keys given to the instruction'],
  3007: ['AccountOwnedByWrongProgram', 'The given account is owned by a different program than expected'],
  3008: ['InvalidProgramId', 'Program ID was not as expected'],
  3010: ['AccountNotSigner', 'The given account did not sign'],
  3012: ['AccountNotInitialized', 'The program expected this account to be already initialized'],
};

/** A program's own error table: code → [name, message]. */
export type ErrorTable = Readonly<Record<number, readonly [string, string]>>;

/**
 * Fails with `{Custom: code}` and logs the line Anchor logs for it: "AnchorError caused by
 * account: <name>. …" for an account check, "AnchorError occurred. …" otherwise.
 */
export function anchorFail(ctx: InvokeContext, code: number, table: ErrorTable = {}, account?: string): InstructionErrorValue {
  const [name, message] = table[code] ?? ANCHOR_MESSAGES[code] ?? ['Unknown', 'unknown error'];
  const where = account === undefined ? 'AnchorError occurred.' : `AnchorError caused by account: ${account}.`;
  ctx.log(`${where} Error Code: ${name}. Error Number: ${code}. Error Message: ${message}.`);
  return { Custom: code };
}

export function isTokenProgram(key: string): boolean {
  return key === TOKEN_PROGRAM_ID || key === TOKEN_2022_PROGRAM_ID;
}

/** A token account as a program unpacks it. */
export interface TokenAccountView {
  record: AccountRecord;
  mint: string;
  owner: string;
  amount: bigint;
}

/** Instruction account `i` as a token account: null unless owned by a token program and initialized. */
export function readTokenAccount(ctx: InvokeContext, i: number): TokenAccountView | null {
  const record = ctx.account(i);
  if (record === null || !isTokenProgram(record.owner) || !isTokenAccount(record.data)) return null;
  return { record, mint: tokenAccountMint(record.data), owner: tokenAccountOwner(record.data), amount: tokenAmount(record.data) };
}

/** Whether instruction account `i` is a mint (owned by a token program, initialized). */
export function isMintAccount(ctx: InvokeContext, i: number): boolean {
  const record = ctx.account(i);
  return record !== null && isTokenProgram(record.owner) && mintDecimals(record.data) !== undefined;
}

/** Anchor's account-type checks for a token account: owner program, then the bytes. */
export function checkTokenAccount(ctx: InvokeContext, i: number, name: string, table?: ErrorTable): InstructionErrorValue | null {
  const record = ctx.account(i);
  if (record === null) return anchorFail(ctx, AnchorError.AccountNotInitialized, table, name);
  if (!isTokenProgram(record.owner)) return anchorFail(ctx, AnchorError.AccountOwnedByWrongProgram, table, name);
  if (!isTokenAccount(record.data)) return anchorFail(ctx, AnchorError.AccountDidNotDeserialize, table, name);
  return null;
}

export function checkMint(ctx: InvokeContext, i: number, name: string, table?: ErrorTable): InstructionErrorValue | null {
  const record = ctx.account(i);
  if (record === null) return anchorFail(ctx, AnchorError.AccountNotInitialized, table, name);
  if (!isTokenProgram(record.owner)) return anchorFail(ctx, AnchorError.AccountOwnedByWrongProgram, table, name);
  if (mintDecimals(record.data) === undefined) return anchorFail(ctx, AnchorError.AccountDidNotDeserialize, table, name);
  return null;
}

/** An account the program loads as one of its own (owner, then discriminator, then bytes). */
export function checkProgramAccount(
  ctx: InvokeContext,
  i: number,
  name: string,
  decode: (data: Uint8Array) => unknown,
  table?: ErrorTable,
): InstructionErrorValue | null {
  const record = ctx.account(i);
  if (record === null || (record.owner === '11111111111111111111111111111111' && record.data.length === 0)) {
    return anchorFail(ctx, AnchorError.AccountNotInitialized, table, name);
  }
  if (record.owner !== ctx.programId) return anchorFail(ctx, AnchorError.AccountOwnedByWrongProgram, table, name);
  try {
    decode(record.data);
  } catch (err) {
    const code = isTpError(err, ErrorCode.AccountDiscriminator) ? AnchorError.AccountDiscriminatorMismatch : AnchorError.AccountDidNotDeserialize;
    return anchorFail(ctx, code, table, name);
  }
  return null;
}

/** Whether the 8-byte Anchor discriminator of instruction account `i` is `discriminator`. */
export function hasAccountDiscriminator(record: AccountRecord, discriminator: Uint8Array): boolean {
  if (record.data.length < 8) return false;
  for (let k = 0; k < 8; k++) if (record.data[k] !== discriminator[k]) return false;
  return true;
}

const TRANSFER_UNITS = 4645;

/**
 * The token program's Transfer as a DEX program invokes it: `amount` from `source` to
 * `destination`, signed by `authority` (the user, or the pool's PDA the program signs for). Fails
 * as the token program does: InsufficientFunds (1), MintMismatch (3), OwnerMismatch (4),
 * AccountFrozen (17). Logged as an inner instruction.
 */
export function transferTokens(ctx: InvokeContext, source: number, destination: number, authority: string, amount: bigint): InstructionErrorValue | null {
  const program = ctx.account(source)?.owner ?? TOKEN_PROGRAM_ID;
  ctx.logRaw(`Program ${program} invoke [2]`);
  ctx.logRaw('Program log: Instruction: Transfer');
  ctx.consume(TRANSFER_UNITS);
  const err = moveTokens(ctx, source, destination, authority, amount);
  ctx.logRaw(err === null ? `Program ${program} success` : `Program ${program} failed: ${typeof err === 'object' ? `custom program error: 0x${err.Custom.toString(16)}` : err}`);
  return err;
}

function moveTokens(ctx: InvokeContext, sourceIndex: number, destinationIndex: number, authority: string, amount: bigint): InstructionErrorValue | null {
  const source = ctx.account(sourceIndex);
  const destination = ctx.account(destinationIndex);
  if (source === null || destination === null || !isTokenAccount(source.data) || !isTokenAccount(destination.data)) return IxError.InvalidAccountData;
  if (tokenAccountState(source.data) === AccountState.Frozen || tokenAccountState(destination.data) === AccountState.Frozen) {
    return { Custom: TokenError.AccountFrozen };
  }
  const have = tokenAmount(source.data);
  if (have < amount) return { Custom: TokenError.InsufficientFunds };
  if (tokenAccountMint(source.data) !== tokenAccountMint(destination.data)) return { Custom: TokenError.MintMismatch };
  if (!tokenAccountOwnerIs(source.data, pubkeyBytes(authority))) return { Custom: TokenError.OwnerMismatch };
  if (ctx.keys[sourceIndex] === ctx.keys[destinationIndex]) return null;
  let err = ctx.put(sourceIndex, withTokenAmount(source, have - amount));
  if (err !== null) return err;
  const latest = ctx.account(destinationIndex)!;
  err = ctx.put(destinationIndex, withTokenAmount(latest, tokenAmount(latest.data) + amount));
  return err;
}

/** base58 of 32 bytes of `data` at `offset`. */
export function keyAt(data: Uint8Array, offset: number): string {
  return base58.encodeAt(data, offset, 32);
}
