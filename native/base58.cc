// The method of engine/chain/base58-encode.ts with 64-bit integers instead of doubles, which
// allows wider pieces: the number's big-endian 32-bit limbs are converted to base 58^4 (four
// characters per digit, written as two pairs from a 58^2 table) by multiply-adds against a table of
// the powers 2^(32·i) in base 58^4, then one carry pass. A product is below 2^32 · 58^4 < 2^55.5
// and a digit sums at most kTableLimbs = 32 of them plus a carry below 2^37, so every sum stays
// below 2^60.5: exact in a uint64_t.
//
// 32 and 64 bytes (keys, hashes, signatures) take a fully unrolled copy for their exact length,
// leading zero bytes included (they add nothing to the sums): the table entries become immediate
// operands and the sums stay in registers, ~3× faster than the loop over the table that serves
// every other length up to 128 significant bytes. Longer inputs divide by 58^5 over 32-bit limbs
// instead (the remainder times 2^32 plus a limb stays below 2^62), exact at any length.
#include "base58.h"

#include <cstring>

#if defined(__clang__)
#define TP_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define TP_UNROLL _Pragma("GCC unroll 64")
#else
#define TP_UNROLL
#endif

namespace tidepool {
namespace {

constexpr char kAlphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
constexpr uint64_t kBase = 11316496;          // 58^4, the table's digits
constexpr uint64_t kLongBase = 656356768;     // 58^5, the long path's groups
constexpr uint32_t kPairBase = 3364;          // 58^2
constexpr size_t kTableLimbs = 32;            // 32-bit limbs: up to 128 significant bytes
constexpr size_t kTableDigits = 44;           // 2^(32·32) has 44 digits in base 58^4

struct PowerTable {
  uint32_t digit[kTableLimbs][kTableDigits];  // digit[i][j]: digit j (least significant first) of 2^(32·i), 0 past the top
  uint32_t count[kTableLimbs + 1];            // digits of 2^(32·i): a number of i limbs needs count[i]
};

constexpr PowerTable MakePowerTable() {
  PowerTable t{};
  uint64_t cur[kTableDigits] = {1};
  size_t n = 1;
  for (size_t i = 0; i <= kTableLimbs; i++) {
    t.count[i] = static_cast<uint32_t>(n);
    if (i == kTableLimbs) break;
    for (size_t j = 0; j < n; j++) t.digit[i][j] = static_cast<uint32_t>(cur[j]);
    uint64_t carry = 0;
    for (size_t j = 0; j < n; j++) {
      const uint64_t v = (cur[j] << 32) + carry;  // < 2^56
      cur[j] = v % kBase;
      carry = v / kBase;
    }
    while (carry != 0) {
      cur[n++] = carry % kBase;
      carry /= kBase;
    }
  }
  return t;
}

constexpr PowerTable kPowers = MakePowerTable();
static_assert(kPowers.count[kTableLimbs] <= kTableDigits, "power table too narrow");

// kPairs[v] = the two characters of v < 58^2.
struct PairTable {
  char chars[kPairBase][2];
};

constexpr PairTable MakePairTable() {
  PairTable t{};
  for (uint32_t v = 0; v < kPairBase; v++) {
    t.chars[v][0] = kAlphabet[v / 58];
    t.chars[v][1] = kAlphabet[v % 58];
  }
  return t;
}

constexpr PairTable kPairs = MakePairTable();

inline uint64_t LoadBigEndian32(const uint8_t* p) noexcept {
  return (static_cast<uint64_t>(p[0]) << 24) | (static_cast<uint64_t>(p[1]) << 16) |
         (static_cast<uint64_t>(p[2]) << 8) | p[3];
}

// Writes the four digits of d < 58^4 to p[0, 4), most significant first.
inline void WriteDigit(uint32_t d, char* p) noexcept {
  const uint32_t hi = d / kPairBase;
  std::memcpy(p, kPairs.chars[hi], 2);
  std::memcpy(p + 2, kPairs.chars[d - hi * kPairBase], 2);
}

// Carries acc[0, digits) into base-58^4 digits and writes them without the top zeros; returns the
// characters written (0 for a zero number).
inline size_t WriteDigits(uint64_t* acc, size_t digits, char* out) noexcept {
  uint64_t carry = 0;
  for (size_t j = 0; j < digits; j++) {
    const uint64_t v = acc[j] + carry;
    carry = v / kBase;
    acc[j] = v - carry * kBase;
  }
  while (digits > 0 && acc[digits - 1] == 0) digits--;
  if (digits == 0) return 0;
  char top[4];
  WriteDigit(static_cast<uint32_t>(acc[digits - 1]), top);
  size_t skip = 0;
  while (top[skip] == '1') skip++;  // the top digit is not zero
  std::memcpy(out, top + skip, 4 - skip);
  size_t w = 4 - skip;
  for (size_t j = digits - 1; j-- > 0;) {
    WriteDigit(static_cast<uint32_t>(acc[j]), out + w);
    w += 4;
  }
  return w;
}

// Exactly 4·kLimbs bytes, leading zeros included: the base-58 digits of their value.
template <size_t kLimbs>
size_t EncodeFixed(const uint8_t* bytes, char* out) noexcept {
  static_assert(kLimbs >= 1 && kLimbs <= kTableLimbs, "no table for this length");
  constexpr size_t kDigits = kPowers.count[kLimbs];
  uint64_t limb[kLimbs];
  for (size_t i = 0; i < kLimbs; i++) limb[i] = LoadBigEndian32(bytes + 4 * (kLimbs - 1 - i));
  uint64_t acc[kDigits];
  TP_UNROLL
  for (size_t j = 0; j < kDigits; j++) {
    uint64_t sum = 0;
    TP_UNROLL
    for (size_t i = 0; i < kLimbs; i++) sum += limb[i] * kPowers.digit[i][j];
    acc[j] = sum;
  }
  return WriteDigits(acc, kDigits, out);
}

// bytes[0, n), 0 < n <= 4·kTableLimbs: limb i (least significant first) is the four bytes ending at
// n - 4i, the top limb the 1 to 4 bytes left over.
size_t EncodeTable(const uint8_t* bytes, size_t n, char* out) noexcept {
  const size_t limbs = (n + 3) / 4;
  const size_t head = n - 4 * (limbs - 1);
  uint64_t acc[kTableDigits] = {0};
  for (size_t i = 0; i < limbs; i++) {
    uint64_t limb = 0;
    if (i + 1 < limbs) {
      limb = LoadBigEndian32(bytes + n - 4 * i - 4);
    } else {
      for (size_t k = 0; k < head; k++) limb = (limb << 8) | bytes[k];
    }
    const uint32_t* row = kPowers.digit[i];
    const size_t count = kPowers.count[i];
    for (size_t j = 0; j < count; j++) acc[j] += limb * row[j];
  }
  return WriteDigits(acc, kPowers.count[limbs], out);
}

// Writes the five digits of d < 58^5 to p[0, 5), most significant first.
inline void WriteGroup(uint32_t d, char* p) noexcept {
  const uint32_t hi = d / kPairBase;  // < 58^3
  std::memcpy(p + 3, kPairs.chars[d - hi * kPairBase], 2);
  const uint32_t top = hi / kPairBase;  // < 58
  std::memcpy(p + 1, kPairs.chars[hi - top * kPairBase], 2);
  p[0] = kAlphabet[top];
}

// Any n > 0, first byte not zero: repeated division by 58^5 over big-endian 32-bit limbs. Groups
// are written from the end of `out` (capacity `cap`) backwards, then moved to the front.
size_t EncodeLong(const uint8_t* bytes, size_t n, char* out, size_t cap, uint32_t* limbs) noexcept {
  const size_t count = (n + 3) / 4;
  const size_t head = n - 4 * (count - 1);  // 1 to 4 bytes in the top limb
  uint32_t top = 0;
  for (size_t k = 0; k < head; k++) top = (top << 8) | bytes[k];
  limbs[0] = top;
  for (size_t i = 1; i < count; i++) limbs[i] = static_cast<uint32_t>(LoadBigEndian32(bytes + head + 4 * (i - 1)));
  size_t pos = cap;
  size_t lead = 0;
  while (lead < count) {
    uint64_t rem = 0;
    for (size_t i = lead; i < count; i++) {
      const uint64_t cur = (rem << 32) | limbs[i];
      limbs[i] = static_cast<uint32_t>(cur / kLongBase);
      rem = cur % kLongBase;
    }
    while (lead < count && limbs[lead] == 0) lead++;
    pos -= 5;
    WriteGroup(static_cast<uint32_t>(rem), out + pos);
  }
  while (out[pos] == '1') pos++;  // the top group's padding; the number is not zero
  std::memmove(out, out + pos, cap - pos);
  return cap - pos;
}

}  // namespace

size_t EncodeBase58(const uint8_t* bytes, size_t len, char* out, uint32_t* scratch) noexcept {
  size_t zeros = 0;
  while (zeros < len && bytes[zeros] == 0) zeros++;
  std::memset(out, '1', zeros);  // one '1' per leading zero byte
  if (len == 32) return zeros + EncodeFixed<8>(bytes, out + zeros);
  if (len == 64) return zeros + EncodeFixed<16>(bytes, out + zeros);
  const size_t n = len - zeros;
  if (n == 0) return zeros;
  if (n <= 4 * kTableLimbs) return zeros + EncodeTable(bytes + zeros, n, out + zeros);
  const size_t cap = Base58MaxChars(len) - zeros;
  return zeros + EncodeLong(bytes + zeros, n, out + zeros, cap, scratch);
}

}  // namespace tidepool
