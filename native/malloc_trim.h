// Gives the C heap's free pages back to the kernel (glibc malloc_trim), see malloc_trim.cc.
#ifndef TIDEPOOL_MALLOC_TRIM_H_
#define TIDEPOOL_MALLOC_TRIM_H_

#include <node_api.h>

namespace tidepool {

// trimMalloc() -> boolean
napi_value TrimMalloc(napi_env env, napi_callback_info info);

}  // namespace tidepool

#endif  // TIDEPOOL_MALLOC_TRIM_H_
