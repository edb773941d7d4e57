import { base58 } from '../../chain/index.js';
import { DEFAULT_COMMITMENT, writeRpcResponse, type RpcMethodContext } from './rpc-backend.js';
import { bankSlot, readAccountInfoConfig } from './rpc-configs.js';
import { invalidParams, readBool, readString, readStruct, readUsize, trailingArgs, verifyPubkey } from './rpc-params.js';
import { checkBase58Size, writeUiAccountSorted, type AccountEncoding } from './ui-account.js';

/**
 * getProgramAccounts as the node answers it: `[programId, {encoding?, dataSlice?, filters?,
 * withContext?, commitment?, minContextSlot?}]` → `[{pubkey, account}]`, or `{context, value: […]}`
 * with `withContext: true`. Default encoding binary (base58), as the node's.
 *
 * Filters (all must match, at most 4, the node's `MAX_GET_PROGRAM_ACCOUNT_FILTERS`):
 * `{"dataSize": n}` and `{"memcmp": {"offset": n, "bytes": text, "encoding"?: "base58" | "base64"}}`
 * (base58 by default; at most 128 decoded bytes, base58 text at most 175 characters, the node's
 * `MAX_DATA_SIZE` / `MAX_DATA_BASE58_SIZE`). A memcmp past the end of the data does not match.
 */

export const MAX_PROGRAM_ACCOUNT_FILTERS = 4;
const MAX_MEMCMP_BYTES = 128;
const MAX_MEMCMP_BASE58 = 175;

type Filter = { dataSize: number } | { offset: number; bytes: Uint8Array };

function readFilters(v: unknown): Filter[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidParams('Invalid param: filters must be an array');
  if (v.length > MAX_PROGRAM_ACCOUNT_FILTERS) throw invalidParams(`Too many filters provided; max ${MAX_PROGRAM_ACCOUNT_FILTERS}`);
  return v.map((f) => {
    const object = readStruct(f, 'RpcFilterType') as Record<string, unknown>;
    if ('dataSize' in object) return { dataSize: readUsize(object['dataSize']) };
    if ('memcmp' in object) {
      const m = readStruct(object['memcmp'], 'Memcmp') as Record<string, unknown>;
      const offset = readUsize(m['offset']);
      const text = readString(m['bytes']);
      const encoding = m['encoding'] === undefined ? 'base58' : readString(m['encoding']);
      let bytes: Uint8Array;
      if (encoding === 'base58') {
        if (text.length > MAX_MEMCMP_BASE58) throw invalidParams('Encoded binary (base 58) data should be less than 129 bytes');
        try {
          bytes = base58.decode(text);
        } catch {
          throw invalidParams('Invalid param: invalid base58 in memcmp bytes');
        }
      } else if (encoding === 'base64') {
        bytes = new Uint8Array(Buffer.from(text, 'base64'));
      } else throw invalidParams(`Invalid param: unknown memcmp encoding ${encoding}`);
      if (bytes.length > MAX_MEMCMP_BYTES) throw invalidParams('Encoded binary (base 58) data should be less than 129 bytes');
      return { offset, bytes };
    }
    throw invalidParams('Invalid param: a filter is {"dataSize": n} or {"memcmp": {...}}');
  });
}

function matches(data: Uint8Array, filters: readonly Filter[]): boolean {
  for (const f of filters) {
    if ('dataSize' in f) {
      if (data.length !== f.dataSize) return false;
      continue;
    }
    if (f.offset + f.bytes.length > data.length) return false;
    for (let i = 0; i < f.bytes.length; i++) if (data[f.offset + i] !== f.bytes[i]) return false;
  }
  return true;
}

export function getProgramAccounts(ctx: RpcMethodContext, params: unknown): string {
  const args = trailingArgs(params, 1, 1);
  const programId = verifyPubkey(readString(args[0]));
  const config = readAccountInfoConfig(args[1]);
  const raw = (args[1] ?? {}) as Record<string, unknown>;
  const filters = readFilters(raw['filters']);
  const withContext = raw['withContext'] === undefined || raw['withContext'] === null ? false : readBool(raw['withContext']);
  const commitment = config.commitment ?? DEFAULT_COMMITMENT;
  const slot = bankSlot(ctx.backend, commitment, config.minContextSlot);
  const encoding: AccountEncoding = config.encoding ?? 'binary';
  if (encoding === 'jsonParsed') throw invalidParams('Invalid param: jsonParsed is not served for program accounts here');
  let value = '[';
  let first = true;
  for (const { address, account } of ctx.backend.programAccounts?.(programId, commitment) ?? []) {
    if (!matches(account.data, filters)) continue;
    checkBase58Size(account.data.length, encoding, config.slice);
    value += (first ? '' : ',') + '{"account":' + writeUiAccountSorted(account, encoding, config.slice) + ',"pubkey":"' + address + '"}';
    first = false;
  }
  value += ']';
  return withContext ? writeRpcResponse(ctx, slot, value) : value;
}
