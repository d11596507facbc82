#!/usr/bin/env bash
# One command: install what is missing, build, and start `regatta up` (Ctrl-C stops it).
# Extra arguments go to `regatta up`, e.g. ./scripts/up.sh --data-dir /tmp/regatta
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh --target regatta
exec ./build/"${REGATTA_PRESET:-default}"/cmd/regatta/regatta up "$@"
