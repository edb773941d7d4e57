import { base58 } from '../chain/index.js';
import { findProgramAddress } from '../chain/index.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID } from './known-accounts.js';

/** The associated token account of `owner` for `mint` (SPL Token program). */
export function associatedTokenAddress(owner: string, mint: string): string {
  return findProgramAddress(
    [base58.decodePubkey(owner), base58.decodePubkey(TOKEN_PROGRAM_ID), base58.decodePubkey(mint)],
    ASSOCIATED_TOKEN_PROGRAM_ID,
  ).address;
}
