/**
 * Record layouts of the two byte rings between the main thread and the RPC worker (leaf module: no
 * imports). Each is the payload of one ByteRing record (engine/threads/byte-ring.ts); multi-byte
 * fields are little-endian and need no alignment (read through a DataView).
 *
 *   main thread                                            RPC worker
 *   AccountFetcher ── request ring: one record per call ──▶ RpcClient.getMultipleAccounts
 *   (batching,     ◀── answer ring: one or more parts  ─── (HTTP, JSON.parse, base64)
 *    coalescing)       per call, or one error record
 *
 * Request record (ring record slot and receivedAt unused):
 *   +0 u32 call id · +4 u16 key count · +6 u16 0 · then per key: u16 byte length, UTF-8 bytes
 *   (base58 addresses are ASCII; any string round-trips, so a bad key gets the node's own error).
 *
 * Answer record (ring record slot = the reply's context slot, receivedAt = the worker's wall clock
 * in ms when the reply was parsed):
 *   +0 u32 call id · +4 u8 ANSWER_ACCOUNTS | ANSWER_ERROR · +5 u8 flags (ANSWER_LAST)
 *   +6 u16 accounts in the call · +8 u16 index of the first account in this part
 *   +10 u16 accounts in this part · +12 body
 * A call's accounts go in one record when they fit in half the ring (ByteRing's record limit),
 * else in parts, in order, the last flagged ANSWER_LAST. An error record is always the last.
 *
 * Account entry (ANSWER_ACCOUNTS body, one after the other):
 *   +0 u8 flags (ACCOUNT_PRESENT, ACCOUNT_EXECUTABLE) · +1 u8 owner length · +2 u16 0
 *   +4 u64 lamports · +12 u32 data length · +16 owner (base58 ASCII) · then the data bytes
 *   A missing account is the 16-byte header with flags 0 and both lengths 0.
 *
 * Error body (ANSWER_ERROR, counts 0): the RpcFailure the worker's client raised.
 *   +12 u8 kind (ERROR_KIND_*) · +13 u8 flags (ERROR_HAS_RPC_CODE, ERROR_HAS_HTTP_STATUS) · +14 u16 0
 *   +16 i32 JSON-RPC error code · +20 u32 HTTP status
 *   +24 u16 endpoint length · +26 u16 method length · +28 u32 message length
 *   +32 endpoint, method, message (UTF-8)
 */

export const REQ_CALL_ID = 0;
export const REQ_COUNT = 4;
export const REQ_HEADER_BYTES = 8;
/** Per key: its byte length as a u16, then the bytes. */
export const REQ_KEY_LENGTH_BYTES = 2;
export const REQ_MAX_KEY_BYTES = 0xffff;

export const ANS_CALL_ID = 0;
export const ANS_TYPE = 4;
export const ANS_FLAGS = 5;
export const ANS_TOTAL = 6;
export const ANS_FIRST = 8;
export const ANS_COUNT = 10;
export const ANS_HEADER_BYTES = 12;

export const ANSWER_ACCOUNTS = 0;
export const ANSWER_ERROR = 1;
/** The call's last record: its accounts are complete (or it is an error). */
export const ANSWER_LAST = 1;

export const ACC_FLAGS = 0;
export const ACC_OWNER_LENGTH = 1;
export const ACC_LAMPORTS = 4;
export const ACC_DATA_LENGTH = 12;
export const ACC_HEADER_BYTES = 16;
export const ACCOUNT_PRESENT = 1;
export const ACCOUNT_EXECUTABLE = 2;
/** Owners longer than this (a base58 key is at most 44) make the reply malformed. */
export const ACC_MAX_OWNER_BYTES = 0xff;

export const ERR_KIND = ANS_HEADER_BYTES;
export const ERR_FLAGS = ANS_HEADER_BYTES + 1;
export const ERR_RPC_CODE = ANS_HEADER_BYTES + 4;
export const ERR_HTTP_STATUS = ANS_HEADER_BYTES + 8;
export const ERR_ENDPOINT_LENGTH = ANS_HEADER_BYTES + 12;
export const ERR_METHOD_LENGTH = ANS_HEADER_BYTES + 14;
export const ERR_MESSAGE_LENGTH = ANS_HEADER_BYTES + 16;
export const ERR_HEADER_BYTES = ANS_HEADER_BYTES + 20;
export const ERROR_HAS_RPC_CODE = 1;
export const ERROR_HAS_HTTP_STATUS = 2;

/** RpcFailureKind on the wire; ERROR_KIND_OTHER is an error that was not an RpcFailure. */
export const ERROR_KIND_RPC = 0;
export const ERROR_KIND_TIMEOUT = 1;
export const ERROR_KIND_HTTP = 2;
export const ERROR_KIND_NETWORK = 3;
export const ERROR_KIND_MALFORMED = 4;
export const ERROR_KIND_OTHER = 255;
