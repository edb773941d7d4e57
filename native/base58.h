// C++ twin of engine/chain/base58-encode.ts: Base58 (Bitcoin alphabet) text of a byte string, the
// same text bs58 and the TypeScript encoder produce (native-base58.test.ts compares all three).
#ifndef TIDEPOOL_NATIVE_BASE58_H_
#define TIDEPOOL_NATIVE_BASE58_H_

#include <cstddef>
#include <cstdint>

namespace tidepool {

// Characters EncodeBase58 may write for `len` bytes: one '1' per leading zero byte, at most
// len·log(256)/log(58) + 1 < 1.3658·len + 1 digits for the rest, and up to four more while the top
// group of digits (four or five) is still padded. 1.375·len + 5 covers all of it.
constexpr size_t Base58MaxChars(size_t len) { return len + (len * 3 + 7) / 8 + 5; }

// 32-bit words of scratch EncodeBase58 needs for `len` bytes (only inputs too long for the table).
constexpr size_t Base58ScratchWords(size_t len) { return (len + 3) / 4; }

// Writes the text of bytes[0, len) to out[0, n) and returns n. `out` holds Base58MaxChars(len)
// characters, `scratch` Base58ScratchWords(len) words. Never allocates, never throws.
size_t EncodeBase58(const uint8_t* bytes, size_t len, char* out, uint32_t* scratch) noexcept;

}  // namespace tidepool

#endif  // TIDEPOOL_NATIVE_BASE58_H_
