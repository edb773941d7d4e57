/**
 * The one field of an SPL Token (or Token-2022) token account the engine reads: its amount, the
 * reserve a CL or DLMM pool's vault holds. Pack layout, no discriminator (docs/wire-formats.md §4.5):
 * 0 mint, 32 owner, 64 amount u64, 108 state u8 (0 uninitialized). Token-2022 accounts are the
 * same 165 bytes followed by extensions. Leaf module.
 */

export const TOKEN_ACCOUNT_SIZE = 165;
export const TOKEN_ACCOUNT_AMOUNT_OFFSET = 64;
const TOKEN_ACCOUNT_STATE_OFFSET = 108;

/** The amount of an initialized token account; undefined for any other bytes. */
export function tokenAccountAmount(data: Uint8Array): bigint | undefined {
  if (data.length < TOKEN_ACCOUNT_SIZE || data[TOKEN_ACCOUNT_STATE_OFFSET] === 0) return undefined;
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(TOKEN_ACCOUNT_AMOUNT_OFFSET, true);
}
