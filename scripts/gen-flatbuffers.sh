#!/usr/bin/env bash
# Regenerates the TypeScript of the FlatBuffers schemas in schemas/ with flatc (2.0.8, Debian
# `flatbuffers-compiler`; scripts/services.sh installs it). The output is committed; run this
# after editing a schema: `npm run gen:fbs`.
#
# --ts-flat-files writes one self-contained file per schema (no relative imports, so it compiles
# under NodeNext module resolution unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v flatc >/dev/null 2>&1 || { echo "gen-flatbuffers: flatc not found (apt-get install flatbuffers-compiler)" >&2; exit 1; }
version="$(flatc --version)"
case "$version" in
  *" 2.0.8") ;;
  *) echo "gen-flatbuffers: warning: expected flatc 2.0.8, found '$version'" >&2 ;;
esac

out=engine/aggregator/generated
flatc --ts --ts-flat-files -o "$out" schemas/swap-route-event.fbs
echo "gen-flatbuffers: wrote $out/swap-route-event_generated.ts"
