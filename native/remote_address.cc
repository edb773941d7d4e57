// The peer's IPv4 address of a uWebSockets.js HttpResponse, as a number, with no allocation.
//
// uWebSockets.js answers `res.getRemoteAddress()` with a new ArrayBuffer on every call. Each one
// has an off-heap backing store that the next scavenge must sweep, and the quote service's rate
// limiter asks for the address on every request: at 10,000 requests/s that sweep was the largest
// part of the scavenge pause once nothing else survived (engine/common/client-address-key.ts).
//
// What uWS does underneath: a uWS.js HttpResponse object holds its native HttpResponse pointer in
// internal field 0 (null once the response is finished), and an HttpResponse is a uSockets socket;
// `us_socket_remote_address` (exported by the uWS.js binary) reads the peer with getpeername. This
// file calls that same function on the same pointer and returns the four bytes as a uint32.
//
//   bindRemoteAddress(path) -> boolean
//       Finds us_socket_remote_address in the uWS.js binary already loaded from `path`
//       (dlopen with RTLD_NOLOAD: nothing is loaded that was not). False when it is not there.
//   remoteIPv4(res) -> number
//       The peer's IPv4 address as an unsigned 32-bit number (first byte most significant);
//       -1 when the peer is not IPv4 (IPv6, or IPv4 mapped into IPv6) or the address cannot be read;
//       -2 when `res` is not a native uWS.js response (no internal field, finished, or not bound).
//
// Reading an internal field needs the V8 API, which Node-API does not offer: the napi_value is
// turned into the v8::Local it wraps, as Node's own Node-API implementation does. The JavaScript
// caller checks the first answer against getRemoteAddress and stops using this one on a mismatch.
#include "remote_address.h"

#include <dlfcn.h>
#include <v8.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace tidepool {

namespace {

using RemoteAddressFn = void (*)(int ssl, void* socket, char* buf, int* length);

RemoteAddressFn remote_address = nullptr;

inline v8::Local<v8::Value> ToV8(napi_value value) {
  v8::Local<v8::Value> local;
  static_assert(sizeof(local) == sizeof(value), "napi_value wraps a v8::Local");
  std::memcpy(static_cast<void*>(&local), &value, sizeof(value));
  return local;
}

napi_value Number(napi_env env, double n) {
  napi_value out;
  napi_create_double(env, n, &out);
  return out;
}

}  // namespace

napi_value BindRemoteAddress(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  napi_get_cb_info(env, info, &argc, &arg, nullptr, nullptr);
  size_t length = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, arg, nullptr, 0, &length) != napi_ok) {
    napi_throw_type_error(env, nullptr, "path must be a string");
    return nullptr;
  }
  std::string path(length, '\0');
  napi_get_value_string_utf8(env, arg, path.data(), length + 1, &length);
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  void* symbol = handle == nullptr ? nullptr : dlsym(handle, "us_socket_remote_address");
  // The handle stays open: the library stays loaded as long as uWS.js itself is.
  remote_address = reinterpret_cast<RemoteAddressFn>(symbol);
  napi_value out;
  napi_get_boolean(env, remote_address != nullptr, &out);
  return out;
}

napi_value RemoteIPv4(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  napi_get_cb_info(env, info, &argc, &arg, nullptr, nullptr);
  if (argc < 1 || remote_address == nullptr) return Number(env, -2);
  v8::Local<v8::Value> value = ToV8(arg);
  if (!value->IsObject()) return Number(env, -2);
  v8::Local<v8::Object> object = value.As<v8::Object>();
  if (object->InternalFieldCount() < 1) return Number(env, -2);
  void* socket = object->GetAlignedPointerFromInternalField(0);
  if (socket == nullptr) return Number(env, -2);
  char buf[16];
  int length = sizeof(buf);
  remote_address(0, socket, buf, &length);
  if (length != 4) return Number(env, -1);
  const auto* b = reinterpret_cast<const uint8_t*>(buf);
  const uint32_t ip = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
  return Number(env, static_cast<double>(ip));
}

}  // namespace tidepool
