import { base58 } from '../chain/index.js';
import type { AccountRecord } from './chain-backend.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './known-accounts.js';
import { isTokenAccount, tokenAccountOwnerIs } from './spl-token.js';

/**
 * The SPL Token and Token-2022 accounts among `addresses` whose token-account owner (bytes 32..64) is `owner`,
 * read through `read` (so at whatever commitment the caller reads). Sorted by address.
 */
export function findTokenAccountsByOwner(
  addresses: Iterable<string>,
  read: (address: string) => AccountRecord | null,
  owner: string,
): { address: string; account: AccountRecord }[] {
  const ownerBytes = base58.decodePubkey(owner);
  const out: { address: string; account: AccountRecord }[] = [];
  for (const address of addresses) {
    const account = read(address);
    if (account === null || (account.owner !== TOKEN_PROGRAM_ID && account.owner !== TOKEN_2022_PROGRAM_ID) || !isTokenAccount(account.data)) continue;
    if (tokenAccountOwnerIs(account.data, ownerBytes)) out.push({ address, account });
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}
