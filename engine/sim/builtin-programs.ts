import { base58 } from '../chain/index.js';
import { withheldAmountOffset, type DecodedMint } from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { decodeMintOf } from './decoded-accounts.js';
import type { InvokeContext, ProgramHandler } from './invoke-context.js';
import { pubkeyBytes } from './key-cache.js';
import { RENT_EPOCH_EXEMPT, SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, VOTE_PROGRAM_ID } from './known-accounts.js';
import {
  AccountState,
  TokenError,
  TokenInstruction,
  isNativeTokenAccount,
  isTokenAccount,
  mintAuthority,
  mintDecimals,
  mintSupply,
  nativeReserve,
  setTokenAmount,
  tokenAccountMintBytes,
  tokenAccountMintIs,
  tokenAccountOwnerIs,
  tokenAccountState,
  tokenAmount,
  withMintSupply,
  withTokenAmount,
} from './spl-token.js';
import { moveTokens, transferFeeOf } from './token-transfer.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * The programs besides the swap program that the simulated runtime executes, each doing the part
 * of the real program that the simulator's traffic and its users need:
 * - System: Transfer (tag 2, u64 lamports). Anything else fails with InvalidInstructionData.
 * - SPL Token and Token-2022: Transfer (3) and TransferChecked (12), wrapped SOL included; the
 *   accounts must be the program's own. Token-2022 withholds its mint's transfer fee of the
 *   block's epoch on TransferChecked (at the destination's TransferFeeAmount) and refuses a plain
 *   Transfer out of an account that withholds fees (MintRequiredForTransfer), as the program does.
 *   MintTo (7) and MintToChecked (14) credit a token account and the mint's supply, signed by the
 *   mint authority (the simulator's token faucet uses them: faucet.ts).
 *   SyncNative (17) sets a wrapped SOL account's amount to its lamports above the rent reserve;
 *   CloseAccount (9) sends every lamport of an account to the destination and deletes it (a
 *   wrapped SOL account with its balance, which unwraps it; any other only when empty).
 * - Vote: accepts any instruction on an existing vote account signed by someone (no vote state).
 * - Memo: data must be UTF-8; every account passed must sign.
 * - Compute Budget: read before execution (runtime.ts); executing it costs 150 units.
 * Compute units are nominal, close to what the real programs report.
 */

const SYSTEM_TRANSFER = 2;
/** SystemError::ResultWithNegativeLamports. */
const SYSTEM_INSUFFICIENT_LAMPORTS = 1;

export const systemProgram: ProgramHandler = (ctx) => {
  ctx.consume(150);
  const data = ctx.data;
  if (data.length < 4) return IxError.InvalidInstructionData;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint32(0, true) !== SYSTEM_TRANSFER || data.length !== 12) return IxError.InvalidInstructionData;
  if (ctx.accountCount < 2) return IxError.NotEnoughAccountKeys;
  const lamports = view.getBigUint64(4, true);
  if (!ctx.isSigner(0)) return IxError.MissingRequiredSignature;
  const from = ctx.account(0);
  if (from === null || from.lamports < lamports) return { Custom: SYSTEM_INSUFFICIENT_LAMPORTS };
  // Transfer: `from` must not carry data.
  if (from.data.length !== 0 || from.owner !== SYSTEM_PROGRAM_ID) return IxError.InvalidArgument;
  let err = ctx.put(0, { ...from, lamports: from.lamports - lamports });
  if (err !== null) return err;
  const to = ctx.account(1) ?? newSystemAccount();
  err = ctx.put(1, { ...to, lamports: to.lamports + lamports });
  return err;
};

function newSystemAccount(): AccountRecord {
  return { lamports: 0n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
}

export const tokenProgram: ProgramHandler = (ctx) => tokenInstruction(ctx, TOKEN_PROGRAM_ID);
export const token2022Program: ProgramHandler = (ctx) => tokenInstruction(ctx, TOKEN_2022_PROGRAM_ID);

function tokenInstruction(ctx: InvokeContext, programId: string): InstructionErrorValue | null {
  const data = ctx.data;
  if (data.length === 0) return IxError.InvalidInstructionData;
  if (data[0] === TokenInstruction.SyncNative && data.length === 1) return syncNative(ctx, programId);
  if (data[0] === TokenInstruction.CloseAccount && data.length === 1) return closeAccount(ctx, programId);
  if (data[0] === TokenInstruction.MintTo && data.length === 9) return mintTo(ctx, programId, -1);
  if (data[0] === TokenInstruction.MintToChecked && data.length === 10) return mintTo(ctx, programId, data[9]!);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const source = 0;
  let destination = 1;
  let owner = 2;
  let amount: bigint;
  let mintIndex = -1;
  let decimals = -1;
  if (data[0] === TokenInstruction.Transfer && data.length === 9) {
    ctx.consume(4645);
    amount = view.getBigUint64(1, true);
  } else if (data[0] === TokenInstruction.TransferChecked && data.length === 10) {
    ctx.consume(6200);
    amount = view.getBigUint64(1, true);
    decimals = data[9]!;
    mintIndex = 1;
    destination = 2;
    owner = 3;
  } else {
    return IxError.InvalidInstructionData;
  }
  if (ctx.accountCount <= owner) return IxError.NotEnoughAccountKeys;
  return transferTokens(ctx, programId, source, destination, owner, amount, mintIndex, decimals);
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * `process_mint_to`: accounts [mint (w), destination (w), mint authority (signer)], data the u64
 * amount (and the decimals for MintToChecked, `decimals` ≥ 0). The destination must be an
 * initialized, unfrozen, non-native account of the mint; the mint must have an authority
 * (FixedSupply) and it must sign; the account's amount and the supply grow by `amount`.
 */
function mintTo(ctx: InvokeContext, programId: string, decimals: number): InstructionErrorValue | null {
  ctx.consume(decimals < 0 ? 4_500 : 4_600);
  if (ctx.accountCount < 3) return IxError.NotEnoughAccountKeys;
  const amount = new DataView(ctx.data.buffer, ctx.data.byteOffset, ctx.data.byteLength).getBigUint64(1, true);
  const mint = ctx.account(0);
  const destination = ctx.account(1);
  if (mint === null || destination === null) return IxError.InvalidAccountData;
  if (mint.owner !== programId || destination.owner !== programId) return IxError.IncorrectProgramId;
  if (!isTokenAccount(destination.data)) return IxError.InvalidAccountData;
  if (tokenAccountState(destination.data) === AccountState.Frozen) return { Custom: TokenError.AccountFrozen };
  if (isNativeTokenAccount(destination.data)) return { Custom: TokenError.NativeNotSupported };
  if (!tokenAccountMintIs(destination.data, pubkeyBytes(ctx.keys[0]!))) return { Custom: TokenError.MintMismatch };
  const mintDecimalsValue = mintDecimals(mint.data);
  if (mintDecimalsValue === undefined) return IxError.InvalidAccountData;
  if (decimals >= 0 && decimals !== mintDecimalsValue) return { Custom: TokenError.MintDecimalsMismatch };
  const authority = mintAuthority(mint.data);
  if (authority === null) return { Custom: TokenError.FixedSupply };
  if (authority !== ctx.keys[2]) return { Custom: TokenError.OwnerMismatch };
  if (!ctx.isSigner(2)) return IxError.MissingRequiredSignature;
  const credited = tokenAmount(destination.data) + amount;
  const supply = mintSupply(mint.data) + amount;
  if (credited > U64_MAX || supply > U64_MAX) return { Custom: TokenError.Overflow };
  const err = ctx.put(1, withTokenAmount(destination, credited));
  if (err !== null) return err;
  return ctx.put(0, withMintSupply(mint, supply));
}

/** `process_sync_native`: accounts [account (w)]. */
function syncNative(ctx: InvokeContext, programId: string): InstructionErrorValue | null {
  ctx.consume(3000);
  if (ctx.accountCount < 1) return IxError.NotEnoughAccountKeys;
  const account = ctx.account(0);
  if (account === null || account.owner !== programId) return IxError.IncorrectProgramId;
  if (!isTokenAccount(account.data)) return IxError.InvalidAccountData;
  const reserve = nativeReserve(account.data);
  if (reserve === null) return { Custom: TokenError.NonNativeNotSupported };
  const amount = account.lamports - reserve;
  if (amount < tokenAmount(account.data)) return { Custom: TokenError.InvalidState };
  const data = account.data.slice();
  setTokenAmount(data, amount);
  return ctx.put(0, { ...account, data });
}

/**
 * `process_close_account`: accounts [account (w), destination (w), owner (signer)]. A wrapped SOL
 * account closes with its balance (its lamports are the balance and the reserve); any other token
 * account must hold nothing. The destination receives every lamport; the account is deleted.
 */
function closeAccount(ctx: InvokeContext, programId: string): InstructionErrorValue | null {
  ctx.consume(2900);
  if (ctx.accountCount < 3) return IxError.NotEnoughAccountKeys;
  const account = ctx.account(0);
  if (account === null || account.owner !== programId) return IxError.IncorrectProgramId;
  if (!isTokenAccount(account.data)) return IxError.InvalidAccountData;
  if (ctx.keys[0] === ctx.keys[1]) return IxError.InvalidAccountData;
  if (!isNativeTokenAccount(account.data) && tokenAmount(account.data) !== 0n) return { Custom: TokenError.NonNativeHasBalance };
  if (!tokenAccountOwnerIs(account.data, pubkeyBytes(ctx.keys[2]!))) return { Custom: TokenError.OwnerMismatch };
  if (!ctx.isSigner(2)) return IxError.MissingRequiredSignature;
  const destination = ctx.account(1) ?? newSystemAccount();
  const err = ctx.put(1, { ...destination, lamports: destination.lamports + account.lamports });
  if (err !== null) return err;
  return ctx.remove(0);
}

/** The token programs' `process_transfer` for the accounts at the given instruction positions. */
function transferTokens(
  ctx: InvokeContext,
  programId: string,
  sourceIndex: number,
  destinationIndex: number,
  ownerIndex: number,
  amount: bigint,
  mintIndex: number,
  decimals: number,
): InstructionErrorValue | null {
  const source = ctx.account(sourceIndex);
  const destination = ctx.account(destinationIndex);
  if (source === null || destination === null) return IxError.InvalidAccountData;
  if (source.owner !== programId || destination.owner !== programId) return IxError.IncorrectProgramId;
  if (!isTokenAccount(source.data) || !isTokenAccount(destination.data)) return IxError.InvalidAccountData;
  if (tokenAccountState(source.data) === AccountState.Frozen || tokenAccountState(destination.data) === AccountState.Frozen) {
    return { Custom: TokenError.AccountFrozen };
  }
  const sourceAmount = tokenAmount(source.data);
  if (sourceAmount < amount) return { Custom: TokenError.InsufficientFunds };
  const mint = tokenAccountMintBytes(source.data);
  let decoded: DecodedMint | undefined;
  if (mintIndex >= 0) {
    if (ctx.keys[mintIndex] !== base58.encode(mint)) return { Custom: TokenError.MintMismatch };
    const mintAccount = ctx.account(mintIndex);
    if (mintAccount === null) return IxError.InvalidAccountData;
    if (mintAccount.owner !== programId) return IxError.IncorrectProgramId;
    try {
      decoded = decodeMintOf(mintAccount.owner, mintAccount.data);
    } catch {
      return IxError.InvalidAccountData;
    }
    if (decoded.decimals !== decimals) return { Custom: TokenError.MintDecimalsMismatch };
  } else if (programId === TOKEN_2022_PROGRAM_ID && withholdsFees(source.data)) {
    // The fee depends on the mint, which a plain Transfer does not pass.
    return { Custom: TokenError.MintRequiredForTransfer };
  }
  if (!tokenAccountOwnerIs(source.data, pubkeyBytes(ctx.keys[ownerIndex]!))) return { Custom: TokenError.OwnerMismatch };
  if (!ctx.isSigner(ownerIndex)) return IxError.MissingRequiredSignature;
  if (ctx.keys[sourceIndex] !== ctx.keys[destinationIndex] && !tokenAccountMintIs(destination.data, mint)) return { Custom: TokenError.MintMismatch };
  return moveTokens(ctx, sourceIndex, destinationIndex, amount, transferFeeOf(decoded, ctx.epoch, amount));
}

function withholdsFees(data: Uint8Array): boolean {
  try {
    return withheldAmountOffset(data) !== undefined;
  } catch {
    return false;
  }
}

export const voteProgram: ProgramHandler = (ctx) => {
  ctx.consume(2100);
  if (ctx.accountCount < 1 || ctx.data.length < 4) return IxError.InvalidInstructionData;
  const vote = ctx.account(0);
  if (vote === null || vote.owner !== VOTE_PROGRAM_ID) return IxError.InvalidAccountOwner;
  for (let i = 1; i < ctx.accountCount; i++) if (ctx.isSigner(i)) return null;
  return IxError.MissingRequiredSignature;
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const memoProgram: ProgramHandler = (ctx) => {
  ctx.consume(6000 + ctx.data.length * 30);
  for (let i = 0; i < ctx.accountCount; i++) if (!ctx.isSigner(i)) return IxError.MissingRequiredSignature;
  try {
    const text = utf8.decode(ctx.data);
    if (ctx.collectingLogs) ctx.log(`Memo (len ${ctx.data.length}): ${JSON.stringify(text)}`);
  } catch {
    return IxError.InvalidInstructionData;
  }
  return null;
};

export const computeBudgetProgram: ProgramHandler = (ctx) => {
  ctx.consume(150);
  return null;
};
