# Native add-on: the entry/transaction parser, the base58 encoder and the uWS peer address behind engine/chain/native-addon.ts.
# Built by `npm install` (scripts/build-native.mjs), output build/Release/tidepool_native.node.
{
  "targets": [
    {
      "target_name": "tidepool_native",
      "sources": ["native/addon.cc", "native/entry_parser.cc", "native/base58.cc", "native/remote_address.cc", "native/malloc_trim.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      # Node-API 8 is in every Node >= 16.0 / 14.17; engines.node is >= 20.18.
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS"],
      "cflags!": ["-fexceptions", "-O2", "-O0"],
      "cflags_cc!": ["-fexceptions", "-fno-rtti", "-std=gnu++17", "-O2", "-O0"],
      "cflags": ["-O3", "-fno-exceptions", "-fvisibility=hidden"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-exceptions", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
        "GCC_OPTIMIZATION_LEVEL": "3",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CFLAGS": ["-fvisibility=hidden"]
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 0, "Optimization": 2, "AdditionalOptions": ["/std:c++17"] }
      }
    }
  ]
}
