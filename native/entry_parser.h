// C++ twin of engine/chain/entry-parser.ts. The contract (record layout, statuses, read order,
// error offsets) is engine/chain/parse-layout.ts; the constants below mirror it and must change
// with it.
#ifndef TIDEPOOL_NATIVE_ENTRY_PARSER_H_
#define TIDEPOOL_NATIVE_ENTRY_PARSER_H_

#include <cstddef>
#include <cstdint>

namespace tidepool {

constexpr uint32_t kEntryNumHashesLo = 0;
constexpr uint32_t kEntryNumHashesHi = 1;
constexpr uint32_t kEntryHashOffset = 2;
constexpr uint32_t kEntryTxCount = 3;
constexpr uint32_t kEntryFirstTx = 4;
constexpr uint32_t kEntryStride = 5;

constexpr uint32_t kTxEntry = 0;
constexpr uint32_t kTxStart = 1;
constexpr uint32_t kTxEnd = 2;
constexpr uint32_t kTxSigCount = 3;
constexpr uint32_t kTxSigOffset = 4;
constexpr uint32_t kTxVersion = 5;
constexpr uint32_t kTxHeader = 6;
constexpr uint32_t kTxKeyCount = 7;
constexpr uint32_t kTxKeysOffset = 8;
constexpr uint32_t kTxBlockhashOffset = 9;
constexpr uint32_t kTxIxCount = 10;
constexpr uint32_t kTxIxOffset = 11;
constexpr uint32_t kTxLookupCount = 12;
constexpr uint32_t kTxLookupOffset = 13;
constexpr uint32_t kTxProgramsStart = 14;
constexpr uint32_t kTxProgramsCount = 15;
constexpr uint32_t kTxStride = 16;

constexpr uint32_t kVersionLegacy = 0xff;

constexpr uint32_t kCountEntries = 0;
constexpr uint32_t kCountTxs = 1;
constexpr uint32_t kCountPrograms = 2;
constexpr uint32_t kCountErrorOffset = 3;
constexpr uint32_t kCountsLength = 4;

constexpr uint32_t kMinEntryBytes = 48;
constexpr uint32_t kPubkeyBytes = 32;
constexpr uint32_t kSignatureBytes = 64;
constexpr uint32_t kHashBytes = 32;
constexpr uint32_t kMaxTxAccounts = 256;

enum class ParseStatus : uint32_t {
  kOk = 0,
  kTruncated = 1,
  kCountTooLarge = 2,
  kCompactU16 = 3,
  kVersion = 4,
  kHeader = 5,
  kAccountIndex = 6,
  kOutputFull = 7,
};

// Caller-owned output. Capacities are in elements of each array (not records); a trailing
// partial record is never written. `counts` must hold kCountsLength words.
struct ParseOutput {
  uint32_t* entries;
  size_t entries_len;
  uint32_t* txs;
  size_t txs_len;
  uint8_t* programs;
  size_t programs_len;
  uint32_t* counts;
};

// Parses one bincode Vec<Entry> payload into `out`. Never reads outside [bytes, bytes + len),
// never writes outside the output arrays, never allocates, never throws. Offsets are stored mod
// 2^32, as a Uint32Array store of a larger number would.
ParseStatus ParseEntries(const uint8_t* bytes, size_t len, const ParseOutput& out) noexcept;

}  // namespace tidepool

#endif  // TIDEPOOL_NATIVE_ENTRY_PARSER_H_
