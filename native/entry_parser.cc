// Mirrors engine/chain/entry-parser.ts statement for statement where it matters: the same read
// order, and the same choices where parse-layout.ts is silent (listed at the top of that file:
// Truncated inside a compact-u16 points at its first byte, OutputFull is raised right before the
// write that does not fit, a transaction record is written only after the whole transaction
// checked out, the 256-account limit applies to legacy messages too). native-parser.test.ts
// compares the two on hand-made, random and mutated inputs.
#include "entry_parser.h"

#include <cstring>

namespace tidepool {
namespace {

inline uint32_t LoadU32(const uint8_t* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// Offsets and counts are stored as a Uint32Array store would store them (mod 2^32).
inline uint32_t U32(size_t v) noexcept { return static_cast<uint32_t>(v); }

// One parse. Every read is bounds-checked against `len_` first, in the contract's read order; the
// first failure records (status, offset) and unwinds through `false` returns.
class Parser {
 public:
  Parser(const uint8_t* bytes, size_t len, const ParseOutput& out) noexcept
      : b_(bytes),
        len_(len),
        out_(out),
        entry_cap_(out.entries_len / kEntryStride),
        tx_cap_(out.txs_len / kTxStride) {}

  ParseStatus Run() noexcept {
    const bool ok = ParseVec();
    uint32_t* c = out_.counts;
    c[kCountEntries] = U32(n_entries_);
    c[kCountTxs] = U32(n_txs_);
    c[kCountPrograms] = U32(n_programs_);
    c[kCountErrorOffset] = ok ? 0 : U32(err_offset_);
    return ok ? ParseStatus::kOk : status_;
  }

 private:
  bool Fail(ParseStatus status, size_t offset) noexcept {
    status_ = status;
    err_offset_ = offset;
    return false;
  }

  size_t Remaining() const noexcept { return len_ - pos_; }

  // short_vec: 1-3 bytes of 7 bits, low first. Rejects a zero continuation byte (non-minimal),
  // and a third byte above 3 (which covers both "longer than 3 bytes" and "above 0xffff").
  // Every failure, Truncated included, points at the compact-u16's first byte.
  bool ReadCompactU16(uint32_t* value) noexcept {
    const size_t start = pos_;
    if (start >= len_) return Fail(ParseStatus::kTruncated, start);
    const uint32_t b0 = b_[start];
    if ((b0 & 0x80) == 0) {
      pos_ = start + 1;
      *value = b0;
      return true;
    }
    if (start + 1 >= len_) return Fail(ParseStatus::kTruncated, start);
    const uint32_t b1 = b_[start + 1];
    if ((b1 & 0x80) == 0) {
      if (b1 == 0) return Fail(ParseStatus::kCompactU16, start);
      pos_ = start + 2;
      *value = (b0 & 0x7f) | (b1 << 7);
      return true;
    }
    if (start + 2 >= len_) return Fail(ParseStatus::kTruncated, start);
    const uint32_t b2 = b_[start + 2];
    if (b2 == 0 || b2 > 3) return Fail(ParseStatus::kCompactU16, start);
    pos_ = start + 3;
    *value = (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
    return true;
  }

  // Skips a compact-u16 length followed by that many bytes.
  bool SkipBytes(size_t n) noexcept {
    if (n > Remaining()) return Fail(ParseStatus::kTruncated, pos_);
    pos_ += n;
    return true;
  }

  bool ParseVec() noexcept {
    if (len_ < 8) return Fail(ParseStatus::kTruncated, 0);
    const uint32_t lo = LoadU32(b_);
    const uint32_t hi = LoadU32(b_ + 4);
    pos_ = 8;
    // Each entry needs at least kMinEntryBytes, so a larger count cannot be honest.
    if (hi != 0 || lo > Remaining() / kMinEntryBytes) {
      return Fail(ParseStatus::kCountTooLarge, 0);
    }
    for (uint32_t i = 0; i < lo; i++) {
      if (!ParseEntry()) return false;
    }
    return true;
  }

  bool ParseEntry() noexcept {
    const size_t entry_start = pos_;
    if (Remaining() < 8) return Fail(ParseStatus::kTruncated, pos_);
    const uint32_t num_hashes_lo = LoadU32(b_ + pos_);
    const uint32_t num_hashes_hi = LoadU32(b_ + pos_ + 4);
    pos_ += 8;
    const size_t hash_offset = pos_;
    if (!SkipBytes(kHashBytes)) return false;
    const size_t count_offset = pos_;
    if (Remaining() < 8) return Fail(ParseStatus::kTruncated, pos_);
    const uint32_t tx_lo = LoadU32(b_ + pos_);
    const uint32_t tx_hi = LoadU32(b_ + pos_ + 4);
    pos_ += 8;
    // Each transaction needs at least one byte.
    if (tx_hi != 0 || tx_lo > Remaining()) {
      return Fail(ParseStatus::kCountTooLarge, count_offset);
    }
    if (n_entries_ >= entry_cap_) return Fail(ParseStatus::kOutputFull, entry_start);
    const size_t entry_index = n_entries_++;
    uint32_t* rec = out_.entries + entry_index * kEntryStride;
    rec[kEntryNumHashesLo] = num_hashes_lo;
    rec[kEntryNumHashesHi] = num_hashes_hi;
    rec[kEntryHashOffset] = U32(hash_offset);
    rec[kEntryTxCount] = tx_lo;
    rec[kEntryFirstTx] = U32(n_txs_);
    for (uint32_t i = 0; i < tx_lo; i++) {
      if (!ParseTransaction(entry_index)) return false;
    }
    return true;
  }

  bool ParseTransaction(size_t entry_index) noexcept {
    const size_t tx_start = pos_;

    uint32_t sig_count;
    if (!ReadCompactU16(&sig_count)) return false;
    const size_t sig_offset = pos_;
    if (!SkipBytes(static_cast<size_t>(sig_count) * kSignatureBytes)) return false;

    const size_t message_start = pos_;
    if (pos_ >= len_) return Fail(ParseStatus::kTruncated, pos_);
    const uint32_t first = b_[pos_];
    uint32_t version;
    uint32_t num_required, num_readonly_signed, num_readonly_unsigned;
    if (first & 0x80) {
      if ((first & 0x7f) != 0) return Fail(ParseStatus::kVersion, message_start);
      version = 0;
      pos_ += 1;
      if (Remaining() < 3) return Fail(ParseStatus::kTruncated, pos_);
      num_required = b_[pos_];
      num_readonly_signed = b_[pos_ + 1];
      num_readonly_unsigned = b_[pos_ + 2];
      pos_ += 3;
    } else {
      version = kVersionLegacy;
      num_required = first;
      pos_ += 1;
      if (Remaining() < 2) return Fail(ParseStatus::kTruncated, pos_);
      num_readonly_signed = b_[pos_];
      num_readonly_unsigned = b_[pos_ + 1];
      pos_ += 2;
    }

    uint32_t key_count;
    if (!ReadCompactU16(&key_count)) return false;
    // Message sanitize: one signature per required signer, a writable signing fee payer, and the
    // signed and read-only unsigned ranges inside the static keys.
    if (sig_count != num_required || num_readonly_signed >= num_required ||
        num_required + num_readonly_unsigned > key_count) {
      return Fail(ParseStatus::kHeader, message_start);
    }
    const size_t keys_offset = pos_;
    if (!SkipBytes(static_cast<size_t>(key_count) * kPubkeyBytes)) return false;
    const size_t blockhash_offset = pos_;
    if (!SkipBytes(kHashBytes)) return false;

    uint32_t ix_count;
    if (!ReadCompactU16(&ix_count)) return false;
    const size_t ix_offset = pos_;
    const size_t programs_start = n_programs_;
    uint64_t seen[4] = {0, 0, 0, 0};  // program-id indexes already listed for this transaction
    uint32_t max_account = 0;
    bool any_account = false;
    for (uint32_t i = 0; i < ix_count; i++) {
      if (pos_ >= len_) return Fail(ParseStatus::kTruncated, pos_);
      const uint32_t program = b_[pos_];
      if (program >= key_count) return Fail(ParseStatus::kAccountIndex, pos_);
      const uint64_t bit = uint64_t{1} << (program & 63);
      if ((seen[program >> 6] & bit) == 0) {
        if (n_programs_ >= out_.programs_len) return Fail(ParseStatus::kOutputFull, pos_);
        seen[program >> 6] |= bit;
        out_.programs[n_programs_++] = static_cast<uint8_t>(program);
      }
      pos_ += 1;
      uint32_t n_accounts;
      if (!ReadCompactU16(&n_accounts)) return false;
      if (n_accounts > Remaining()) return Fail(ParseStatus::kTruncated, pos_);
      const uint8_t* accounts = b_ + pos_;
      uint32_t m = 0;
      for (uint32_t k = 0; k < n_accounts; k++) m = accounts[k] > m ? accounts[k] : m;
      if (n_accounts != 0) {
        any_account = true;
        if (m > max_account) max_account = m;
      }
      pos_ += n_accounts;
      uint32_t data_len;
      if (!ReadCompactU16(&data_len)) return false;
      if (!SkipBytes(data_len)) return false;
    }

    uint32_t lookup_count = 0;
    size_t lookup_offset = 0;
    size_t loaded = 0;  // one input byte per looked-up index, so it cannot overflow
    if (version == 0) {
      if (!ReadCompactU16(&lookup_count)) return false;
      if (lookup_count != 0) lookup_offset = pos_;
      for (uint32_t i = 0; i < lookup_count; i++) {
        if (!SkipBytes(kPubkeyBytes)) return false;
        uint32_t n;
        if (!ReadCompactU16(&n)) return false;
        if (!SkipBytes(n)) return false;
        loaded += n;
        if (!ReadCompactU16(&n)) return false;
        if (!SkipBytes(n)) return false;
        loaded += n;
      }
    }

    const size_t total = key_count + loaded;
    if (total > kMaxTxAccounts) return Fail(ParseStatus::kAccountIndex, tx_start);
    // From here total <= 256: the second pass compares bytes against it.
    if (any_account && max_account >= total) {
      return FailFirstBadAccount(ix_offset, ix_count, static_cast<uint32_t>(total));
    }

    // The record is written, and OutputFull raised, only once the whole transaction checked out.
    if (n_txs_ >= tx_cap_) return Fail(ParseStatus::kOutputFull, tx_start);
    uint32_t* rec = out_.txs + n_txs_ * kTxStride;
    n_txs_++;
    rec[kTxEntry] = U32(entry_index);
    rec[kTxStart] = U32(tx_start);
    rec[kTxEnd] = U32(pos_);
    rec[kTxSigCount] = sig_count;
    rec[kTxSigOffset] = U32(sig_offset);
    rec[kTxVersion] = version;
    rec[kTxHeader] = num_required | (num_readonly_signed << 8) | (num_readonly_unsigned << 16);
    rec[kTxKeyCount] = key_count;
    rec[kTxKeysOffset] = U32(keys_offset);
    rec[kTxBlockhashOffset] = U32(blockhash_offset);
    rec[kTxIxCount] = ix_count;
    rec[kTxIxOffset] = U32(ix_offset);
    rec[kTxLookupCount] = lookup_count;
    rec[kTxLookupOffset] = U32(lookup_offset);
    rec[kTxProgramsStart] = U32(programs_start);
    rec[kTxProgramsCount] = U32(n_programs_ - programs_start);
    return true;
  }

  // Second pass over instructions the first pass already validated, taken only when some account
  // index is out of range: reports the first such byte. Still bounds-checked, because `bytes` may
  // live in a SharedArrayBuffer that another thread writes while we read.
  bool FailFirstBadAccount(size_t ix_offset, uint32_t ix_count, uint32_t total) noexcept {
    pos_ = ix_offset;
    for (uint32_t i = 0; i < ix_count; i++) {
      if (!SkipBytes(1)) return false;
      uint32_t n;
      if (!ReadCompactU16(&n)) return false;
      if (n > Remaining()) return Fail(ParseStatus::kTruncated, pos_);
      for (uint32_t k = 0; k < n; k++) {
        if (b_[pos_ + k] >= total) return Fail(ParseStatus::kAccountIndex, pos_ + k);
      }
      pos_ += n;
      if (!ReadCompactU16(&n)) return false;
      if (!SkipBytes(n)) return false;
    }
    // Unreachable unless the bytes changed under us.
    return Fail(ParseStatus::kAccountIndex, ix_offset);
  }

  const uint8_t* const b_;
  const size_t len_;
  const ParseOutput& out_;
  const size_t entry_cap_;
  const size_t tx_cap_;
  size_t pos_ = 0;
  size_t n_entries_ = 0;
  size_t n_txs_ = 0;
  size_t n_programs_ = 0;
  ParseStatus status_ = ParseStatus::kOk;
  size_t err_offset_ = 0;
};

}  // namespace

ParseStatus ParseEntries(const uint8_t* bytes, size_t len, const ParseOutput& out) noexcept {
  return Parser(bytes, len, out).Run();
}

}  // namespace tidepool
