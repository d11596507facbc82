#!/usr/bin/env bash
# One command: install what is missing, build everything, and run every test, then the fuzz
# targets for a fixed number of inputs each (scripts/fuzz.sh; REGATTA_SKIP_FUZZ=1 skips them).
# REGATTA_TEST_ARGS adds ctest arguments, e.g. REGATTA_TEST_ARGS="-L unit" ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
(
  cd "build/${REGATTA_PRESET:-default}"
  # shellcheck disable=SC2086
  ctest --output-on-failure -j "${REGATTA_TEST_JOBS:-2}" ${REGATTA_TEST_ARGS:-}
)
if [ "${REGATTA_SKIP_FUZZ:-0}" != 1 ]; then
  ./scripts/fuzz.sh
fi
