// The IPv4 address of a uWebSockets.js HttpResponse's peer without the ArrayBuffer that
// `res.getRemoteAddress()` allocates per call (see remote_address.cc).
#ifndef TIDEPOOL_REMOTE_ADDRESS_H_
#define TIDEPOOL_REMOTE_ADDRESS_H_

#include <node_api.h>

namespace tidepool {

// bindRemoteAddress(uwsBinaryPath) -> boolean
napi_value BindRemoteAddress(napi_env env, napi_callback_info info);
// remoteIPv4(res) -> number
napi_value RemoteIPv4(napi_env env, napi_callback_info info);

}  // namespace tidepool

#endif  // TIDEPOOL_REMOTE_ADDRESS_H_
