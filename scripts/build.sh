#!/usr/bin/env bash
# Configures (once) and builds Regatta out of tree in build/<preset> (default: build/default).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${REGATTA_PRESET:-default}"
if [ ! -f "build/$preset/build.ninja" ]; then
  cmake --preset "$preset"
fi
jobs="${REGATTA_BUILD_JOBS:-$(nproc)}"
cmake --build "build/$preset" -j "$jobs" "$@"
