/**
 * The output layout shared by the TypeScript and the C++ entry parsers (leaf module: no imports).
 *
 * A parse does not build objects. It walks the bytes of one ShredStream `Entry.entries` payload
 * (bincode `Vec<Entry>`) and writes fixed-stride records of byte offsets into three caller-owned
 * typed arrays. Offsets are relative to the start of the parsed payload, so the records are only
 * meaningful next to the same bytes. Strings (base58 keys, signatures) are made lazily, and only
 * for the transactions someone asks about (see transaction-view.ts).
 *
 *   entries  Uint32Array  ENTRY_STRIDE words per entry
 *   txs      Uint32Array  TX_STRIDE words per transaction, in payload order
 *   programs Uint8Array   per transaction, the distinct program-id key indexes in order of first use
 *   counts   Uint32Array  COUNTS_LENGTH words: entries, txs, programs written; offset of the error
 *
 * When an output array is too small the parser stops with ParseStatus.OutputFull; the caller grows
 * the arrays (see entry-batch-index.ts) and parses again. Nothing is ever allocated from a length
 * read off the wire.
 */

export const ENTRY_NUM_HASHES_LO = 0;
export const ENTRY_NUM_HASHES_HI = 1;
export const ENTRY_HASH_OFFSET = 2;
export const ENTRY_TX_COUNT = 3;
export const ENTRY_FIRST_TX = 4;
export const ENTRY_STRIDE = 5;

export const TX_ENTRY = 0; // index of the entry holding the transaction
export const TX_START = 1; // offset of the transaction's first byte (the signature count)
export const TX_END = 2; // offset one past its last byte
export const TX_SIG_COUNT = 3;
export const TX_SIG_OFFSET = 4; // offset of signature 0 (the transaction id)
export const TX_VERSION = 5; // 0 for v0, VERSION_LEGACY for legacy messages
export const TX_HEADER = 6; // numRequiredSignatures | numReadonlySigned << 8 | numReadonlyUnsigned << 16
export const TX_KEY_COUNT = 7; // static account keys
export const TX_KEYS_OFFSET = 8;
export const TX_BLOCKHASH_OFFSET = 9;
export const TX_IX_COUNT = 10;
export const TX_IX_OFFSET = 11; // offset of the first compiled instruction
export const TX_LOOKUP_COUNT = 12; // address-table lookups (v0 only, else 0)
export const TX_LOOKUP_OFFSET = 13; // offset of the first lookup (0 when there is none)
export const TX_PROGRAMS_START = 14; // index into `programs`
export const TX_PROGRAMS_COUNT = 15;
export const TX_STRIDE = 16;

/** TX_VERSION value of a legacy (unversioned) message. */
export const VERSION_LEGACY = 0xff;

export const COUNT_ENTRIES = 0;
export const COUNT_TXS = 1;
export const COUNT_PROGRAMS = 2;
export const COUNT_ERROR_OFFSET = 3;
export const COUNTS_LENGTH = 4;

/**
 * Result of a parse. Both parsers must return the same status and error offset for the same bytes.
 * Checks, in the order the bytes are read:
 * - Truncated: a read past the end of the payload.
 * - CountTooLarge: an entry count or transaction count (bincode u64) that cannot fit in the bytes
 *   that remain (entries need >= 48 bytes each, transactions >= 1), or whose high word is non-zero.
 * - CompactU16: a compact-u16 that is non-minimal, longer than 3 bytes or above 0xffff.
 * - Version: a versioned message whose version is not 0.
 * - Header (Solana's message sanitize rules): signature count != numRequiredSignatures;
 *   numReadonlySigned >= numRequiredSignatures (the fee payer must be a writable signer, so at
 *   least one signature); numRequiredSignatures + numReadonlyUnsigned > static key count.
 * - AccountIndex: a program-id index >= static key count, an instruction account index >= static
 *   keys + looked-up keys, or more than 256 accounts in total.
 * - OutputFull: not a malformed input; the caller must grow the output arrays and retry.
 * Bytes after the last entry are allowed (bincode deserialize tolerates trailing bytes).
 *
 * Read order, which fixes which error wins and where COUNT_ERROR_OFFSET points (the offset of the
 * first byte of the item that failed; for Truncated, of the read that ran past the end):
 *   entry count; per entry: num_hashes, hash, tx count; per tx: signature count, signatures,
 *   first message byte (version or numRequiredSignatures), the rest of the header, static key count
 *   -> Header checks, offset = the message's first byte; keys; blockhash; instruction count; per
 *   instruction: program-id index -> AccountIndex if >= static keys (offset = that byte), account
 *   indexes, data; v0: lookup count, per lookup: table key, writable indexes, readonly indexes;
 *   then -> AccountIndex if static + looked-up keys > 256 (offset = the transaction's first byte);
 *   then a second pass over the instructions -> AccountIndex for the first account index >= static
 *   + looked-up keys (offset = that byte).
 * An error stops the whole batch: the batch's records are then incomplete and must not be used.
 */
export const ParseStatus = {
  Ok: 0,
  Truncated: 1,
  CountTooLarge: 2,
  CompactU16: 3,
  Version: 4,
  Header: 5,
  AccountIndex: 6,
  OutputFull: 7,
} as const;
export type ParseStatus = (typeof ParseStatus)[keyof typeof ParseStatus];

export const PARSE_STATUS_NAMES: Readonly<Record<ParseStatus, string>> = {
  0: 'ok',
  1: 'truncated',
  2: 'count_too_large',
  3: 'bad_compact_u16',
  4: 'bad_version',
  5: 'bad_header',
  6: 'bad_account_index',
  7: 'output_full',
};

/** Smallest possible serialized entry: num_hashes u64, hash 32 bytes, tx count u64. */
export const MIN_ENTRY_BYTES = 48;
export const PUBKEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;
export const HASH_BYTES = 32;
/** Accounts a v0 transaction may reference in total (static + looked up). */
export const MAX_TX_ACCOUNTS = 256;

/**
 * The signature both parsers implement. Writes records for `bytes` into the arrays, sets `counts`,
 * returns the status. Never throws on malformed input, never allocates per input byte.
 */
export type ParseEntriesFn = (
  bytes: Uint8Array,
  entries: Uint32Array,
  txs: Uint32Array,
  programs: Uint8Array,
  counts: Uint32Array,
) => ParseStatus;
