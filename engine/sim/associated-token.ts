import { base58 } from '../chain/index.js';
import { findProgramAddress } from '../chain/index.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID } from './known-accounts.js';

/** The associated token account of `owner` for `mint` of `tokenProgram` (default SPL Token). */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM_ID): string {
  return findProgramAddress(
    [base58.decodePubkey(owner), base58.decodePubkey(tokenProgram), base58.decodePubkey(mint)],
    ASSOCIATED_TOKEN_PROGRAM_ID,
  ).address;
}
