// tidepool_native: the entry parser of native/entry_parser.cc for JavaScript.
//
//   parseEntries(bytes, entries, txs, programs, counts) -> ParseStatus
//       ParseEntriesFn of engine/chain/parse-layout.ts, self-contained: validates all five
//       arguments on every call.
//   bindOutputs(entries, txs, programs, counts) -> undefined
//   parseBound(bytes) -> ParseStatus
//       The same parse split in two for engine/chain/native-parser.ts, which binds the output
//       arrays once and re-binds only when one of them changes (identity or length). Reading a
//       typed array's pointer through Node-API costs about as much as parsing a small transaction,
//       so this takes four of the five reads off the per-call path. Internal: parseBound trusts
//       its caller to re-bind after an output array was detached or resized (both change its
//       length); it cannot see that itself without the very calls it exists to skip.
//
//   encodeBase58(bytes, start?, end?) -> string
//       encodeBase58 of engine/chain/base58-encode.ts for bytes[start, end): same defaults, same
//       RangeError for a range that is not integers with 0 <= start <= end <= bytes.length.
//
//   bindRemoteAddress(uwsBinaryPath) -> boolean
//   remoteIPv4(res) -> number
//       A uWebSockets.js response's peer IPv4 address without an ArrayBuffer: remote_address.cc.
//
//   trimMalloc() -> boolean
//       glibc malloc_trim(0): the C heap's free pages back to the kernel (malloc_trim.cc).
//
// Arguments of the wrong type throw a TypeError; nothing else throws. No objects are created per
// call but encodeBase58's string. Each JavaScript environment (main thread, each worker) has its
// own binding.
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <new>

#include "base58.h"
#include "entry_parser.h"
#include "malloc_trim.h"
#include "remote_address.h"

namespace {

using tidepool::kCountsLength;
using tidepool::ParseOutput;
using tidepool::ParseStatus;

// Per-environment binding of the output arrays. The references keep the arrays alive while
// bound; their backing stores do not move once napi_get_typedarray_info has materialized them
// (V8 moves small on-heap typed arrays off the heap for good on that call). Detaching or shrinking
// one shows up as a length change, which the JavaScript caller checks before every parseBound.
struct Binding {
  napi_ref refs[4] = {nullptr, nullptr, nullptr, nullptr};
  ParseOutput out{nullptr, 0, nullptr, 0, nullptr, 0, nullptr};
  uint32_t* counts = nullptr;  // the caller's counts array (out.counts may point at `scratch`)
  size_t counts_len = 0;
  uint32_t scratch[kCountsLength] = {0, 0, 0, 0};
  bool bound = false;
};

void DeleteBinding(napi_env env, void* data, void* /*hint*/) {
  auto* b = static_cast<Binding*>(data);
  for (napi_ref& r : b->refs) {
    if (r != nullptr) napi_delete_reference(env, r);
  }
  delete b;
}

// Fills `data`/`length` when `value` is a typed array of `type` (Buffer is a Uint8Array).
inline bool GetTypedArray(napi_env env, napi_value value, napi_typedarray_type type, void** data,
                          size_t* length) {
  napi_typedarray_type actual;
  if (napi_get_typedarray_info(env, value, &actual, length, data, nullptr, nullptr) != napi_ok) {
    return false;
  }
  return actual == type;
}

napi_value ThrowTypeError(napi_env env, const char* message) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return nullptr;
}

napi_value StatusValue(napi_env env, ParseStatus status) {
  napi_value result;
  napi_create_uint32(env, static_cast<uint32_t>(status), &result);
  return result;
}

struct Outputs {
  void* entries;
  void* txs;
  void* programs;
  void* counts;
  size_t entries_len, txs_len, programs_len, counts_len;
};

// Validates the four output arrays; on failure a TypeError is pending and false returned.
bool GetOutputs(napi_env env, const napi_value* argv, Outputs* o) {
  if (!GetTypedArray(env, argv[0], napi_uint32_array, &o->entries, &o->entries_len)) {
    ThrowTypeError(env, "entries must be a Uint32Array");
    return false;
  }
  if (!GetTypedArray(env, argv[1], napi_uint32_array, &o->txs, &o->txs_len)) {
    ThrowTypeError(env, "txs must be a Uint32Array");
    return false;
  }
  if (!GetTypedArray(env, argv[2], napi_uint8_array, &o->programs, &o->programs_len)) {
    ThrowTypeError(env, "programs must be a Uint8Array");
    return false;
  }
  if (!GetTypedArray(env, argv[3], napi_uint32_array, &o->counts, &o->counts_len)) {
    ThrowTypeError(env, "counts must be a Uint32Array");
    return false;
  }
  return true;
}

// A counts array shorter than COUNTS_LENGTH gets the words that fit, as a TypeScript store past
// the end of a typed array would (silently dropped).
inline ParseStatus Parse(const uint8_t* bytes, size_t len, const ParseOutput& out,
                         uint32_t* counts, size_t counts_len) {
  // A detached buffer reports length 0 (its data pointer may be null); nothing is read then.
  const ParseStatus status = tidepool::ParseEntries(bytes, len, out);
  if (out.counts != counts) {
    for (size_t i = 0; i < counts_len && i < kCountsLength; i++) counts[i] = out.counts[i];
  }
  return status;
}

napi_value ParseEntries(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 5) {
    return ThrowTypeError(env, "parseEntries(bytes, entries, txs, programs, counts): 5 arguments");
  }
  void* bytes;
  size_t bytes_len;
  if (!GetTypedArray(env, argv[0], napi_uint8_array, &bytes, &bytes_len)) {
    return ThrowTypeError(env, "bytes must be a Uint8Array");
  }
  Outputs o;
  if (!GetOutputs(env, argv + 1, &o)) return nullptr;
  uint32_t scratch[kCountsLength];
  auto* counts = static_cast<uint32_t*>(o.counts);
  const ParseOutput out{static_cast<uint32_t*>(o.entries), o.entries_len,
                        static_cast<uint32_t*>(o.txs),     o.txs_len,
                        static_cast<uint8_t*>(o.programs), o.programs_len,
                        o.counts_len < kCountsLength ? scratch : counts};
  return StatusValue(env, Parse(static_cast<const uint8_t*>(bytes), bytes_len, out, counts,
                                o.counts_len));
}

napi_value BindOutputs(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  void* data;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, &data) != napi_ok || argc < 4) {
    return ThrowTypeError(env, "bindOutputs(entries, txs, programs, counts): 4 arguments");
  }
  Outputs o;
  if (!GetOutputs(env, argv, &o)) return nullptr;  // the previous binding stays
  auto* b = static_cast<Binding*>(data);
  napi_ref refs[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int i = 0; i < 4; i++) {
    if (napi_create_reference(env, argv[i], 1, &refs[i]) != napi_ok) {
      for (napi_ref r : refs) {
        if (r != nullptr) napi_delete_reference(env, r);
      }
      napi_throw_error(env, nullptr, "bindOutputs: could not reference the output arrays");
      return nullptr;
    }
  }
  for (int i = 0; i < 4; i++) {
    if (b->refs[i] != nullptr) napi_delete_reference(env, b->refs[i]);
    b->refs[i] = refs[i];
  }
  b->counts = static_cast<uint32_t*>(o.counts);
  b->counts_len = o.counts_len;
  b->out = ParseOutput{static_cast<uint32_t*>(o.entries), o.entries_len,
                       static_cast<uint32_t*>(o.txs),     o.txs_len,
                       static_cast<uint8_t*>(o.programs), o.programs_len,
                       o.counts_len < kCountsLength ? b->scratch : b->counts};
  b->bound = true;
  return nullptr;
}

napi_value ParseBound(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  void* data;
  napi_get_cb_info(env, info, &argc, &arg, nullptr, &data);
  auto* b = static_cast<Binding*>(data);
  void* bytes;
  size_t bytes_len;
  if (argc < 1 || !GetTypedArray(env, arg, napi_uint8_array, &bytes, &bytes_len)) {
    return ThrowTypeError(env, "bytes must be a Uint8Array");
  }
  if (!b->bound) {
    napi_throw_error(env, nullptr, "parseBound: call bindOutputs first");
    return nullptr;
  }
  return StatusValue(env, Parse(static_cast<const uint8_t*>(bytes), bytes_len, b->out, b->counts,
                                b->counts_len));
}

// Reads an optional index argument: undefined (or absent) keeps `*index`. A number that is not an
// integer in [0, length] is a RangeError; anything else a TypeError. False when one is pending.
bool GetIndex(napi_env env, napi_value value, size_t length, const char* name, size_t* index) {
  double d;
  if (napi_get_value_double(env, value, &d) != napi_ok) {
    napi_valuetype type;
    if (napi_typeof(env, value, &type) == napi_ok && type == napi_undefined) return true;
    ThrowTypeError(env, name);
    return false;
  }
  if (!(d >= 0 && d <= static_cast<double>(length)) || d != std::floor(d)) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "base58 range outside the bytes");
    return false;
  }
  *index = static_cast<size_t>(d);
  return true;
}

// Inputs up to this many bytes are encoded in stack buffers; longer ones in one heap block.
constexpr size_t kStackBase58Bytes = 256;

napi_value EncodeBase58(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data;
  size_t length;
  if (argc < 1 || !GetTypedArray(env, argv[0], napi_uint8_array, &data, &length)) {
    return ThrowTypeError(env, "bytes must be a Uint8Array");
  }
  size_t start = 0;
  size_t end = length;
  if (argc > 1 && !GetIndex(env, argv[1], length, "start must be a number", &start)) return nullptr;
  if (argc > 2 && !GetIndex(env, argv[2], length, "end must be a number", &end)) return nullptr;
  if (start > end) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "base58 range outside the bytes");
    return nullptr;
  }
  const uint8_t* bytes = static_cast<const uint8_t*>(data) + start;
  const size_t len = end - start;
  napi_value result;
  if (len <= kStackBase58Bytes) {
    char text[tidepool::Base58MaxChars(kStackBase58Bytes)];
    uint32_t scratch[tidepool::Base58ScratchWords(kStackBase58Bytes)];
    const size_t n = tidepool::EncodeBase58(bytes, len, text, scratch);
    return napi_create_string_latin1(env, text, n, &result) == napi_ok ? result : nullptr;
  }
  const size_t chars = tidepool::Base58MaxChars(len);
  const size_t words = tidepool::Base58ScratchWords(len);
  std::unique_ptr<uint32_t[]> block(new (std::nothrow) uint32_t[words + (chars + 3) / 4]);
  if (!block) {
    napi_throw_error(env, nullptr, "encodeBase58: out of memory");
    return nullptr;
  }
  char* text = reinterpret_cast<char*>(block.get() + words);
  const size_t n = tidepool::EncodeBase58(bytes, len, text, block.get());
  return napi_create_string_latin1(env, text, n, &result) == napi_ok ? result : nullptr;
}

bool Export(napi_env env, napi_value exports, const char* name, napi_callback cb, void* data) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, data, &fn) == napi_ok &&
         napi_set_named_property(env, exports, name, fn) == napi_ok;
}

// Raw Node-API callbacks: node-addon-api's Napi::Function wrapper would add a CallbackInfo and an
// indirection per call for nothing these use.
Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* binding = new Binding();
  if (napi_set_instance_data(env, binding, DeleteBinding, nullptr) != napi_ok) {
    delete binding;
    return exports;
  }
  Export(env, exports, "parseEntries", ParseEntries, nullptr);
  Export(env, exports, "bindOutputs", BindOutputs, binding);
  Export(env, exports, "parseBound", ParseBound, binding);
  Export(env, exports, "encodeBase58", EncodeBase58, nullptr);
  Export(env, exports, "bindRemoteAddress", tidepool::BindRemoteAddress, nullptr);
  Export(env, exports, "remoteIPv4", tidepool::RemoteIPv4, nullptr);
  Export(env, exports, "trimMalloc", tidepool::TrimMalloc, nullptr);
  exports.Set("abi", Napi::Number::New(env, 5));
  return exports;
}

}  // namespace

NODE_API_MODULE(tidepool_native, Init)
