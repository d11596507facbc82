#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang with address + undefined sanitizers, in
# build/fuzz; only the targets and the libraries they need) and runs each one for a fixed number
# of inputs, starting from its seed corpus in tests/fuzz/<name>/. Fails on any crash, sanitizer
# report, leak, input slower than REGATTA_FUZZ_TIMEOUT seconds or use of more than 2 GiB.
#   REGATTA_FUZZ_RUNS=N       inputs per target (default 15000: about 3 minutes for all on 2 cores)
#   REGATTA_FUZZ_TARGETS="a b" which targets (default: all)
#   REGATTA_FUZZ_SEED=N       libFuzzer's seed (default 1, so CI runs the same inputs each time)
# A failing input is saved as build/fuzz/artifacts/<name>-crash-*; replay it with
#   build/fuzz/tests/fuzz/fuzz_<name> build/fuzz/artifacts/<name>-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(${REGATTA_FUZZ_TARGETS:-yaml_json pipeline job_file device_config rest_json})
runs="${REGATTA_FUZZ_RUNS:-15000}"
if [ ! -f build/fuzz/build.ninja ]; then
  cmake --preset fuzz
fi
cmake --build build/fuzz -j "${REGATTA_BUILD_JOBS:-$(nproc)}" --target fuzzers
mkdir -p build/fuzz/artifacts
failed=()
for t in "${targets[@]}"; do
  # New inputs go to a scratch directory; the seeds in the repository are only read.
  scratch="build/fuzz/corpus/$t"
  rm -rf "$scratch" && mkdir -p "$scratch"
  echo "fuzz: $t ($runs inputs)"
  start=$(date +%s)
  if ! "build/fuzz/tests/fuzz/fuzz_$t" -runs="$runs" -seed="${REGATTA_FUZZ_SEED:-1}" \
      -max_len=8192 -timeout="${REGATTA_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
      -artifact_prefix="build/fuzz/artifacts/$t-" -print_final_stats=1 \
      "$scratch" "tests/fuzz/$t" > "build/fuzz/$t.log" 2>&1; then
    failed+=("$t")
    tail -n 60 "build/fuzz/$t.log"
  fi
  echo "fuzz: $t done in $(( $(date +%s) - start ))s: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "build/fuzz/$t.log" || true)"
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (logs in build/fuzz/<name>.log)" >&2
fi
echo "fuzz: $(( ${#targets[@]} - ${#failed[@]} )) passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
