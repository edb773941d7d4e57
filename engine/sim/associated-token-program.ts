import { associatedTokenAddress } from '../chain/index.js';
import type { AccountRecord } from './chain-backend.js';
import type { InvokeContext, ProgramHandler } from './invoke-context.js';
import { RENT_EPOCH_EXEMPT, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT, rentExemptMinimum } from './known-accounts.js';
import { TOKEN_ACCOUNT_SIZE, encodeTokenAccount, isTokenAccount, mintDecimals, tokenAccountMint, tokenAccountOwner } from './spl-token.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * The SPL Associated Token Account program: Create (data empty or [0]) and CreateIdempotent ([1]),
 * accounts [funding (signer, w), associated account (w), wallet, mint, System program, token
 * program]. As the program does: the address must be the PDA of (wallet, token program, mint)
 * (InvalidSeeds), the mint must be a mint of that token program; an existing account makes Create
 * fail (the System program's AccountAlreadyInUse, Custom 0) and CreateIdempotent succeed without
 * change if it is the wallet's account for the mint (else the program's InvalidOwner, Custom 0);
 * otherwise the funding account pays the rent-exempt minimum (System transfer; Custom 1 when it
 * cannot) and the account is created owned by the token program, initialized for the wallet
 * (wrapped SOL: native, its rent as the reserve). SPL Token mints only: Token-2022 accounts carry
 * extensions the simulator does not write (IncorrectProgramId).
 */

const CREATE = 0;
const CREATE_IDEMPOTENT = 1;

export const associatedTokenProgram: ProgramHandler = (ctx) => {
  const tag = ctx.data.length === 0 ? CREATE : ctx.data[0];
  if (ctx.data.length > 1 || (tag !== CREATE && tag !== CREATE_IDEMPOTENT)) return IxError.InvalidInstructionData;
  if (ctx.accountCount < 6) return IxError.NotEnoughAccountKeys;
  ctx.log(tag === CREATE ? 'Create' : 'CreateIdempotent');
  const [payer, account, wallet, mint, system, tokenProgram] = [0, 1, 2, 3, 4, 5].map((i) => ctx.keys[i]!);
  if (system !== SYSTEM_PROGRAM_ID) return IxError.IncorrectProgramId;
  if (tokenProgram !== TOKEN_PROGRAM_ID) return IxError.IncorrectProgramId;
  if (account !== associatedTokenAddress(wallet!, mint!, tokenProgram)) {
    ctx.log('Error: Associated address does not match seed derivation');
    return IxError.InvalidSeeds;
  }
  const existing = ctx.account(1);
  if (existing !== null && existing.owner === tokenProgram && isTokenAccount(existing.data)) {
    ctx.consume(4_000);
    if (tag === CREATE) {
      ctx.logRaw(`Program ${SYSTEM_PROGRAM_ID} invoke [2]`);
      ctx.log(`Create Account: account Address { address: ${account}, base: None } already in use`);
      ctx.logRaw(`Program ${SYSTEM_PROGRAM_ID} failed: custom program error: 0x0`);
      return { Custom: 0 };
    }
    if (tokenAccountOwner(existing.data) !== wallet || tokenAccountMint(existing.data) !== mint) {
      ctx.log('Error: Owner does not match');
      return { Custom: 0 };
    }
    return null;
  }
  ctx.consume(21_000);
  // As the program orders its checks: the account must still be the System program's, then the
  // token program sizes the account (GetAccountDataSize), which checks the mint: not the token
  // program's account → IncorrectProgramId, not an initialized mint → TokenError::InvalidMint (2).
  if (existing !== null && (existing.owner !== SYSTEM_PROGRAM_ID || existing.data.length !== 0)) return IxError.IllegalOwner;
  const mintRecord = ctx.account(3);
  if (mintRecord === null || mintRecord.owner !== tokenProgram) return IxError.IncorrectProgramId;
  if (mintDecimals(mintRecord.data) === undefined) return { Custom: 2 };
  if (!ctx.isSigner(0)) return IxError.MissingRequiredSignature;
  return create(ctx, existing, payer!, wallet!, mint!);
};

function create(ctx: InvokeContext, existing: AccountRecord | null, payer: string, wallet: string, mint: string): InstructionErrorValue | null {
  const rent = rentExemptMinimum(TOKEN_ACCOUNT_SIZE);
  const held = existing?.lamports ?? 0n;
  const needed = held >= rent ? 0n : rent - held;
  const funder = ctx.account(0);
  ctx.logRaw(`Program ${SYSTEM_PROGRAM_ID} invoke [2]`);
  if (funder === null || funder.lamports < needed) {
    ctx.log(`Transfer: insufficient lamports ${funder?.lamports ?? 0n}, need ${needed}`);
    ctx.logRaw(`Program ${SYSTEM_PROGRAM_ID} failed: custom program error: 0x1`);
    return { Custom: 1 };
  }
  if (funder.owner !== SYSTEM_PROGRAM_ID || funder.data.length !== 0) return IxError.InvalidArgument;
  ctx.logRaw(`Program ${SYSTEM_PROGRAM_ID} success`);
  let err = ctx.put(0, { ...funder, lamports: funder.lamports - needed });
  if (err !== null) return err;
  const lamports = held + needed;
  const native = mint === WSOL_MINT;
  const data = encodeTokenAccount({ mint, owner: wallet, amount: native ? lamports - rent : 0n, ...(native ? { nativeReserve: rent } : {}) });
  ctx.logRaw(`Program ${TOKEN_PROGRAM_ID} invoke [2]`);
  ctx.log('Instruction: InitializeAccount3');
  ctx.logRaw(`Program ${TOKEN_PROGRAM_ID} success`);
  err = ctx.put(1, { lamports, owner: TOKEN_PROGRAM_ID, data, executable: false, rentEpoch: RENT_EPOCH_EXEMPT });
  return err;
}
