import { rpcError, type ChainBackend, type Commitment } from '../chain-backend.js';
import {
  flattenedCommitment,
  missingField,
  readCommitmentLevel,
  readStruct,
  readU64,
  readUsize,
  readVariant,
} from './rpc-params.js';
import { ACCOUNT_ENCODINGS, type AccountEncoding, type DataSlice } from './ui-account.js';

/**
 * The node's per-method config objects (`RpcContextConfig`, `RpcAccountInfoConfig`,
 * `CommitmentConfig`), read with serde's rules: unknown keys ignored, keys checked in the order the
 * client wrote them, a bad `commitment` silently ignored where the node flattens it.
 *
 * Readers fill one module-level object each and return it: method handlers are synchronous and
 * read the config before anything else can run, so no request allocates one.
 */

/** -32016, with the slot the node had reached, as `get_bank_with_config` reports it. */
export const MIN_CONTEXT_SLOT_CODE = -32016;

/** The slot at `commitment`, refusing it when below `minContextSlot` (`get_bank_with_config`). */
export function bankSlot(backend: ChainBackend, commitment: Commitment, minContextSlot: bigint | undefined): bigint {
  const slot = backend.slot(commitment);
  if (minContextSlot !== undefined && slot < minContextSlot) {
    throw rpcError(MIN_CONTEXT_SLOT_CODE, 'Minimum context slot has not been reached', { contextSlot: slot });
  }
  return slot;
}

export interface ContextConfig {
  commitment: Commitment | undefined;
  minContextSlot: bigint | undefined;
}

const contextConfig: ContextConfig = { commitment: undefined, minContextSlot: undefined };

/** `Option<RpcContextConfig>`: `{commitment?, minContextSlot?}`. */
export function readContextConfig(v: unknown): ContextConfig {
  const out = contextConfig;
  out.commitment = undefined;
  out.minContextSlot = undefined;
  const object = readStruct(v, 'RpcContextConfig');
  if (object === null) return out;
  for (const key in object) {
    const x = object[key];
    if (key === 'commitment') out.commitment = flattenedCommitment(x);
    else if (key === 'minContextSlot' && x !== null) out.minContextSlot = readU64(x);
  }
  return out;
}

export interface AccountInfoConfig extends ContextConfig {
  encoding: AccountEncoding | undefined;
  slice: DataSlice;
}

const accountInfoConfig: AccountInfoConfig = {
  commitment: undefined,
  minContextSlot: undefined,
  encoding: undefined,
  slice: { offset: 0, length: -1 },
};

/** `Option<RpcAccountInfoConfig>`: `{encoding?, dataSlice?: {offset, length}, commitment?, minContextSlot?}`. */
export function readAccountInfoConfig(v: unknown): AccountInfoConfig {
  const out = accountInfoConfig;
  out.commitment = undefined;
  out.minContextSlot = undefined;
  out.encoding = undefined;
  out.slice.offset = 0;
  out.slice.length = -1;
  const object = readStruct(v, 'RpcAccountInfoConfig');
  if (object === null) return out;
  for (const key in object) {
    const x = object[key];
    switch (key) {
      case 'encoding':
        if (x !== null) out.encoding = readVariant(x, ACCOUNT_ENCODINGS);
        break;
      case 'dataSlice':
        if (x !== null) readDataSlice(x, out.slice);
        break;
      case 'commitment':
        out.commitment = flattenedCommitment(x);
        break;
      case 'minContextSlot':
        if (x !== null) out.minContextSlot = readU64(x);
        break;
      default:
        break;
    }
  }
  return out;
}

/** `UiDataSliceConfig {offset: usize, length: usize}`, both required. */
function readDataSlice(v: unknown, out: DataSlice): void {
  const object = readStruct(v, 'UiDataSliceConfig') as Record<string, unknown>;
  let offset = -1;
  let length = -1;
  for (const key in object) {
    if (key === 'offset') offset = readUsize(object[key]);
    else if (key === 'length') length = readUsize(object[key]);
  }
  if (offset < 0) throw missingField('offset');
  if (length < 0) throw missingField('length');
  out.offset = offset;
  out.length = length;
}

/** `Option<CommitmentConfig>` given as a parameter of its own: `{commitment}` is then required. */
export function readCommitmentConfig(v: unknown): Commitment | undefined {
  const object = readStruct(v, 'CommitmentConfig');
  if (object === null) return undefined;
  let commitment: Commitment | undefined;
  for (const key in object) {
    if (key === 'commitment') commitment = readCommitmentLevel(object[key]);
  }
  if (commitment === undefined) throw missingField('commitment');
  return commitment;
}
