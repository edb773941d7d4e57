import { associatedTokenAddress } from './associated-token.js';
import type { AccountRecord } from './chain-backend.js';
import type { ProgramHandler } from './invoke-context.js';
import { RENT_EPOCH_EXEMPT, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT, rentExemptMinimum } from './known-accounts.js';
import { TOKEN_ACCOUNT_SIZE, encodeTokenAccount, isTokenAccount, mintDecimals, tokenAccountMint, tokenAccountOwner } from './spl-token.js';
import { IxError } from './tx-errors.js';

/**
 * The Associated Token Account program, as far as wallets need it: `Create` (data empty or [0])
 * and `CreateIdempotent` ([1]), with the real program's accounts and failures:
 *
 *   0 funding account (signer, writable)   3 token mint
 *   1 associated token account (writable)  4 System program
 *   2 wallet address                       5 SPL Token program
 *
 * The account must be the PDA of (wallet, token program, mint) (else InvalidSeeds); the mint must
 * be an initialized mint of the token program (else IllegalOwner / InvalidAccountData). A new
 * account gets the rent-exempt minimum for 165 bytes from the funder (topped up when it already
 * holds some lamports), is assigned to the token program and initialized for (mint, wallet).
 * `Create` of an existing account fails as the system program's CreateAccount does
 * (AccountAlreadyInUse, Custom 0); `CreateIdempotent` succeeds when the existing account is that
 * wallet's token account for that mint, and fails with InvalidOwner (Custom 0) or IllegalOwner
 * otherwise.
 */

const Instruction = { Create: 0, CreateIdempotent: 1 } as const;
/** SystemError::AccountAlreadyInUse and AssociatedTokenAccountError::InvalidOwner are both 0. */
const ACCOUNT_ALREADY_IN_USE = 0;
const INVALID_OWNER = 0;
/** SystemError::ResultWithNegativeLamports. */
const INSUFFICIENT_LAMPORTS = 1;

export const associatedTokenProgram: ProgramHandler = (ctx) => {
  const data = ctx.data;
  if (data.length > 1) return IxError.InvalidInstructionData;
  const tag = data.length === 0 ? Instruction.Create : data[0]!;
  if (tag !== Instruction.Create && tag !== Instruction.CreateIdempotent) return IxError.InvalidInstructionData;
  if (ctx.accountCount < 6) return IxError.NotEnoughAccountKeys;
  ctx.consume(tag === Instruction.CreateIdempotent ? 21_000 : 20_000);
  const [, ata, wallet, mint, system, token] = ctx.keys as [string, string, string, string, string, string];
  if (system !== SYSTEM_PROGRAM_ID || token !== TOKEN_PROGRAM_ID) return IxError.IncorrectProgramId;
  if (associatedTokenAddress(wallet, mint) !== ata) return IxError.InvalidSeeds;

  const existing = ctx.account(1);
  if (existing !== null && existing.owner === TOKEN_PROGRAM_ID) {
    if (tag === Instruction.Create) return { Custom: ACCOUNT_ALREADY_IN_USE };
    if (!isTokenAccount(existing.data)) return IxError.InvalidAccountData;
    if (tokenAccountOwner(existing.data) !== wallet) return { Custom: INVALID_OWNER };
    if (tokenAccountMint(existing.data) !== mint) return IxError.InvalidAccountData;
    return null;
  }
  if (existing !== null && (existing.owner !== SYSTEM_PROGRAM_ID || existing.data.length !== 0)) return IxError.IllegalOwner;

  const mintAccount = ctx.account(3);
  if (mintAccount === null || mintAccount.owner !== TOKEN_PROGRAM_ID) return IxError.IllegalOwner;
  if (mintDecimals(mintAccount.data) === undefined) return IxError.InvalidAccountData;

  if (!ctx.isSigner(0)) return IxError.MissingRequiredSignature;
  const rent = rentExemptMinimum(TOKEN_ACCOUNT_SIZE);
  const held = existing?.lamports ?? 0n;
  const due = rent > held ? rent - held : 0n;
  if (due > 0n) {
    const payer = ctx.account(0);
    if (payer === null || payer.lamports < due) return { Custom: INSUFFICIENT_LAMPORTS };
    if (payer.owner !== SYSTEM_PROGRAM_ID || payer.data.length !== 0) return IxError.InvalidArgument;
    const err = ctx.put(0, { ...payer, lamports: payer.lamports - due });
    if (err !== null) return err;
  }
  const created: AccountRecord = {
    lamports: held + due,
    owner: TOKEN_PROGRAM_ID,
    // A wrapped SOL account holds its rent reserve beside the amount (InitializeAccount3 on the native mint).
    data: encodeTokenAccount(
      mint === WSOL_MINT ? { mint, owner: wallet, amount: held + due - rent, nativeReserve: rent } : { mint, owner: wallet, amount: 0n },
    ),
    executable: false,
    rentEpoch: RENT_EPOCH_EXEMPT,
  };
  return ctx.put(1, created);
};
