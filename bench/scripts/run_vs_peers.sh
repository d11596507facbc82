#!/usr/bin/env bash
# End-to-end throughput, Regatta vs Slurm, in one run on this machine: N trivial jobs
# (/bin/true), from the start of the submit until every job has succeeded.
#
#   bench/scripts/run_vs_peers.sh [BUILD_DIR]     (default build/default)
#
# Env: N=1000 jobs; REPS=3 Regatta repetitions (median reported); CPU=10m per job (the local
#      executor offers the machine's cpus, so 10m lets ~200 /bin/true run at once, like Slurm's
#      overcommitted SLOTS); SKIP_SLURM=1 skips the peer; SLOTS for Slurm (default 64).
# 1. Regatta: `regatta up` (embedded SQLite log and views, local process executor), one queue,
#    `regatta submit` of an N-job file, then `regatta watch` until all N have succeeded.
# 2. The machine's floor for N process spawns: `seq N | xargs -P2 -n1 /bin/true` (what any
#    executor that starts one process per job is bounded by), median of REPS.
#    Also `make -j2` of N phony /bin/true recipes, and N serial posix_spawn+waitpid (spawn_floor.c).
# 3. Slurm 22.05: ../shared/peers/slurm_bench.sh (array and loop submission).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/default}
regatta=$build/cmd/regatta/regatta
N=${N:-1000}
REPS=${REPS:-3}
CPU=${CPU:-10m}
source "$here/bench/scripts/lib.sh"
bench_machine_line
bench_workdir regatta-run-bench

times=()
for rep in $(seq "$REPS"); do
  start_regatta_up
  "$regatta" --server "$server" queue create bench > /dev/null
  printf 'queue: bench\njobSet: run%s\njobs:\n  - command: [/bin/true]\n    resources: {requests: {cpu: %s, memory: 8Mi}}\n    count: %s\n' \
    "$rep" "$CPU" "$N" > "$work/jobs.yaml"
  start=$(date +%s.%N)
  "$regatta" --server "$server" submit "$work/jobs.yaml" -o json > /dev/null
  "$regatta" --server "$server" watch bench "run$rep" --timeout 600s > "$work/watch.out"
  end=$(date +%s.%N)
  tail -1 "$work/watch.out"
  t=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')
  times+=("$t")
  awk -v t="$t" -v n="$N" -v r="$rep" 'BEGIN { printf "  rep %d: %d jobs in %.3f s (%.0f jobs/s)\n", r, n, t, n/t }'
  stop_regatta_up
done
median=$(median_of "${times[@]}")
awk -v t="$median" -v n="$N" -v r="$REPS" \
  'BEGIN { printf "RESULT regatta-up %d jobs submit->all succeeded in %.3f s (%.0f jobs/s, median of %d)\n", n, t, n/t, r }'

xtimes=()
for rep in $(seq "$REPS"); do
  start=$(date +%s.%N)
  seq "$N" | xargs -P2 -n1 /bin/true
  end=$(date +%s.%N)
  xtimes+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')")
done
xmedian=$(median_of "${xtimes[@]}")
awk -v t="$xmedian" -v n="$N" -v r="$REPS" \
  'BEGIN { printf "RESULT spawn-floor xargs -P2 /bin/true x%d in %.3f s (%.0f/s, median of %d)\n", n, t, n/t, r }'

if command -v make > /dev/null; then
  # make -j2 of N phony recipes: a second standard runner of N processes on two slots.
  { printf 'all:'; for i in $(seq "$N"); do printf ' t%s' "$i"; done
    printf '\n.PHONY: all'; for i in $(seq "$N"); do printf ' t%s' "$i"; done
    printf '\n'; for i in $(seq "$N"); do printf 't%s ' "$i"; done
    printf ':\n\t@/bin/true\n'; } > "$work/Makefile"
  mtimes=()
  for rep in $(seq "$REPS"); do
    start=$(date +%s.%N)
    make -s -j2 -f "$work/Makefile" all
    end=$(date +%s.%N)
    mtimes+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')")
  done
  mmedian=$(median_of "${mtimes[@]}")
  awk -v t="$mmedian" -v n="$N" -v r="$REPS" \
    'BEGIN { printf "RESULT spawn-floor make -j2 /bin/true x%d in %.3f s (%.0f/s, median of %d)\n", n, t, n/t, r }'
fi

if command -v cc > /dev/null; then
  cc -O2 -o "$work/spawn_floor" "$here/bench/scripts/spawn_floor.c" && "$work/spawn_floor" "$N"
fi

if [[ "${SKIP_SLURM:-0}" != 1 ]]; then
  echo "== Slurm 22.05 (../shared/peers/slurm_bench.sh, SLOTS=${SLOTS:-64})"
  SLOTS=${SLOTS:-64} bash "$here/../shared/peers/slurm_bench.sh" "$N" 2>&1 | grep -E 'RESULT|s ' \
    || echo "slurm peer failed (see its output)"
fi
