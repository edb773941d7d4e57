import { ErrorCode, TpError } from '../errors.js';
import type { CliIo } from './command.js';
import { decodeBytes, readInput } from './read-input.js';

/** An account as the inspection commands take it: its bytes, and its owner and address when known. */
export interface AccountInput {
  data: Uint8Array;
  owner?: string;
  address?: string;
}

/**
 * Reads an account from a file or stdin. JSON input may be what operators have at hand:
 * - a getAccountInfo response: `{"jsonrpc":"2.0","result":{"context":…,"value":{"data":[b64,"base64"],"owner":…}}}`
 * - its `value` alone: `{"data":[b64,"base64"],"owner":…}`
 * - a `solana account --output json` dump: `{"pubkey":…,"account":{"data":[b64,"base64"],"owner":…}}`
 * Anything else is taken as the account's bytes in `encoding` (raw, base64 or hex).
 */
/** An account as `getAccountInfo` returns it (whole answer or its value) or as a dump holds it. */
interface AccountJson {
  data?: unknown;
  owner?: unknown;
}
type DumpJson = AccountJson & { pubkey?: unknown; result?: { value?: AccountJson | null }; account?: AccountJson };

export async function readAccountInput(path: string, encoding: string, io: CliIo): Promise<AccountInput> {
  const input = await readInput(path, io);
  const text = input.subarray(0, 1).toString() === '{' ? input.toString('utf8') : undefined;
  if (text === undefined) return { data: decodeBytes(input, encoding, path) };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.Usage, `${path} looks like JSON but does not parse: ${(err as Error).message}`);
  }
  const obj = json as DumpJson;
  const value = obj.result?.value ?? obj.account ?? (obj.data !== undefined ? obj : undefined);
  if (obj.result !== undefined && obj.result.value === null) {
    throw new TpError(ErrorCode.Usage, `${path}: the account does not exist (getAccountInfo returned null)`);
  }
  if (value === undefined || !Array.isArray(value.data) || typeof value.data[0] !== 'string') {
    throw new TpError(ErrorCode.Usage, `${path}: expected a getAccountInfo response, its value, or an account dump with data [base64, "base64"]`);
  }
  const [payload, enc] = value.data as [string, string];
  if (enc !== 'base64') throw new TpError(ErrorCode.Usage, `${path}: account data encoding ${JSON.stringify(enc)} is not supported; ask for base64`);
  const out: AccountInput = { data: decodeBytes(Buffer.from(payload), 'base64', path) };
  if (typeof value.owner === 'string') out.owner = value.owner;
  if (typeof obj.pubkey === 'string') out.address = obj.pubkey;
  return out;
}
