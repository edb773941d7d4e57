import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../known-accounts.js';
import { AccountState, mintDecimals, nativeReserve, tokenAccountMint, tokenAccountOwner, tokenAccountState, tokenAmount } from '../spl-token.js';
import type { AccountRecord, Commitment } from '../chain-backend.js';
import { realNumberStringTrimmed } from './account-methods.js';
import { writeF64 } from './json-text.js';
import { DEFAULT_COMMITMENT, writeRpcResponse, type RpcMethodContext } from './rpc-backend.js';
import { bankSlot, readAccountInfoConfig } from './rpc-configs.js';
import { invalidParams, invalidType, readString, trailingArgs, unknownVariant, verifyPubkey } from './rpc-params.js';
import { NO_SLICE, checkBase58Size, writeUiAccountSorted, type AccountEncoding } from './ui-account.js';

/**
 * getTokenAccountsByOwner: `[owner, {mint} | {programId}, {encoding?, dataSlice?, commitment?,
 * minContextSlot?}]` → RpcResponse<{pubkey, account}[]>, as the node answers it:
 * - the filter is `{"mint": pubkey}` or `{"programId": pubkey}`; a mint must exist and belong to a
 *   token program ("Invalid param: could not find mint"), a program id must be SPL Token or
 *   Token-2022 ("Invalid param: unrecognized Token program id");
 * - default encoding `binary` (base58, refused over 128 bytes like getAccountInfo);
 * - `jsonParsed` gives the spl-token parsed account: `{parsed: {info: {isNative, mint, owner,
 *   state, tokenAmount: {amount, decimals, uiAmount, uiAmountString}}, type: "account"},
 *   program: "spl-token", space}`, with `rentExemptReserve` for wrapped SOL; keys sorted.
 */

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]);
const FILTER_VARIANTS = ['mint', 'programId'] as const;

type TokenAccountsFilter = { mint: string } | { programId: string };

function readFilter(v: unknown): TokenAccountsFilter {
  if (typeof v === 'string') throw unknownVariant(v, FILTER_VARIANTS);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidType(v, 'enum RpcTokenAccountsFilter');
  const keys = Object.keys(v);
  if (keys.length !== 1) throw invalidType(v, 'map with a single key');
  const key = keys[0]!;
  const value = (v as Record<string, unknown>)[key];
  if (key === 'mint') return { mint: readString(value) };
  if (key === 'programId') return { programId: readString(value) };
  throw unknownVariant(key, FILTER_VARIANTS);
}

export function getTokenAccountsByOwner(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 2, 1);
  const owner = readString(args[0]);
  const filter = readFilter(args[1]);
  const config = readAccountInfoConfig(args[2]);
  verifyPubkey(owner);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  let programId: string;
  let mint: string | undefined;
  if ('mint' in filter) {
    mint = verifyPubkey(filter.mint);
    const mintAccount = ctx.backend.getAccount(mint, commitment);
    if (mintAccount === null) throw invalidParams('Invalid param: could not find mint');
    if (!TOKEN_PROGRAMS.has(mintAccount.owner)) throw invalidParams('Invalid param: not a Token mint');
    programId = mintAccount.owner;
  } else {
    programId = verifyPubkey(filter.programId);
    if (!TOKEN_PROGRAMS.has(programId)) throw invalidParams('Invalid param: unrecognized Token program id');
  }
  const encoding: AccountEncoding = config.encoding ?? 'binary';
  const slice = config.slice;
  const found = ctx.backend.tokenAccountsByOwner?.(owner, commitment) ?? [];
  let value = '[';
  let first = true;
  for (const { address, account } of found) {
    if (account.owner !== programId) continue;
    if (mint !== undefined && tokenAccountMint(account.data) !== mint) continue;
    let text: string;
    if (encoding === 'jsonParsed') {
      text = writeParsedTokenAccount(ctx, account, commitment);
    } else {
      checkBase58Size(account.data.length, encoding, slice);
      text = writeUiAccountSorted(account, encoding, slice);
    }
    value += (first ? '' : ',') + '{"account":' + text + ',"pubkey":"' + address + '"}';
    first = false;
  }
  return writeRpcResponse(ctx, slot, value + ']');
}

function uiTokenAmount(amount: bigint, decimals: number): string {
  const ui = realNumberStringTrimmed(amount, decimals);
  return '{"amount":"' + amount.toString() + '","decimals":' + decimals + ',"uiAmount":' + writeF64(Number(ui)) + ',"uiAmountString":"' + ui + '"}';
}

/** The spl-token parser's `account` form; base64 when the mint cannot be read (as the node falls back). */
function writeParsedTokenAccount(ctx: RpcMethodContext, account: AccountRecord, commitment: Commitment): string {
  const data = account.data;
  const mintAccount = ctx.backend.getAccount(tokenAccountMint(data), commitment);
  const decimals = mintAccount === null ? undefined : mintDecimals(mintAccount.data);
  if (decimals === undefined) return writeUiAccountSorted(account, 'base64', NO_SLICE);
  const reserve = nativeReserve(data);
  const state = tokenAccountState(data) === AccountState.Frozen ? 'frozen' : 'initialized';
  const info =
    '{"isNative":' +
    (reserve !== null ? 'true' : 'false') +
    ',"mint":"' +
    tokenAccountMint(data) +
    '","owner":"' +
    tokenAccountOwner(data) +
    '"' +
    (reserve !== null ? ',"rentExemptReserve":' + uiTokenAmount(reserve, decimals) : '') +
    ',"state":"' +
    state +
    '","tokenAmount":' +
    uiTokenAmount(tokenAmount(data), decimals) +
    '}';
  // Token-2022 accounts are parsed as `spl-token-2022`; their extensions are not listed here.
  const program = account.owner === TOKEN_2022_PROGRAM_ID ? 'spl-token-2022' : 'spl-token';
  const parsed = '{"parsed":{"info":' + info + ',"type":"account"},"program":"' + program + '","space":' + data.length + '}';
  return (
    '{"data":' +
    parsed +
    ',"executable":' +
    (account.executable ? 'true' : 'false') +
    ',"lamports":' +
    account.lamports.toString() +
    ',"owner":"' +
    account.owner +
    '","rentEpoch":' +
    account.rentEpoch.toString() +
    ',"space":' +
    data.length +
    '}'
  );
}
