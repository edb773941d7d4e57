// trimMalloc(): glibc's malloc_trim(0), which returns every whole free page of the C heap to the
// kernel (madvise on free chunks inside the heap, not only the top). glibc keeps freed memory for
// reuse; after a start-up that compiled and decoded a lot (a filled pool cache), ~9 MB of the quote
// service's 19 MB C heap was such free memory, resident for nothing. Returns whether any memory was
// released; false where the C library is not glibc (nothing to call).
#include "malloc_trim.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tidepool {

napi_value TrimMalloc(napi_env env, napi_callback_info /*info*/) {
#if defined(__GLIBC__)
  const bool released = malloc_trim(0) != 0;
#else
  const bool released = false;
#endif
  napi_value result;
  return napi_get_boolean(env, released, &result) == napi_ok ? result : nullptr;
}

}  // namespace tidepool
